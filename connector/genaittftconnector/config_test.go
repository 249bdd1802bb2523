package genaittftconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/docstest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	full := defaultConfig()
	full.Derive.PromptBands = []int64{4000, 32000}
	full.Derive.RouteAttribute = "llm.route"
	full.Derive.SkipScopes = []string{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"}
	full.StampedOnly = true
	full.Dimensions = []string{"gen_ai.provider.name", "gen_ai.request.model", "ttft.route", "deployment.environment.name"}
	full.FlushInterval = 30 * time.Second
	full.Window = 12 * time.Hour
	full.WindowSlices = 12
	full.MinSamples = 500
	full.Quantiles = []float64{0.5, 0.99}
	full.Policies = []recommend.Policy{
		{Name: "first_token", Signal: "time_to_first_token", Quantile: 0.999, Headroom: 1.25, RoundTo: 100 * time.Millisecond, Min: time.Second, Max: time.Minute},
		{Name: "chunk_cutoff", Signal: "time_to_first_chunk", Quantile: 0.99, Headroom: 2, RoundTo: 50 * time.Millisecond, MeasuredAt: []string{"first_chunk", "first_content"}},
	}
	full.Deadlines = DeadlinesConfig{Default: 45 * time.Second, Routes: map[string]time.Duration{"support": 20 * time.Second, "batch": 10 * time.Minute}, Policy: "first_token"}
	full.AggregationCardinalityLimit = 1000
	full.MetricsExpiration = 30 * time.Minute
	full.AggregationTemporality = "delta"
	full.Censoring = false
	full.ExponentialHistogramMaxSize = 80
	full.IncludeCollectorInstanceID = false
	full.Records = RecordsConfig{RememberCalls: 5000, RememberFor: 30 * time.Second}

	tests := []struct {
		id       component.ID
		expected *Config
		errs     []string
	}{
		{id: component.NewID(metadata.Type), expected: defaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "full"), expected: full},
		{
			id: component.NewIDWithName(metadata.Type, "invalid"),
			errs: []string{
				`dimensions[1] "gen_ai.request.model" is listed twice`,
				`dimensions[2] "ttft.outcome" is set by the connector itself`,
				`dimensions[3] is empty`,
				`dimensions[4] "ttft.attempts" is a key of the request record, not a dimension`,
				"flush_interval must be > 0",
				"window must be > 0",
				"window_slices must be >= 1",
				"min_samples must be >= 1",
				"quantiles[1] = 1 must be in (0, 1)",
				"quantiles[2] = 0.5 is listed twice",
				"policies[0]::signal",
				"policies[0]::headroom",
				"policies[1]::name",
				"deadlines::default must be > 0",
				"deadlines::routes::support must be > 0",
				`deadlines::policy "nope" names no configured policy`,
				"aggregation_cardinality_limit must be >= 1",
				"metrics_expiration must be >= 0",
				`aggregation_temporality must be "cumulative" or "delta"`,
				"exponential_histogram_max_size must be in [2, 16384]",
				"records::remember_calls must be >= 0",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			cfg := defaultConfig()
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.Validate()
			if len(tt.errs) > 0 {
				require.Error(t, err)
				for _, e := range tt.errs {
					assert.ErrorContains(t, err, e)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		err    string
	}{
		{"slices shorter than a second", func(c *Config) { c.Window = 10 * time.Second; c.WindowSlices = 20 }, "window / window_slices must be at least 1s"},
		{"margin policy on another signal", func(c *Config) { c.Deadlines.Policy = "idle" }, `deadlines::policy "idle" has signal "max_chunk_gap"`},
		{"bad prompt bands", func(c *Config) { c.Derive.PromptBands = []int64{16000, 2000} }, "prompt_bands must be strictly increasing"},
		{"skip_scopes over a producer", func(c *Config) { c.Derive.SkipScopes = []string{"bifrost"} }, `derive::skip_scopes[0] "bifrost" would skip scope "bifrost" of producer`},
		{"NaN quantile", func(c *Config) { c.Quantiles = []float64{nan()} }, "quantiles[0] = NaN must be in (0, 1)"},
		{"huge histogram", func(c *Config) { c.ExponentialHistogramMaxSize = 20000 }, "exponential_histogram_max_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultConfig()
			tt.mutate(cfg)
			assert.ErrorContains(t, cfg.Validate(), tt.err)
		})
	}
}

func TestValidateAcceptsDefaultsAndNoMarginPolicy(t *testing.T) {
	cfg := defaultConfig()
	require.NoError(t, cfg.Validate())
	cfg.Deadlines.Policy = ""
	require.NoError(t, cfg.Validate(), "an empty deadlines::policy turns ttft.deadline.margin off")
	assert.Equal(t, derive.DefaultConfig(), cfg.Derive)
}

func TestDeadlinePerRoute(t *testing.T) {
	cfg := defaultConfig()
	cfg.Deadlines.Routes = map[string]time.Duration{"support": 20 * time.Second}
	assert.Equal(t, 20*time.Second, cfg.deadline("support"))
	assert.Equal(t, 30*time.Second, cfg.deadline("other"))
	assert.Equal(t, 30*time.Second, cfg.deadline(""))
}

// TestArchitectureDefaults: the connector's keys docs/architecture.md §8
// lists have the values it lists as their defaults, the policies in their
// order.
func TestArchitectureDefaults(t *testing.T) {
	sub, err := docstest.Component(filepath.Join("..", "..", "docs", "architecture.md"), "connectors::"+metadata.Type.String())
	require.NoError(t, err, "§8 lists the connector's keys")
	cfg := defaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	assert.Equal(t, defaultConfig(), cfg, "a value §8 lists is not the default")
}

// A duration written as a bare number is read by the collector as
// nanoseconds: flush_interval: 15 flushes every 15 ns (a core busy with
// no data), policies[0]::max: 60 clamps every recommendation to 60 ns. It
// fails at start-up naming the key and the unit to write.
func TestUnitlessDurationFails(t *testing.T) {
	for _, tc := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"flush_interval": 15}, "flush_interval: 15 has no unit"},
		{map[string]any{"metrics_expiration": 3600}, "metrics_expiration: 3600 has no unit"},
		{map[string]any{"policies": []any{map[string]any{"name": "first_token", "signal": "time_to_first_token", "quantile": 0.999, "headroom": 1.25, "max": 60}}}, "policies[0]::max: 60 has no unit"},
		{map[string]any{"deadlines": map[string]any{"default": 30, "routes": map[string]any{"support": 20}}}, "deadlines::routes::support: 20 has no unit"},
		{map[string]any{"histograms": map[string]any{"stale_after": 900}}, "histograms::stale_after: 900 has no unit"},
		{map[string]any{"records": map[string]any{"remember_for": 120}}, "records::remember_for: 120 has no unit"},
	} {
		cfg := defaultConfig()
		err := confmap.NewFromStringMap(tc.raw).Unmarshal(cfg)
		if err == nil {
			err = cfg.Validate()
		}
		require.Error(t, err, "%v was accepted", tc.raw)
		assert.ErrorContains(t, err, tc.want)
		assert.ErrorContains(t, err, "write the unit, e.g.")
	}
	cfg := defaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"metrics_expiration": 0, "flush_interval": "15s"}).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
}

