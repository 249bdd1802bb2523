package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// build writes the record of root i. has reports a TTFT; otherwise reason
// says why not.
func (d *Deriver) build(sc *scratch, i int32, rec *record.Record) (reason Reason, has bool) {
	r := &sc.entries[i]
	e := &r.ev
	rec.StaleKeys = e.staleKeys
	if e.timingValid {
		rec.Duration, rec.HasDuration = e.duration, true
	}
	rec.Observer = record.ObserverClient
	switch {
	case e.gateway, e.server && r.nestedClient:
		// A SERVER span around a CLIENT call is a gateway's view of it.
		rec.Observer = record.ObserverGateway
	case e.server:
		rec.Observer = record.ObserverServer
	}

	var content, chunk, srv *timing
	var srvServer bool
	var retriedContent, retriedChunk timing
	if r.contentFrom >= 0 {
		content = d.fromFirstAttempt(sc, r, r.contentFrom, &sc.entries[r.contentFrom].ev.content, &retriedContent)
	}
	if r.chunkFrom >= 0 {
		chunk = d.fromFirstAttempt(sc, r, r.chunkFrom, &sc.entries[r.chunkFrom].ev.chunk, &retriedChunk)
	}
	if r.srvFrom >= 0 {
		srv = &sc.entries[r.srvFrom].ev.srvTTFT
		srvServer = sc.entries[r.srvFrom].ev.server
	}
	if r.stream == triFalse && r.contentFrom < 0 && r.chunkFrom < 0 {
		rec.Streamed, rec.StreamedKnown = false, true
	}
	switch {
	case content != nil:
		rec.TimeToFirstContent, rec.HasTimeToFirstContent = content.v, true
		rec.MeasuredAt, rec.Source = record.MeasuredAtFirstContent, content.src
	case srv != nil:
		// vLLM times the first generated token: content, from arrival.
		rec.TimeToFirstContent, rec.HasTimeToFirstContent = srv.v, true
		rec.MeasuredAt, rec.Source = record.MeasuredAtFirstContent, srv.src
		if srvServer {
			rec.Observer = record.ObserverServer
		}
	case chunk != nil:
		rec.MeasuredAt, rec.Source = record.MeasuredAtFirstChunk, chunk.src
	}
	if chunk != nil && (!rec.HasTimeToFirstContent || chunk.v <= rec.TimeToFirstContent) {
		rec.TimeToFirstChunk, rec.HasTimeToFirstChunk = chunk.v, true
		if rec.MeasuredAt == "" {
			rec.MeasuredAt = record.MeasuredAtFirstChunk
		}
	}
	if e.headers.ok {
		rec.TimeToHeaders, rec.HasTimeToHeaders = e.headers.v, true
	}
	has = rec.HasTimeToFirstContent || rec.HasTimeToFirstChunk
	if has {
		rec.Streamed, rec.StreamedKnown = true, true
	} else if r.stream == triTrue {
		rec.Streamed, rec.StreamedKnown = true, true
	}
	if r.hasGap && has {
		rec.MaxChunkGap, rec.HasMaxChunkGap = r.maxGap, true
	}
	if r.contentChunks > 0 {
		rec.ContentChunks, rec.HasContentChunks = r.contentChunks, true
	}
	rec.PromptTokens, rec.HasPromptTokens = r.prompt, r.hasPrompt
	rec.CachedTokens, rec.HasCachedTokens = r.cached, r.hasCached
	rec.OutputTokens, rec.HasOutputTokens = r.output, r.hasOutput
	rec.Outcome = r.outcome
	if r.abandoned && rec.Outcome == record.OutcomeComplete {
		// An abandoned stream is closed ahead of a completion marker or
		// status OK on another span of the call (an enclosing span that
		// reports success for a stream it did not see end).
		rec.Outcome = record.OutcomeClosed
	}
	if rec.Outcome == "" {
		rec.Outcome = e.outcome(r.contentSeen())
	}
	if rec.Outcome == record.OutcomeTimeoutFirstToken && rec.HasTimeToFirstContent {
		// An exact first-token timeout message over a span with content:
		// as for a gateway row, a request cut before its first token has
		// no first-content time (record.Validate refuses the pair).
		rec.TimeToFirstContent, rec.HasTimeToFirstContent = 0, false
		if rec.HasTimeToFirstChunk {
			rec.MeasuredAt = record.MeasuredAtFirstChunk
		}
		has = rec.HasTimeToFirstChunk
	}
	rec.Attempts = d.attempts(sc, r)
	if _, failedOver, ok := r.gatewayAttempts(); ok {
		rec.FailedOver, rec.FailedOverKnown = failedOver, true
	} else if r.inner > 1 && r.failedInner > 0 && !r.ev.hasAttempts {
		// Vercel's sibling provider requests, retried: a retry of the same
		// target is an attempt, not a failover (docs/architecture.md §4).
		rec.FailedOver, rec.FailedOverKnown = r.innerRetarget, true
	}
	rec.Provider, rec.Model, rec.Route = best(e.provider[:]), best(e.model[:]), e.route
	if rec.Provider == "" {
		rec.Provider = r.nestedProvider
	}
	if rec.Model == "" {
		rec.Model = r.nestedModel
	}
	if rec.Route == "" {
		rec.Route = r.nestedRoute
	}
	if rec.HasDuration {
		// A time folded from a nested span is measured on that span, and
		// lies within its duration (checkTimings), not always within the
		// root's: a nested span that outlived the root (an instrumentation
		// that ends its span when it hands the stream back), or started
		// before it. The call lasted at least until its last span ended,
		// and at least as long as any of its spans: a record keeps its
		// times within its duration (record.Validate), or the connector
		// refuses it when read back.
		end := max(rec.TimeToFirstContent, rec.TimeToFirstChunk, rec.TimeToHeaders, rec.MaxChunkGap)
		if end > rec.Duration+durationSlack {
			// Each bound on its own: root start → last end may pass
			// max_duration_seconds (a nested span on a skewed clock)
			// where the longest span alone does not.
			ext := float64(r.longest) / 1e9
			if ext > d.cfg.MaxDurationSeconds {
				ext = 0
			}
			if r.lastEnd > e.end {
				if toEnd := float64(r.lastEnd-e.start) / 1e9; toEnd <= d.cfg.MaxDurationSeconds {
					ext = max(ext, toEnd)
				}
			}
			if ext > rec.Duration {
				rec.Duration = ext
			}
		}
	}
	d.finishRecord(rec)
	if has {
		return 0, true
	}
	return noTTFTReason(r), false
}

