package derive

import (
	"hash/fnv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// linkSpan is one span of a batch for the nesting tests: which
// ResourceSpans it goes in, its trace, ids, and whether it is a call.
type linkSpan struct {
	res          int
	trace        byte
	tid          pcommon.TraceID // when set, instead of trace
	id, parent   byte
	sid, pid     pcommon.SpanID // when set, instead of id and parent
	call         bool
	name         string
	resAttribute string // service.name of its ResourceSpans, set by its first span
}

func linkBatch(spans ...linkSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, s := range spans {
		for td.ResourceSpans().Len() <= s.res {
			td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		}
		rs := td.ResourceSpans().At(s.res)
		if s.resAttribute != "" {
			rs.Resource().Attributes().PutStr("service.name", s.resAttribute)
		}
		span := rs.ScopeSpans().At(0).Spans().AppendEmpty()
		span.SetName(s.name)
		span.SetKind(ptrace.SpanKindInternal)
		span.SetTraceID(pcommon.TraceID{s.trace})
		if !s.tid.IsEmpty() {
			span.SetTraceID(s.tid)
		}
		span.SetSpanID(pcommon.SpanID{s.id})
		if !s.sid.IsEmpty() {
			span.SetSpanID(s.sid)
		}
		if s.parent != 0 {
			span.SetParentSpanID(pcommon.SpanID{s.parent})
		}
		if !s.pid.IsEmpty() {
			span.SetParentSpanID(s.pid)
		}
		span.SetStartTimestamp(ts(0))
		span.SetEndTimestamp(ts(time.Second))
		if s.call {
			span.SetKind(ptrace.SpanKindClient)
			span.Attributes().PutStr("gen_ai.operation.name", "chat")
			span.Attributes().PutStr("gen_ai.request.model", "m")
		}
	}
	return td
}

// linkResult is which spans carry records and which outer span each nested
// call span was folded into.
func linkResult(t *testing.T, td ptrace.Traces) (records []string, nested map[string]pcommon.SpanID) {
	t.Helper()
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	nested = map[string]pcommon.SpanID{}
	var n int64
	st := d.TracesWith(td, TraceVisitor{
		Record: func(_ pcommon.Resource, span ptrace.Span, _ *record.Record) { records = append(records, span.Name()) },
		Nested: func(_ pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) { nested[span.Name()] = outer; n++ },
	})
	assert.Equal(t, n, st.Nested)
	return records, nested
}

func TestNestingThroughIntermediateSpansOfInterleavedTraces(t *testing.T) {
	// Two calls, each nested in an outer call through an intermediate
	// span, with the spans of the two traces interleaved, and a third trace
	// without calls whose span ids repeat the first trace's.
	records, nested := linkResult(t, linkBatch(
		linkSpan{trace: 1, id: 1, call: true, name: "outer-1"},
		linkSpan{trace: 3, id: 2, parent: 9, name: "other-2"},
		linkSpan{trace: 2, id: 1, call: true, name: "outer-2"},
		linkSpan{trace: 1, id: 2, parent: 1, name: "mid-1"},
		linkSpan{trace: 3, id: 9, name: "other-9"},
		linkSpan{trace: 2, id: 2, parent: 1, name: "mid-2"},
		linkSpan{trace: 1, id: 3, parent: 2, call: true, name: "inner-1"},
		linkSpan{trace: 2, id: 3, parent: 2, call: true, name: "inner-2"},
	))
	assert.ElementsMatch(t, []string{"outer-1", "outer-2"}, records)
	assert.Equal(t, map[string]pcommon.SpanID{"inner-1": {1}, "inner-2": {1}}, nested)
}

func TestNestingThroughIntermediateSpansOfTracesSharingATraceKey(t *testing.T) {
	// Two traces whose ids fold to the same traceKey, the same span ids in
	// both: each call nests through its own trace's intermediate span only.
	a := pcommon.TraceID{1}
	b := pcommon.TraceID{8: 1}
	require.Equal(t, traceKey(a), traceKey(b))
	records, nested := linkResult(t, linkBatch(
		linkSpan{tid: a, id: 1, call: true, name: "outer-a"},
		linkSpan{tid: b, id: 1, name: "root-b"},
		linkSpan{tid: b, id: 2, parent: 1, name: "mid-b"},
		linkSpan{tid: a, id: 2, parent: 1, name: "mid-a"},
		linkSpan{tid: a, id: 3, parent: 2, call: true, name: "inner-a"},
		linkSpan{tid: b, id: 3, parent: 2, call: true, name: "inner-b"},
	))
	assert.ElementsMatch(t, []string{"outer-a", "inner-b"}, records)
	assert.Equal(t, map[string]pcommon.SpanID{"inner-a": {1}}, nested)
}

func TestNestingThroughIntermediateSpansInOtherResourceSpans(t *testing.T) {
	// The intermediate span arrives in another ResourceSpans: the calls fold
	// when it describes the same resource, never when it describes another.
	for _, tc := range []struct {
		name   string
		second string
		folds  bool
	}{
		{"same resource", "checkout", true},
		{"another resource", "attacker", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records, nested := linkResult(t, linkBatch(
				linkSpan{res: 0, trace: 1, id: 1, call: true, name: "outer", resAttribute: "checkout"},
				linkSpan{res: 1, trace: 1, id: 2, parent: 1, name: "mid", resAttribute: tc.second},
				linkSpan{res: 1, trace: 2, id: 5, name: "unrelated"},
				linkSpan{res: 0, trace: 1, id: 3, parent: 2, call: true, name: "inner"},
			))
			if tc.folds {
				assert.Equal(t, []string{"outer"}, records)
				assert.Equal(t, map[string]pcommon.SpanID{"inner": {1}}, nested)
			} else {
				assert.ElementsMatch(t, []string{"outer", "inner"}, records)
				assert.Empty(t, nested)
			}
		})
	}
}

