package llmgatewaylogreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/docstest"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig()
	sub, err := cm.Sub(component.NewIDWithName(typeStr, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	require.NoError(t, def.Validate())
	assert.Equal(t, FormatInfroCSV, def.Format)
	assert.Equal(t, "beginning", def.InputConfig.StartAt, "exports written before start-up are read")
	assert.Nil(t, def.StorageID)

	infro := loadConfig(t, "infro")
	require.NoError(t, infro.Validate())
	require.NotNil(t, infro.StorageID)
	assert.Equal(t, "file_storage", infro.StorageID.String())
	assert.Equal(t, []int64{4000, 32000}, infro.Derive.PromptBands)
	assert.Equal(t, []string{"/var/log/llm-gateway/*.tmp.csv"}, infro.InputConfig.Exclude)

	bifrost := loadConfig(t, "bifrost")
	require.NoError(t, bifrost.Validate())
	assert.Equal(t, "time_to_first_token_ms", bifrost.Mapping.TTFT)
	assert.Equal(t, FallbacksConfig{Wait: 2 * time.Minute, MaxPending: 500}, bifrost.Fallbacks)

	litellm := loadConfig(t, "litellm")
	require.NoError(t, litellm.Validate(), "json formats may start at the end")
	assert.Equal(t, "end", litellm.InputConfig.StartAt)

	gcsv := loadConfig(t, "generic_csv")
	require.NoError(t, gcsv.Validate())
	assert.Equal(t, "\t", gcsv.Delimiter)
	assert.Equal(t, []string{"no_first_token"}, gcsv.Mapping.StatusValues["timeout_first_token"])

	gjson := loadConfig(t, "generic_json")
	require.NoError(t, gjson.Validate())
	assert.True(t, gjson.KeepRow)
	assert.Equal(t, "timing.ttft_ns", gjson.Mapping.TTFT)
}

func TestValidateNamesTheKeyAndTheFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"unknown format", func(c *Config) { c.Format = "nginx" }, `format: unknown format "nginx"`},
		{"csv without a ttft column", func(c *Config) { c.Format = FormatCSV }, "mapping::ttft: format csv needs"},
		{"json without a ttft field", func(c *Config) { c.Format = FormatJSON; c.Mapping.StartTime = "t" }, "mapping::ttft: format json needs"},
		{"no include", func(c *Config) { c.InputConfig.Include = nil }, "include: at least one glob"},
		{"bad include glob", func(c *Config) { c.InputConfig.Include = []string{"/logs/[a-"} }, `include[0]: "/logs/[a-" is not a valid glob`},
		{"bad exclude glob", func(c *Config) { c.InputConfig.Exclude = []string{"[z"} }, `exclude[0]`},
		{"csv from the end cannot see headers", func(c *Config) { c.InputConfig.StartAt = "end" }, "start_at: end cannot read CSV headers"},
		{"bad start_at", func(c *Config) { c.InputConfig.StartAt = "middle" }, `start_at: "middle" is invalid`},
		{"compressed csv", func(c *Config) { c.InputConfig.Compression = "gzip" }, `compression: "gzip" cannot be combined with CSV headers`},
		{"two-character delimiter", func(c *Config) { c.Delimiter = ";;" }, "delimiter:"},
		{"bad ttft unit", func(c *Config) { c.Mapping.TTFTUnit = "minutes" }, "mapping::ttft_unit"},
		{"bad measured_at", func(c *Config) { c.Mapping.MeasuredAt = "headers" }, "mapping::measured_at"},
		{"unknown outcome in status_values", func(c *Config) { c.Mapping.StatusValues = map[string][]string{"great": {"ok"}} }, "mapping::status_values: unknown outcome"},
		{"bad time format", func(c *Config) { c.Mapping.StartTimeFormat = "iso" }, "mapping::start_time_format"},
		{"bad prompt bands", func(c *Config) { c.Derive.PromptBands = []int64{16000, 2000} }, "derive::prompt_bands"},
		{"no fallback wait", func(c *Config) { c.Fallbacks.Wait = 0 }, "fallbacks::wait: 0s must be > 0"},
		{"no room for held requests", func(c *Config) { c.Fallbacks.MaxPending = 0 }, "fallbacks::max_pending: 0 must be >= 1"},
		{"max_ttft above max_duration", func(c *Config) { c.Derive.MaxTTFTSeconds = 100000 }, "raise derive::max_duration_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			cfg.InputConfig.Include = []string{"/var/log/*.csv"}
			tc.edit(cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDefaultConfigNeedsOnlyInclude(t *testing.T) {
	cfg := createDefaultConfig()
	require.Error(t, cfg.Validate())
	cfg.InputConfig.Include = []string{"/var/log/*.csv"}
	require.NoError(t, cfg.Validate())
}

// TestArchitectureDefaults: docs/architecture.md §8's start_at and format
// are the receiver's defaults, and every key it lists is one of the
// receiver's (its include and storage are examples).
func TestArchitectureDefaults(t *testing.T) {
	sub, err := docstest.Component(filepath.Join("..", "..", "docs", "architecture.md"), "receivers::"+typeStr.String())
	require.NoError(t, err, "§8 lists the receiver's keys")
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg), "every key §8 lists is one of the receiver's")
	def := createDefaultConfig()
	assert.Equal(t, def.InputConfig.StartAt, cfg.InputConfig.StartAt)
	assert.Equal(t, def.Format, cfg.Format)
	assert.Equal(t, def.Mapping, cfg.Mapping)
	assert.Equal(t, def.InputConfig.FlushPeriod, cfg.InputConfig.FlushPeriod)
	assert.Equal(t, def.RetryOnFailure.Enabled, cfg.RetryOnFailure.Enabled)
}
