package derive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// TestIdleCutKeepsThePauseItWasCutIn: the stream instrumentation writes the
// pause an idle timeout cut a stream in into ttft.chunk.max_gap (30 s from
// its last chunk to the cut); the record's ttft.max_chunk_gap is that
// pause, not the 0.5 s between its chunk events, so the idle window takes
// it as censored there (docs/architecture.md §2). The span's own end is no
// cut time: a caller's span may end long after the cut, and the events
// stop at the first content by default, so no pause is read from them. A
// stream that completed after a trailing silence keeps its gaps.
func TestIdleCutKeepsThePauseItWasCutIn(t *testing.T) {
	events := []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(500*time.Millisecond, KindContent), chunk(time.Second, KindContent)}
	attrs := func(gap float64, kv ...any) map[string]any {
		m := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "ttft.chunk.content_count": int64(3), "ttft.chunk.max_gap": gap}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for name, tc := range map[string]struct {
		status  ptrace.StatusCode
		attrs   map[string]any
		outcome string
		gap     float64
	}{
		"cut by an idle timeout":              {ptrace.StatusCodeError, attrs(30, "error.type", "timeout"), record.OutcomeTimeoutIdle, 30},
		"complete after a trailing silence":   {ptrace.StatusCodeOk, attrs(0.5), record.OutcomeComplete, 0.5},
		"cut, the summary says no long pause": {ptrace.StatusCodeError, attrs(0.5, "error.type", "timeout"), record.OutcomeTimeoutIdle, 0.5},
	} {
		t.Run(name, func(t *testing.T) {
			rec := deriveOne(t, spanSpec{name: "chat", dur: 45 * time.Second, status: tc.status, attrs: tc.attrs, events: events})
			assert.Equal(t, tc.outcome, rec.Outcome)
			assert.True(t, rec.HasMaxChunkGap)
			assert.InDelta(t, tc.gap, rec.MaxChunkGap, 1e-9)
		})
	}
}
