// Package derive turns GenAI spans and log records into request records
// (docs/architecture.md §4, §5). It is pure: pdata in, record.Record out. The genai_ttft
// processor stamps what it derives; the connector derives for itself when
// the ttft.* attributes are absent; the gateway receiver derives its log
// records.
package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Reason says why a span or log record carries no TTFT.
type Reason uint8

const (
	// ReasonNotGenAI: not an LLM call (no record at all).
	ReasonNotGenAI Reason = iota
	// ReasonNotStreamed: a non-streamed call (record written, no TTFT).
	ReasonNotStreamed
	// ReasonNoEvidence: a GenAI call whose telemetry holds no TTFT evidence.
	ReasonNoEvidence
	// ReasonInvalidTiming: the span's timestamps or every TTFT value it
	// offered were unusable (NaN, negative, beyond the span, absurd).
	ReasonInvalidTiming
	// ReasonInvalidRecord: no longer counted in Skipped (kept so the
	// numbering stays): a read-back record that fails record.Validate is
	// counted in Stats.Invalid and derived afresh.
	ReasonInvalidRecord
	// ReasonSpanLog: a log record emitted inside a span (e.g. a GenAI event);
	// its span carries the call, so deriving it too would count it twice.
	ReasonSpanLog
	// ReasonUnstamped: with StampedOnly, an LLM call that carries no
	// record stamped upstream (no record). Only one in unstampedSample of
	// the spans and log records without a record is looked at.
	ReasonUnstamped
	// ReasonScopeSkipped: a span or log record of a scope that
	// derive::skip_scopes names, not read at all (no record).
	ReasonScopeSkipped

	// NumReasons is the number of reasons (for arrays indexed by Reason).
	NumReasons
)

var reasonNames = [NumReasons]string{
	"not_genai", "not_streamed", "no_evidence", "invalid_timing", "invalid_record", "span_log", "unstamped",
	"scope_skipped",
}

// String returns the reason as it appears in telemetry.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Stats counts what one call of Traces or Logs did.
type Stats struct {
	// Examined counts spans or log records looked at.
	Examined int64
	// Records counts records visited (derived or read back).
	Records int64
	// Reread counts records read from spans already stamped upstream.
	Reread int64
	// WithTTFT counts derived records that carry a TTFT.
	WithTTFT int64
	// Nested counts GenAI spans folded into an enclosing span's record,
	// including spans already marked ttft.nested_in upstream.
	Nested int64
	// Skipped counts spans/log records without a TTFT, by reason. Only
	// ReasonNotGenAI, ReasonSpanLog, ReasonUnstamped and ReasonScopeSkipped
	// mean no record was produced; the others still get a record (outcome,
	// band, duration). ReasonInvalidRecord is never counted.
	Skipped [NumReasons]int64
	// ChunkEvents counts per-chunk span events read.
	ChunkEvents int64
	// EventsIgnored counts events not read: beyond max_events, or stamped
	// before the span started.
	EventsIgnored int64
	// ValuesRejected counts evidence values refused: wrong type, NaN/Inf,
	// negative, beyond the span's duration or above max_ttft_seconds.
	ValuesRejected int64
	// Untrusted counts values named like a TTFT from a producer whose
	// number is known not to be one (the producer table's not_ttft rows).
	Untrusted int64
	// Invalid counts records read back from ttft.* attributes that broke a
	// bound or closed set (record.Validate), by reason; each was derived
	// afresh from the span's or log record's own evidence.
	Invalid [record.NumInvalid]int64
}

// built counts a record derived afresh: with a TTFT, or without one for
// reason.
func (st *Stats) built(reason Reason, has bool) {
	st.Records++
	if has {
		st.WithTTFT++
	} else {
		st.Skipped[reason]++
	}
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Examined += o.Examined
	s.Records += o.Records
	s.Reread += o.Reread
	s.WithTTFT += o.WithTTFT
	s.Nested += o.Nested
	for i := range s.Skipped {
		s.Skipped[i] += o.Skipped[i]
	}
	s.ChunkEvents += o.ChunkEvents
	s.EventsIgnored += o.EventsIgnored
	s.ValuesRejected += o.ValuesRejected
	s.Untrusted += o.Untrusted
	for i := range s.Invalid {
		s.Invalid[i] += o.Invalid[i]
	}
}

