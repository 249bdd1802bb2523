package genaittftprocessor

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

// TestPlainBatchAllocatesNothing: a batch of plain HTTP and database spans
// passes through derivation, stamping and own telemetry without one
// allocation (the collector's processorhelper around it counts its own).
func TestPlainBatchAllocatesNothing(t *testing.T) {
	p, err := newProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig())
	require.NoError(t, err)
	td := plainSpans()
	ctx := context.Background()
	_, _ = p.processTraces(ctx, td) // warm the scratch
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		if _, err := p.processTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}))
}

// TestSkipScopes: with derive::skip_scopes naming the plain spans' scope, a
// mixed batch leaves that scope's spans exactly as they came (a GenAI span
// among them included: the option says the scope holds none), stamps the
// calls of the other scope, and counts the skipped spans by reason. A
// batch of skipped spans allocates nothing in the processor.
func TestSkipScopes(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig()
	cfg.Derive.SkipScopes = []string{"go.opentelemetry.io/contrib/instrumentation/net/http/"}
	require.NoError(t, cfg.Validate())
	p, sink := newTraces(t, cfg, tel)

	td := plainSpans()
	sss := td.ResourceSpans().At(0).ScopeSpans()
	sss.At(0).Spans().At(3).Attributes().PutStr("gen_ai.operation.name", "chat")
	derivetest.ChunkedSpans(4, 5, 1).ResourceSpans().At(0).ScopeSpans().MoveAndAppendTo(sss)
	want := ptrace.NewTraces()
	td.CopyTo(want)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))

	got := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans()
	require.NoError(t, ptracetest.CompareScopeSpans(want.ResourceSpans().At(0).ScopeSpans().At(0), got.At(0)), "the skipped scope passes untouched")
	for i := 0; i < got.At(1).Spans().Len(); i++ {
		assert.True(t, recordtest.Stamped(got.At(1).Spans().At(i).Attributes()), "span %d of the other scope is stamped", i)
	}
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_skipped", map[string]string{"signal": "traces", "reason": "scope_skipped"}, 1000)
	assertSum(t, tel, "otelcol_processor_genai_ttft_spans_derived", map[string]string{"signal": "traces"}, 4)

	direct, err := newProcessor(processortest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	plain := plainSpans()
	ctx := context.Background()
	_, _ = direct.processTraces(ctx, plain)
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		if _, err := direct.processTraces(ctx, plain); err != nil {
			t.Fatal(err)
		}
	}))
}