// fromFirstAttempt puts a time read from a retried Vercel provider request
// on the clock of the call's first one (docs/architecture.md §2: a
// retried call's TTFT includes the earlier attempts), copied into buf; a
// single request's time is its own, as its producer measured it. nil when
// the shifted time passes max_ttft_seconds.
func (d *Deriver) fromFirstAttempt(sc *scratch, r *entry, from int32, t *timing, buf *timing) *timing {
	e := &sc.entries[from].ev
	if e.vercel != vercelInner || r.firstInnerStart == 0 || !e.timingValid || e.start <= r.firstInnerStart {
		return t
	}
	*buf = *t
	buf.v += float64(e.start-r.firstInnerStart) / 1e9
	if buf.v > d.cfg.MaxTTFTSeconds {
		return nil
	}
	return buf
}

// noTTFTReason explains a record without TTFT from what fold gathered on
// root r.
func noTTFTReason(r *entry) Reason {
	switch {
	case r.stream == triFalse, r.durationAsTTFT:
		return ReasonNotStreamed
	case r.invalidTiming:
		return ReasonInvalidTiming
	}
	return ReasonNoEvidence
}

// attempts: ttft.attempts, else a gateway's fallback indexes and retries
// over every span of the call, else the Vercel provider requests that
// failed before the last one.
func (d *Deriver) attempts(sc *scratch, r *entry) int64 {
	n := int64(1)
	if r.failedInner > 0 {
		n = 1 + r.failedInner
		if r.lastInner >= 0 && sc.entries[r.lastInner].ev.failed() {
			n-- // the last request failed too: it is one of those counted
		}
	}
	if b, _, ok := r.gatewayAttempts(); ok && b > n {
		n = b
	}
	if r.ev.hasAttempts {
		n = r.ev.attempts
	}
	return n
}
