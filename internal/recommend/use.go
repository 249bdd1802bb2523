package recommend // import "github.com/otelcol-ttft/otelcol-ttft/internal/recommend"

import "github.com/otelcol-ttft/otelcol-ttft/internal/record"

// Use is how a request record enters the recommendation windows
// (docs/architecture.md §2).
type Use uint8

const (
	// UseNone: the record stays out of the windows. Failed requests have
	// their own histogram series; a successful one without TTFT evidence
	// may not even have streamed, so its duration and gaps would mix into
	// windows of streamed requests. A request of more than one attempt
	// has a TTFT and duration that span the earlier attempts (and their
	// timeouts), not the time one attempt takes, which the limits bound.
	UseNone Use = iota
	// UseSample: a successful streamed request, a sample of every signal it
	// has.
	UseSample
	// UseCensored: a request cut by the first-token timeout, a
	// right-censored observation: its TTFT is at least the cut time.
	UseCensored
	// UseIdleCut: a stream cut by an idle timeout, a right-censored
	// observation of its longest pause: at least its ttft.max_chunk_gap,
	// which holds the pause it was cut in where the stream instrumentation
	// measured it. Its TTFT and duration enter no window.
	UseIdleCut
)

// WindowUse applies the rule: complete requests with a TTFT are samples;
// timeout_first_token requests are censored at their cut time when
// censoring is on; a request retried or failed over stays out (its
// histograms are split by ttft.failed_over). measuredAt is the clock of the
// window the record belongs to. A request cut before any chunk has no clock
// stop and counts as first_content data, censored at its duration. One cut
// after chunks the stream instrumentation saw carry nothing (a role-only
// first chunk; record.SourceChunkEvent) is first_content data too: its first
// content had not come when it was cut, at its duration (else at least at
// that first chunk). From a source that cannot tell content from a role-only
// chunk, a cut after a first chunk is censored at that chunk on the
// first_chunk clock: what such a source measured came, what it did not
// measure is unknown. A stream cut by an idle timeout after its first token
// is censored in the longest-pause window at its ttft.max_chunk_gap (the
// idle timeout's own tail would otherwise be truncated, as the first-token
// one). hasCut is false when no cut time is known.
func WindowUse(rec *record.Record, censoring bool) (use Use, measuredAt string, cut float64, hasCut bool) {
	if rec.Attempts > 1 || rec.DidFailOver() {
		return UseNone, "", 0, false
	}
	ttft, hasTTFT := rec.TTFT()
	switch rec.Outcome {
	case record.OutcomeComplete:
		if !hasTTFT {
			return UseNone, "", 0, false
		}
		use = UseSample
	case record.OutcomeTimeoutFirstToken:
		if !censoring {
			return UseNone, "", 0, false
		}
		use = UseCensored
		if hasTTFT && rec.MeasuredAt == record.MeasuredAtFirstChunk && rec.Source == record.SourceChunkEvent {
			cut = ttft
			if rec.HasDuration && rec.Duration > cut {
				cut = rec.Duration
			}
			return use, record.MeasuredAtFirstContent, cut, true
		}
		switch {
		case hasTTFT:
			cut, hasCut = ttft, true
		case rec.HasDuration:
			cut, hasCut = rec.Duration, true
		}
	case record.OutcomeTimeoutIdle:
		if !censoring || !hasTTFT || !rec.HasMaxChunkGap {
			return UseNone, "", 0, false
		}
		use, cut, hasCut = UseIdleCut, rec.MaxChunkGap, true
	default:
		return UseNone, "", 0, false
	}
	measuredAt = rec.MeasuredAt
	if measuredAt == "" {
		measuredAt = record.MeasuredAtFirstContent
	}
	return use, measuredAt, cut, hasCut
}
