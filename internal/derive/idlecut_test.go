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
// trailing silence keeps its gaps between chunks; so does one cut by a
// first-token timeout or an error.
func TestIdleCutKeepsThePauseItWasCutIn(t *testing.T) {
	events := []eventSpec{chunk(300*time.Millisecond, KindContent), chunk(500*time.Millisecond, KindContent), chunk(time.Second, KindContent)}
	base := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.stream": true}
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
		outcome string
		gap     float64
	}{
		"cut by an idle timeout": {ptrace.StatusCodeError, with("error.type", "timeout"), record.OutcomeTimeoutIdle, 30},
		"complete":               {ptrace.StatusCodeOk, with(), record.OutcomeComplete, 0.5},
		"error":                  {ptrace.StatusCodeError, with("error.type", "RateLimitError"), record.OutcomeError, 0.5},
	} {
		t.Run(name, func(t *testing.T) {
			rec := deriveOne(t, spanSpec{name: "chat", dur: 31 * time.Second, status: tc.status, attrs: tc.attrs, events: events})
			assert.Equal(t, tc.outcome, rec.Outcome)
			assert.True(t, rec.HasMaxChunkGap)
			assert.InDelta(t, tc.gap, rec.MaxChunkGap, 1e-9)
		})
	}
}
