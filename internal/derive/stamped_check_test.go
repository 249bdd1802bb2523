package derive

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// CheckStampedOnly is checkStampedOnly for the tests of package derive_test.
var CheckStampedOnly = checkStampedOnly

// stampLikeTheProcessor writes each record td derives onto its span, and a
// nested marker on each nested span, as the genai_ttft processor does.
func stampLikeTheProcessor(d *Deriver, td ptrace.Traces) {
	d.TracesWith(td, TraceVisitor{
		Record: func(_ pcommon.Resource, span ptrace.Span, rec *record.Record) { rec.Write(span.Attributes()) },
		Nested: func(_ pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) {
			span.Attributes().PutStr(record.KeyNestedIn, outer.String())
		},
	})
}

// checkStampedOnly stamps a copy of td as the processor would and reads it
// back twice, as a connector without and with StampedOnly: the same
// records in the same order, and every span accounted for.
func checkStampedOnly(t *testing.T, d, stamped *Deriver, td ptrace.Traces) {
	t.Helper()
	cp := ptrace.NewTraces()
	td.CopyTo(cp)
	stampLikeTheProcessor(d, cp)
	var want, got []record.Record
	d.Traces(cp, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { want = append(want, *rec) })
	st := stamped.Traces(cp, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { got = append(got, *rec) })
	if len(got) != len(want) {
		t.Fatalf("stamped_only read %d records, without it %d: %+v", len(got), len(want), st)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d differs under stamped_only:\n without %+v\n with    %+v", i, want[i], got[i])
		}
	}
	if st.Examined != int64(cp.SpanCount()) || st.Records+st.Nested+st.Skipped[ReasonNotGenAI]+st.Skipped[ReasonUnstamped] != st.Examined {
		t.Fatalf("every span is accounted for once: %+v", st)
	}
}
