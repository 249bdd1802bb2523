package genaittftconnector

import (
	"context"
	"fmt"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// sumByAttr reads an int counter or gauge of own telemetry, keyed by one attribute.
func sumByAttr(t *testing.T, tel *componenttest.Telemetry, name, key string) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	out := map[string]int64{}
	add := func(attrs attribute.Set, v int64) {
		a, _ := attrs.Value(attribute.Key(key))
		out[a.AsString()] += v
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			add(dp.Attributes, dp.Value)
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			add(dp.Attributes, dp.Value)
		}
	default:
		t.Fatalf("%s: unexpected %T", name, m.Data)
	}
	return out
}

func TestOwnTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	core, logs := observer.New(zap.WarnLevel)
	set := connectortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	cfg := defaultConfig()
	cfg.AggregationCardinalityLimit = 2
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	tc, err := NewFactory().CreateTracesToMetrics(clockwork.AddToContext(context.Background(), clock), set, cfg, sink)
	require.NoError(t, err)
	c := tc.(*tracesConnector).conn
	defer func() { require.NoError(t, tc.Shutdown(context.Background())) }()

	notStreamed := false
	models := []req{gpt, with(gpt, func(r *req) { r.model = "b" }), with(gpt, func(r *req) { r.model = "c" }), with(gpt, func(r *req) { r.streamed = &notStreamed })}
	td := stampedTraces(models...)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty().SetName("GET /health")
	nested := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	nested.Attributes().PutStr(record.KeyNestedIn, "0102030405060708")
	ctx := context.Background()
	require.NoError(t, c.ConsumeTraces(ctx, td))
	require.NoError(t, c.ConsumeTraces(ctx, td)) // the second overflow warning is rate-limited
	c.flush(ctx)

	assert.Equal(t, map[string]int64{"traces": 6}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records", "signal"))
	assert.Equal(t, map[string]int64{"not_streamed": 2, "not_genai": 2, "nested": 2},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason"))
	assert.Equal(t, map[string]int64{"histograms": 2, "requests": 2, "windows": 2},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_overflowed", "kind"))
	assert.Equal(t, map[string]int64{"histograms": 3, "requests": 3, "windows": 2, "histogram_sources": 0},
		sumByAttr(t, tel, "otelcol_connector_genai_ttft_series", "kind"))
	assert.Equal(t, map[string]int64{"": 1}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_logs_rate_limited", "none"))
	assert.Equal(t, 1, logs.FilterMessageSnippet("aggregation_cardinality_limit reached").Len())
}

// TestBatchAllocatesNothing: once its series exist, a batch of stamped
// spans, one of plain spans, one whose records overflow the series limit
// and one with an invalid record go through the connector, own telemetry
// through the SDK included, without one allocation.
func TestBatchAllocatesNothing(t *testing.T) {
	invalid := corpus(200, 10, 3)
	bad := invalid.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	bad.Attributes().PutStr(record.KeyOutcome, record.OutcomeComplete)
	bad.Attributes().PutDouble(record.KeyTimeToFirstContent, -1)
	for _, tt := range []struct {
		name  string
		limit int
		td    ptrace.Traces
	}{
		{"stamped", 0, corpus(200, 10, 3)},
		{"plain", 0, derivetest.PlainSpans(200)},
		{"overflowed", 3, corpus(200, 10, 3)},
		{"invalid", 0, invalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := defaultConfig()
			if tt.limit > 0 {
				cfg.AggregationCardinalityLimit = tt.limit
			}
			c := newTestConnectorWith(t, testSettings(tel), cfg, clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
			t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
			ctx := context.Background()
			require.NoError(t, c.ConsumeTraces(ctx, tt.td)) // the series, the scratch and the attribute sets
			assert.Zero(t, testing.AllocsPerRun(20, func() {
				if err := c.ConsumeTraces(ctx, tt.td); err != nil {
					t.Fatal(err)
				}
			}))
		})
	}
}

// TestSkipsCountEachReason: a batch's skips by reason, past the list's
// eight reasons too, add up and are all reported.
func TestSkipsCountEachReason(t *testing.T) {
	var s skips
	want := map[string]int64{}
	for i := range 30 {
		r := fmt.Sprintf("reason-%d", i%11)
		s.add(r, int64(i+1))
		want[r] += int64(i + 1)
	}
	s.add("none", 0)
	got := map[string]int64{}
	for r, n := range s.all {
		got[r] += n
	}
	assert.Equal(t, want, got)
	for r, n := range want {
		assert.Equal(t, n, s.get(r), r)
	}
	assert.Zero(t, s.get("none"))
}
