package derive

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestChunkEventsReadAlikeWithOtherEvents checks that the two readers of
// ttft.chunk events agree: onlyChunks (a span with nothing but chunk
// events) and mixedEvents (a span with any other event too). An event that
// says nothing to the derivation, added anywhere, changes no record: same
// times, gap, counts and outcome, whatever the kinds, order and times
// (out of order, outside the span, keep-alives, errors, no kind).
func TestChunkEventsReadAlikeWithOtherEvents(t *testing.T) {
	kinds := []any{KindRole, KindKeepalive, KindContent, KindToolCall, KindReasoning, KindLifecycle, KindError, "", "other", int64(3)}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		dur := time.Duration(1+rng.IntN(3000)) * time.Millisecond
		var events []eventSpec
		for j, n := 0, rng.IntN(12); j < n; j++ {
			at := time.Duration(rng.IntN(int(dur/time.Millisecond)+200)-100) * time.Millisecond
			attrs := map[string]any{}
			switch r := rng.IntN(10); {
			case r == 0: // no kind at all
			case r == 1: // the kind after another attribute
				attrs["ttft.chunk.index"] = int64(j)
				attrs[AttrChunkKind] = kinds[rng.IntN(len(kinds))]
			default:
				attrs[AttrChunkKind] = kinds[rng.IntN(len(kinds))]
			}
			events = append(events, eventSpec{name: EventChunk, at: at, attrs: attrs})
		}
		spec := spanSpec{
			name: "chat", kind: ptrace.SpanKindClient, dur: dur,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
		}
		spec.events = events
		only := deriveOne(t, spec)

		mixed := spec
		pos := rng.IntN(len(events) + 1)
		mixed.events = append(append(append([]eventSpec(nil), events[:pos]...),
			eventSpec{name: "log", at: time.Millisecond, attrs: map[string]any{"message": "hello"}}), events[pos:]...)
		require.Equal(t, only, deriveOne(t, mixed), "round %d, %d chunk events, other event at %d", round, len(events), pos)
	}
}
