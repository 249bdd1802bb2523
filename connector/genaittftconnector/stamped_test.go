package genaittftconnector

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"
)

// With stamped_only the connector reads the stamped golden inputs (spans
// stamped by the processor, gateway records stamped by the receiver) to
// the very output it gives without the option.
func TestStampedOnlyReadsStampedInputsAsBefore(t *testing.T) {
	for _, dir := range []string{"stamped_spans", "gateway_logs", "delta"} {
		t.Run(dir, func(t *testing.T) {
			cfg := loadConfig(t, testdataPath("golden", dir, "config.yaml"))
			cfg.StampedOnly = true
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
			t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
			feedGoldenInputs(t, c, dir)
			c.flush(context.Background())
			require.Len(t, sink.AllMetrics(), 1)
			expected, err := golden.ReadMetrics(testdataPath("golden", dir, "output.yaml"))
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(expected, sink.AllMetrics()[0], compareOpts...))
		})
	}
}

// stampedByProcessor runs td through a genai_ttft processor with derive's
// defaults, as a pipeline in front of the connector does.
func stampedByProcessor(t *testing.T, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	f := genaittftprocessor.NewFactory()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}

// Real spans without ttft.* attributes: the processor in front and the
// connector with stamped_only give what the connector alone derives
// (derived_spans/output.yaml), and stamped_only alone derives nothing.
func TestStampedOnlyBehindTheProcessorEqualsDerivingHere(t *testing.T) {
	raw, err := golden.ReadTraces(testdataPath("golden", "derived_spans", "traces.json"))
	require.NoError(t, err)
	expected, err := golden.ReadMetrics(testdataPath("golden", "derived_spans", "output.yaml"))
	require.NoError(t, err)

	run := func(td ptrace.Traces) (*componenttest.Telemetry, *consumertest.MetricsSink) {
		cfg := loadConfig(t, testdataPath("golden", "derived_spans", "config.yaml"))
		cfg.StampedOnly = true
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
		set := testSettings(tel)
		sink := new(consumertest.MetricsSink)
		c := newTestConnectorWith(t, set, cfg, clockwork.NewFakeClockAt(testStart), sink)
		t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
		c.flush(context.Background())
		return tel, sink
	}

	raw2 := ptrace.NewTraces()
	raw.CopyTo(raw2)
	_, sink := run(stampedByProcessor(t, raw2))
	require.Len(t, sink.AllMetrics(), 1)
	require.NoError(t, pmetrictest.CompareMetrics(expected, sink.AllMetrics()[0], compareOpts...))

	tel, sink := run(raw)
	assert.Empty(t, sink.AllMetrics(), "no record is derived under stamped_only")
	skipped := sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")
	assert.Equal(t, int64(raw.SpanCount()), skipped["not_genai"]+skipped["unstamped"], "every span skipped: %v", skipped)
}

// Unstamped calls under stamped_only are counted from a sample (one span
// in 256 of those without a record, at a position that moves from batch
// to batch) and warned about at a limited rate: the processor is missing.
func TestStampedOnlyCountsAndWarnsAboutUnstampedCalls(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	core, logs := observer.New(zap.WarnLevel)
	set := testSettings(tel)
	set.Logger = zap.New(core)
	cfg := defaultConfig()
	cfg.StampedOnly = true
	sink := new(consumertest.MetricsSink)
	c := newTestConnectorWith(t, set, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	// Batches of 6 unstamped GenAI spans: over 256 batches each position
	// is sampled once, so 6 are counted.
	td := derivetest.ChunkedSpans(6, 30, 4)
	for range 256 {
		require.NoError(t, c.ConsumeTraces(context.Background(), td))
	}
	assert.Equal(t, map[string]int64{"unstamped": 6, "not_genai": 256*6 - 6},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
	_, err := tel.GetMetric("otelcol_connector_genai_ttft_records")
	assert.Error(t, err, "no record aggregated")
	assert.Equal(t, 1, logs.FilterMessageSnippet("stamped_only is set").Len(), "later warnings are rate-limited")
}

// derive::skip_scopes in the connector: under stamped_only, spans of a
// skipped scope are not tested for a record, so a record stamped on one
// (here by a processor without the option) is not aggregated; the other
// scope's records are, and the skipped spans are counted by reason.
func TestSkipScopesUnderStampedOnly(t *testing.T) {
	td := derivetest.PlainSpans(40)
	calls := derivetest.ChunkedSpans(6, 5, 2)
	calls.ResourceSpans().At(0).ScopeSpans().At(0).CopyTo(td.ResourceSpans().At(0).ScopeSpans().AppendEmpty())
	hidden := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
	calls.ResourceSpans().At(0).ScopeSpans().At(0).CopyTo(hidden)
	hidden.Scope().SetName("acme.http")
	stamped := stampedByProcessor(t, td)

	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	cfg := defaultConfig()
	cfg.StampedOnly = true
	cfg.Derive.SkipScopes = []string{"acme.http", "go.opentelemetry.io/contrib/instrumentation/"}
	require.NoError(t, cfg.Validate())
	c := newTestConnectorWith(t, testSettings(tel), cfg, clockwork.NewFakeClockAt(testStart), new(consumertest.MetricsSink))
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	require.NoError(t, c.ConsumeTraces(context.Background(), stamped))

	assert.Equal(t, map[string]int64{"scope_skipped": 46}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
	assert.Equal(t, map[string]int64{"traces": 6}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records", "signal"))
}