// SkippedTotal sums Skipped over all reasons.
func (s *Stats) SkippedTotal() int64 {
	var n int64
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// Deriver derives request records. It is safe for concurrent use.
type Deriver struct {
	cfg       Config
	bands     *band.Bands
	table     *rowTable
	chunkName string
	limits    record.Limits
	pool      sync.Pool
	spare     atomic.Pointer[scratch]
	// stampedOnly: read records stamped upstream, derive none (StampedOnly).
	stampedOnly bool
	phase       atomic.Int64 // samplePhase's counter
}

// Option changes how a Deriver reads its input.
type Option func(*Deriver)

// StampedOnly makes the Deriver read only records stamped upstream (by the
// genai_ttft processor or the llm_gateway_log receiver) and derive nothing
// from spans or log records without one: the connector's stamped_only
// (docs/architecture.md, "The connector behind the processor"). A span is
// looked at only when one of its keys is ttft.outcome or ttft.nested_in, a
// length test per attribute; a record that fails its bounds is still
// derived afresh from its own evidence, as without the option. Of the
// spans and log records without a record, one in unstampedSample is read
// with the call rule and, if it is a call, counted as ReasonUnstamped: a
// sign that the processor is not in front of the connector.
func StampedOnly() Option { return func(d *Deriver) { d.stampedOnly = true } }

// unstampedSample: one span or log record in this many of those without a
// record is tested for call evidence under StampedOnly. Which ones moves
// from batch to batch (samplePhase), so a call that is never a batch's
// first span, as in traces of plain spans with one LLM call inside, is
// still sampled.
const unstampedSample = 256

// samplePhase is where a call of Traces or Logs starts sampling under
// StampedOnly: a different position of the 256 in each call (97 is odd, so
// 256 calls visit every position once), one atomic add per batch.
func (d *Deriver) samplePhase() int64 {
	if !d.stampedOnly {
		return 0
	}
	return d.phase.Add(97) % unstampedSample
}

// sampled says whether the examined-th span or log record of a call whose
// phase is phase is sampled.
func sampled(examined, phase int64) bool { return (examined+phase)%unstampedSample == 1 }

// New validates cfg and builds a Deriver.
func New(cfg Config, opts ...Option) (*Deriver, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	b, err := band.New(cfg.PromptBands)
	if err != nil {
		return nil, err
	}
	t, err := cfg.table()
	if err != nil {
		return nil, err
	}
	d := &Deriver{cfg: cfg, bands: b, table: t, chunkName: EventChunk}
	for _, o := range opts {
		o(d)
	}
	d.limits = d.readBackLimits()
	d.pool.New = func() any { return &scratch{} }
	return d, nil
}

// Config returns the configuration the Deriver was built with.
func (d *Deriver) Config() Config { return d.cfg }

// Bands returns the prompt bands in use.
func (d *Deriver) Bands() *band.Bands { return d.bands }

// skipScope says whether derive::skip_scopes names scope; if it does, the
// scope's n spans or log records are counted as examined and skipped
// (ReasonScopeSkipped), none of them read.
func (d *Deriver) skipScope(scope pcommon.InstrumentationScope, n int, st *Stats) bool {
	if len(d.cfg.SkipScopes) == 0 {
		return false
	}
	name := scope.Name()
	for _, p := range d.cfg.SkipScopes {
		if strings.HasPrefix(name, p) {
			st.Examined += int64(n)
			st.Skipped[ReasonScopeSkipped] += int64(n)
			return true
		}
	}
	return false
}

// IsChunkEvent reports whether a span event of this name is a per-chunk
// event (docs/architecture.md §4): the events that drop_chunk_events removes.
func IsChunkEvent(name string) bool {
	switch name {
	case EventChunk, EventCompletionChunk, EventLLMCompletionChunk:
		return true
	}
	return false
}

// ChunkEventNames lists the per-chunk event names IsChunkEvent recognises.
func ChunkEventNames() []string {
	return []string{EventChunk, EventCompletionChunk, EventLLMCompletionChunk}
}

// finishRecord fills the record fields every shape shares.
func (d *Deriver) finishRecord(rec *record.Record) {
	rec.PromptBand = d.bands.Label(rec.PromptTokens, rec.HasPromptTokens)
	// Attempts are counted up to record.MaxAttempts, the most a record may
	// claim: each input's counts are bounded, but a sum over many attempt
	// spans or fallback rows can pass it, and a record the connector
	// refuses to read back would lose its TTFT.
	rec.Attempts = min(max(rec.Attempts, 1), record.MaxAttempts)
}