// window_slices had no upper bound: each window of each series is a ring of
// window_slices slots allocated at the series' first record and read at
// every flush. window: 8760h with one-second slices (31,536,000) passed
// Validate and cost 721 MiB and half a second for every new series.
func TestWindowSlicesIsBounded(t *testing.T) {
	cfg := defaultConfig()
	cfg.Window = 8760 * time.Hour
	cfg.WindowSlices = 31_536_000
	err := cfg.Validate()
	require.Error(t, err, "window_slices: %d was accepted", cfg.WindowSlices)
	assert.ErrorContains(t, err, "window_slices must be at most 1440, e.g. 24 (got 31536000)")

	cfg.WindowSlices = 1440
	require.NoError(t, cfg.Validate())
}

// deadlines::routes is read through the ttft.route dimension: without it
// every series' route is empty, so a route's own deadline was silently
// replaced by deadlines::default in ttft.deadline.margin.
func TestDeadlineRoutesNeedTheRouteDimension(t *testing.T) {
	cfg := defaultConfig()
	cfg.Dimensions = []string{"gen_ai.provider.name", "gen_ai.request.model"}
	cfg.Deadlines.Routes = map[string]time.Duration{"support-bot": 20 * time.Second}
	err := cfg.Validate()
	require.Error(t, err, "deadlines::routes without ttft.route among dimensions was accepted")
	assert.ErrorContains(t, err, "deadlines::routes needs ttft.route among dimensions")
	assert.ErrorContains(t, err, "add ttft.route to dimensions")

	cfg.Dimensions = append(cfg.Dimensions, "ttft.route")
	require.NoError(t, cfg.Validate())
	cfg.Dimensions = []string{"gen_ai.request.model"}
	cfg.Deadlines.Routes = map[string]time.Duration{}
	require.NoError(t, cfg.Validate())
}
