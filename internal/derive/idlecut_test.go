package derive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// TestIdleCutKeepsThePauseItWasCutIn: a stream an idle timeout cut 30 s
// after its last chunk paused at least 30 s: its ttft.max_chunk_gap is that
// pause, not the 0.5 s between its chunks, so the idle window can take it
// as censored there (docs/architecture.md §2). Before, the pause that got
// it cut was nowhere in the record. A stream that completed after a
// trailing silence keeps its gaps between chunks; so does one cut by an
// error. The pause is read only from events that hold every content chunk
// the stream instrumentation's summary counts: by default it records none
// after the first content, and the last event is then no last chunk (its
// 30.7 s to the end would be the whole stream, no pause).
func TestIdleCutKeepsThePauseItWasCutIn(t *testing.T) {
	events := []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(500*time.Millisecond, KindContent), chunk(time.Second, KindContent)}
	base := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true, "ttft.chunk.content_count": int64(3), "ttft.chunk.max_gap": 0.5}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for name, tc := range map[string]struct {
		status  ptrace.StatusCode
		attrs   map[string]any
		events  []eventSpec
		outcome string
		gap     float64
	}{
		"cut by an idle timeout": {ptrace.StatusCodeError, with("error.type", "timeout"), events, record.OutcomeTimeoutIdle, 30},
		"complete":               {ptrace.StatusCodeOk, with(), events, record.OutcomeComplete, 0.5},
		"error":                  {ptrace.StatusCodeError, with("error.type", "RateLimitError"), events, record.OutcomeError, 0.5},
		"events stop at the first content": {ptrace.StatusCodeError, with("error.type", "timeout"), events[:1],
			record.OutcomeTimeoutIdle, 0.5},
		"no summary to check the events against": {ptrace.StatusCodeError, with("error.type", "timeout", "ttft.chunk.content_count", nil), events,
			record.OutcomeTimeoutIdle, 0.5},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.attrs {
				if v == nil {
					delete(tc.attrs, k)
				}
			}
			rec := deriveOne(t, spanSpec{name: "chat", dur: 31 * time.Second, status: tc.status, attrs: tc.attrs, events: tc.events})
			assert.Equal(t, tc.outcome, rec.Outcome)
			assert.True(t, rec.HasMaxChunkGap)
			assert.InDelta(t, tc.gap, rec.MaxChunkGap, 1e-9)
		})
	}
}
