package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func TestWorkingMemoryFollowsTheBatch(t *testing.T) {
	// A Deriver that derived 2,048 nested traces (4,096 calls) keeps its
	// working memory for the next batch; a batch of 16 traces must then
	// find maps made for its own size (clear costs a map's room), and
	// derive what a fresh Deriver derives.
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	derive := func(td ptrace.Traces) (records int, nested map[pcommon.SpanID]pcommon.SpanID) {
		nested = map[pcommon.SpanID]pcommon.SpanID{}
		d.TracesWith(td, TraceVisitor{
			Record: func(pcommon.Resource, ptrace.Span, *record.Record) { records++ },
			Nested: func(_ pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) { nested[span.SpanID()] = outer },
		})
		return records, nested
	}
	records, nested := derive(nestedTraces(2048))
	assert.Equal(t, 2048, records)
	assert.Len(t, nested, 2048)
	sc := d.spare.Load()
	require.NotNil(t, sc, "the large batch's scratch is kept as the spare")
	for name, room := range rooms(sc) {
		assert.Greater(t, room, 4*48, "%s after the large batch", name)
	}

	small := nestedTraces(16)
	records, nested = derive(small)
	fresh, err := New(DefaultConfig())
	require.NoError(t, err)
	var want int
	fresh.Traces(small, func(pcommon.Resource, ptrace.Span, *record.Record) { want++ })
	assert.Equal(t, want, records)
	assert.Equal(t, 16, records)
	assert.Len(t, nested, 16)
	for inner, outer := range nested {
		assert.Equal(t, pcommon.SpanID{inner[0], inner[1], 1}, outer)
	}

	sc = d.spare.Load()
	require.NotNil(t, sc)
	for name, room := range rooms(sc) {
		assert.LessOrEqual(t, room, 4*48, "%s after the small batch", name)
	}
}

// rooms is the room of each map and slice of sc that a nested batch fills.
func rooms(sc *scratch) map[string]int {
	return map[string]int{"index": sc.room.index, "calls": sc.room.calls, "walked": sc.room.walked, "all": sc.room.all, "allSpans": cap(sc.allSpans)}
}
