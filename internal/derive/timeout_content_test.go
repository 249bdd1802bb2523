package derive

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// An exact first-token timeout message (the Vercel AI SDK's) on a span
// whose ttft.chunk events carry content.
func TestFirstChunkTimeoutWithContentKeepsNoContentTime(t *testing.T) {
	td := ptrace.NewTraces()
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("chat m")
	s.SetKind(ptrace.SpanKindClient)
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{1})
	start := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(5 * time.Second)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "m")
	a.PutBool("gen_ai.request.stream", true)
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage("First chunk timeout of 3000ms exceeded")
	ev := s.Events().AppendEmpty()
	ev.SetName("ttft.chunk")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	ev.Attributes().PutStr("ttft.chunk.kind", "content")
	d, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
		n++
		if rec.Outcome != record.OutcomeTimeoutFirstToken {
			t.Fatalf("outcome %q", rec.Outcome)
		}
		if rec.HasTimeToFirstContent {
			t.Errorf("a request cut before its first token has a first-content time %v", rec.TimeToFirstContent)
		}
		if why := record.Validate(rec, &d.limits); why != record.Valid {
			t.Errorf("the derived record fails read-back validation: %v", why)
		}
	})
	if n != 1 {
		t.Fatalf("%d records", n)
	}
}
