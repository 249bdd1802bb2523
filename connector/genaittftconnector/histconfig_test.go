package genaittftconnector

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func TestLoadHistogramsConfig(t *testing.T) {
	cfg := loadConfig(t, testdataPath("histograms", "config.yaml"))
	assert.Equal(t, initialKeep, cfg.Histograms.InitialValue)
	assert.Equal(t, 30*time.Minute, cfg.Histograms.StaleAfter)
	assert.Equal(t, 512, cfg.Histograms.MaxBuckets)
	table := cfg.Histograms.table()
	assert.Equal(t, "ms", table["house_gateway_ttft_ms"].Unit)
	assert.Equal(t, record.MeasuredAtFirstContent, table["bifrost_stream_first_token_latency_seconds"].MeasuredAtByProvider["groq"],
		"a configured row replaces the built-in one of the same metric")
	assert.Contains(t, table, "vllm:time_to_first_token_seconds", "the other built-in rows stay")
}

// TestHistogramSourceInMilliseconds: a configured row in ms lands in seconds.
func TestHistogramSourceInMilliseconds(t *testing.T) {
	cfg := loadConfig(t, testdataPath("histograms", "config.yaml"))
	cfg.MinSamples = 1
	c, sink := newMetricsConnector(t, cfg, clockwork.NewFakeClockAt(testStart), nil)
	md := histMetrics(hp{metricName: "house_gateway_ttft_ms", model: "m", ts: testStart, bounds: []float64{100, 500, 1000},
		counts: []uint64{0, 200, 0, 0}, extraLabels: map[string]string{"upstream": "openai", "route": "chat"}})
	require.NoError(t, c.ConsumeMetrics(context.Background(), md))
	out := flushNow(t, c, sink)
	base := map[string]any{record.KeyModel: "m", record.KeyRoute: "chat", record.KeyProvider: "openai", attrQuantile: "0.5"}
	assert.Equal(t, 0.1, value(t, out, "ttft.quantile", attrsWith(base, attrQuantileBound, "lower")))
	assert.Equal(t, 0.5, value(t, out, "ttft.quantile", attrsWith(base, attrQuantileBound, "upper")))
}

func TestValidateRejectsHistograms(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*HistogramsConfig)
		want string
	}{
		{"initial value", func(h *HistogramsConfig) { h.InitialValue = "first" }, "histograms::initial_value"},
		{"stale after", func(h *HistogramsConfig) { h.StaleAfter = 0 }, "histograms::stale_after"},
		{"max buckets", func(h *HistogramsConfig) { h.MaxBuckets = 1 }, "histograms::max_buckets"},
		{"source limit", func(h *HistogramsConfig) { h.SourceSeriesLimit = 0 }, "histograms::source_series_limit"},
		{"no metric", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "gateway"}}
		}, "histograms::sources[0]::metric"},
		{"duplicate", func(h *HistogramsConfig) {
			s := HistogramSource{Metric: "x", ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "gateway"}
			h.Sources = []HistogramSource{s, s}
		}, "histograms::sources[1]::metric \"x\" is already listed"},
		{"unit", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", Unit: "us", ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "gateway"}}
		}, "histograms::sources[0]::unit"},
		{"measured at", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", ModelLabels: []string{"m"}, MeasuredAt: "headers", Observer: "gateway"}}
		}, "histograms::sources[0]::measured_at"},
		{"measured at by provider", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "gateway",
				MeasuredAtByProvider: map[string]string{"openai": "content"}}}
		}, "histograms::sources[0]::measured_at_by_provider::openai"},
		{"observer", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "proxy"}}
		}, "histograms::sources[0]::observer"},
		{"model labels", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", MeasuredAt: "first_chunk", Observer: "gateway"}}
		}, "histograms::sources[0]::model_labels"},
		{"empty skip scope", func(h *HistogramsConfig) {
			h.Sources = []HistogramSource{{Metric: "x", ModelLabels: []string{"m"}, MeasuredAt: "first_chunk", Observer: "gateway", SkipScopes: []string{"openlit", ""}}}
		}, "histograms::sources[0]::skip_scopes[1] is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultConfig()
			tc.mut(&cfg.Histograms)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	cfg := defaultConfig()
	cfg.Dimensions = append(cfg.Dimensions, attrQuantileBound)
	require.ErrorContains(t, cfg.Validate(), "set by the connector itself")
}

// TestMetricsInstanceSharesTheConnector: the metrics→metrics instance of a
// configuration is the traces and logs instances' connector, so histogram
// inputs and spans land behind one aggregator and one output; Shutdown is
// idempotent and safe without Start.
func TestMetricsInstanceSharesTheConnector(t *testing.T) {
	cfg := defaultConfig()
	clock := clockwork.NewFakeClockAt(testStart)
	traces := newTestConnector(t, cfg, clock, nil)
	metrics, _ := newMetricsConnector(t, cfg, clock, nil)
	assert.Same(t, traces, metrics)
	require.NoError(t, metrics.Shutdown(context.Background()))
	require.NoError(t, metrics.Shutdown(context.Background()))
}
