package derive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func skipping(t *testing.T, prefixes ...string) *derive.Deriver {
	t.Helper()
	cfg := derive.DefaultConfig()
	cfg.SkipScopes = prefixes
	d, err := derive.New(cfg)
	require.NoError(t, err)
	return d
}

// mixedBatch is 1,000 plain spans (scope otelhttp) and 10 GenAI spans
// (scope my-llm-client) in one resource.
func mixedBatch() ptrace.Traces {
	td := derivetest.PlainSpans(1000)
	g := derivetest.ChunkedSpans(10, 30, 2).ResourceSpans().At(0).ScopeSpans()
	g.MoveAndAppendTo(td.ResourceSpans().At(0).ScopeSpans())
	return td
}

// TestSkipScopesSkipsOnlyTheirSpans: spans of a named scope are counted as
// scope_skipped and never derived, a GenAI span among them included; the
// other scopes derive as without the option.
func TestSkipScopesSkipsOnlyTheirSpans(t *testing.T) {
	td := mixedBatch()
	// A call in the skipped scope: without the option it is derived.
	call := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(5)
	call.Attributes().PutStr("gen_ai.operation.name", "chat")
	call.Attributes().PutStr("gen_ai.request.model", "m")

	plain, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	before := plain.Traces(td, nil)
	assert.Equal(t, int64(11), before.Records, "without skip_scopes the call in the otelhttp scope is derived")

	var models []string
	st := skipping(t, "go.opentelemetry.io/contrib/instrumentation/net/http/").Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
		models = append(models, rec.Model)
	})
	assert.Equal(t, int64(1010), st.Examined)
	assert.Equal(t, int64(1000), st.Skipped[derive.ReasonScopeSkipped])
	assert.Zero(t, st.Skipped[derive.ReasonNotGenAI])
	assert.Equal(t, int64(10), st.Records)
	assert.Len(t, models, 10)
	assert.NotContains(t, models, "m")
	assert.Equal(t, "scope_skipped", derive.ReasonScopeSkipped.String())

	// A prefix that names no scope of the batch changes nothing.
	st = skipping(t, "io.opentelemetry.jdbc").Traces(td, nil)
	assert.Equal(t, before, st)
}

// TestSkipScopesLogs: log records of a named scope are skipped too.
func TestSkipScopesLogs(t *testing.T) {
	ld := plog.NewLogs()
	for _, scope := range []string{"app.gateway.logs", "app.http"} {
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		sl.Scope().SetName(scope)
		lr := sl.LogRecords().AppendEmpty()
		require.NoError(t, lr.Attributes().FromRaw(map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
			"ttft_ms": 340, "duration_ms": 2100, "litellm.request.streaming": true}))
	}
	assert.Equal(t, int64(2), skipping(t).Logs(ld, nil).Records)
	st := skipping(t, "app.http").Logs(ld, nil)
	assert.Equal(t, int64(1), st.Records)
	assert.Equal(t, int64(1), st.Skipped[derive.ReasonScopeSkipped])
	assert.Equal(t, int64(2), st.Examined)
}

// TestSkipScopesUnderStampedOnly: under StampedOnly a record stamped on a
// span of a named scope is not read either (the option means "never read").
func TestSkipScopesUnderStampedOnly(t *testing.T) {
	td := derivetest.ChunkedSpans(3, 5, 1)
	rec := record.Record{Outcome: record.OutcomeComplete, PromptBand: "<2k", Attempts: 1}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		rec.Write(spans.At(i).Attributes())
	}
	cfg := derive.DefaultConfig()
	cfg.SkipScopes = []string{"my-llm"}
	d, err := derive.New(cfg, derive.StampedOnly())
	require.NoError(t, err)
	st := d.Traces(td, func(pcommon.Resource, ptrace.Span, *record.Record) { t.Fatal("a skipped span was read") })
	assert.Equal(t, int64(3), st.Skipped[derive.ReasonScopeSkipped])
	assert.Zero(t, st.Reread)
}

// TestSkippedScopeAllocatesNothing: a batch whose spans are all in skipped
// scopes costs no allocation.
func TestSkippedScopeAllocatesNothing(t *testing.T) {
	d := skipping(t, "go.opentelemetry.io/contrib/instrumentation/")
	td := derivetest.PlainSpans(1000)
	d.Traces(td, nil)
	allocs := testing.AllocsPerRun(20, func() {
		if st := d.Traces(td, nil); st.Skipped[derive.ReasonScopeSkipped] != 1000 {
			t.Fatalf("stats %+v", st)
		}
	})
	assert.Zero(t, allocs)
}