func TestNestingThroughIntermediateSpansWithManyCalls(t *testing.T) {
	// Past linearLimit calls the batch is indexed: 40 traces of a plain
	// request (root → handler) with a call under the handler, and every
	// fourth with an outer call above the root.
	var spans []linkSpan
	for i := range 40 {
		tr := byte(i + 1)
		if i%4 == 0 {
			spans = append(spans, linkSpan{trace: tr, id: 9, call: true, name: "outer"})
			spans = append(spans, linkSpan{trace: tr, id: 1, parent: 9, name: "root"})
		} else {
			spans = append(spans, linkSpan{trace: tr, id: 1, name: "root"})
		}
		spans = append(spans, linkSpan{trace: tr, id: 2, parent: 1, name: "handler"})
	}
	for i := range 40 {
		spans = append(spans, linkSpan{trace: byte(i + 1), id: 3, parent: 2, call: true, name: "call"})
	}
	records, nested := linkResult(t, linkBatch(spans...))
	assert.Equal(t, map[string]pcommon.SpanID{"call": {9}}, nested)
	var outer, calls int
	for _, r := range records {
		switch r {
		case "outer":
			outer++
		case "call":
			calls++
		}
	}
	assert.Equal(t, 10, outer, "the calls under an outer call fold into it")
	assert.Equal(t, 30, calls)
}

func TestLinkSkipsBatchesWithOneCallPerTrace(t *testing.T) {
	// Past linearLimit calls, a batch where no trace holds two calls is not
	// linked at all (countCalls). 40 calls, each under a plain parent of its
	// own trace: 40 records, none nested.
	var spans []linkSpan
	for i := range 40 {
		spans = append(spans, linkSpan{trace: byte(i + 1), id: 3, parent: 2, call: true, name: "call"})
	}
	records, nested := linkResult(t, linkBatch(spans...))
	assert.Len(t, records, 40)
	assert.Empty(t, nested)

	// One trace with an outer call first in the batch and its inner call
	// last, 40 single-call traces between them: the two are still folded.
	spans = append([]linkSpan{{trace: 99, id: 9, call: true, name: "outer"}}, spans...)
	spans = append(spans, linkSpan{trace: 99, id: 4, parent: 9, call: true, name: "inner"})
	records, nested = linkResult(t, linkBatch(spans...))
	assert.Len(t, records, 41)
	assert.Equal(t, map[string]pcommon.SpanID{"inner": {9}}, nested)
}

func TestWalkIndexesOnlyTracesWithAnotherCall(t *testing.T) {
	// 40 traces of a plain request (root → handler → call): each call is
	// alone in its trace, so no walk can end at another call and the
	// batch's other spans are not indexed. One more trace has an outer call
	// above its root: only its spans are indexed, and its call nests.
	var spans []linkSpan
	for i := range 40 {
		tr := byte(i + 1)
		spans = append(spans,
			linkSpan{trace: tr, id: 1, name: "root"},
			linkSpan{trace: tr, id: 2, parent: 1, name: "handler"},
			linkSpan{trace: tr, id: 3, parent: 2, call: true, name: "call"})
	}
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	// derive returns how many spans the walk indexed, the records and the
	// nested calls.
	derive := func(td ptrace.Traces) (indexed, records int, nested int64) {
		st := d.TracesWith(td, TraceVisitor{Record: func(pcommon.Resource, ptrace.Span, *record.Record) { records++ }})
		sc := d.spare.Load()
		require.NotNil(t, sc)
		return len(sc.allSpans), records, st.Nested
	}
	indexed, records, nested := derive(linkBatch(spans...))
	assert.Zero(t, indexed, "no trace has two calls: nothing to walk")
	assert.Equal(t, 40, records)
	assert.Zero(t, nested)

	spans = append(spans,
		linkSpan{trace: 99, id: 9, call: true, name: "outer"},
		linkSpan{trace: 99, id: 1, parent: 9, name: "root"},
		linkSpan{trace: 99, id: 2, parent: 1, name: "handler"},
		linkSpan{trace: 99, id: 3, parent: 2, call: true, name: "inner"})
	indexed, records, nested = derive(linkBatch(spans...))
	assert.Equal(t, 4, indexed, "only the spans of the trace with two calls")
	assert.Equal(t, 41, records)
	assert.Equal(t, int64(1), nested, "the inner call nests in the outer")
}

func TestResourceFingerprintIsFNV1aSum(t *testing.T) {
	// The fingerprint is the sum over attributes of FNV-1a (hash/fnv's
	// New64a) of key, a zero byte and the value as a string.
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "checkout")
	res.Attributes().PutInt("service.instance.id", 7)
	res.Attributes().PutStr("", "")
	res.Attributes().PutEmptySlice("tags").AppendEmpty().SetStr("ä")
	var want uint64
	for k, v := range res.Attributes().All() {
		h := fnv.New64a()
		_, _ = h.Write([]byte(k))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(v.AsString()))
		want += h.Sum64()
	}
	assert.Equal(t, want, resourceFingerprint(res))
	assert.NotEqual(t, want, resourceFingerprint(pcommon.NewResource()))
}
