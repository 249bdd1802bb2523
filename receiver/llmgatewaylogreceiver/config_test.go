package llmgatewaylogreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
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

// A duration written as a bare number is read by the collector as
// nanoseconds: fallbacks::wait: 60 holds a failed row 60 ns, so its
// fallback row is never folded in; poll_interval: 200 polls the files every
// 200 ns. It fails at start-up naming the key and the unit to write.
func TestUnitlessDurationFails(t *testing.T) {
	for _, tc := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"fallbacks": map[string]any{"wait": 60}}, "fallbacks::wait: 60 has no unit"},
		{map[string]any{"poll_interval": 200}, "poll_interval: 200 has no unit"},
		{map[string]any{"retry_on_failure": map[string]any{"max_elapsed_time": 300}}, "retry_on_failure::max_elapsed_time: 300 has no unit"},
	} {
		raw := map[string]any{"include": []any{"/var/log/llm-gateway/*.csv"}}
		for k, v := range tc.raw {
			raw[k] = v
		}
		cfg := createDefaultConfig()
		err := confmap.NewFromStringMap(raw).Unmarshal(cfg)
		if err == nil {
			err = cfg.Validate()
		}
		require.Error(t, err, "%v was accepted", tc.raw)
		assert.ErrorContains(t, err, tc.want)
		assert.ErrorContains(t, err, "write the unit, e.g.")
	}
	cfg := createDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"include": []any{"/x/*.csv"}, "force_flush_period": 0, "fallbacks": map[string]any{"wait": "1m"}}).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
}

// One word under two outcomes went to whichever outcome the map range
// visited last: "done" rows were complete on one start and error on the
// next (176 to 24 over 200 builds). It fails at start-up naming both.
func TestStatusWordUnderTwoOutcomesFails(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.InputConfig.Include = []string{"/var/log/llm-gateway/*.csv"}
	cfg.Format = FormatCSV
	cfg.Mapping = MappingConfig{TTFT: "ttft_ms", Status: "status", StatusValues: map[string][]string{
		"complete": {"done"},
		"error":    {"Done "},
	}}
	err := cfg.Validate()
	require.Error(t, err, "a word under complete and error was accepted")
	assert.ErrorContains(t, err, `mapping::status_values::error: "Done " is also listed under complete`)
	assert.ErrorContains(t, err, "keep it under one outcome")

	cfg.Mapping.StatusValues = map[string][]string{"complete": {"done", "DONE"}, "error": {"failed"}}
	require.NoError(t, cfg.Validate())
}

// mapping::start_time_format took any text with a digit in it as a Go
// layout: a layout written in another convention, or with an example date
// instead of Go's reference time, passed start-up and then every row was
// skipped as bad_timestamp. It fails at start-up with the key and how a Go
// layout is written.
func TestStartTimeFormatWithoutDateFails(t *testing.T) {
	for _, layout := range []string{"YYYY-MM-DD HH:mm:ss.000", "2024-01-15 10:30:00", "%Y-%m-%d %H:%M:%S.000", "15:04:05"} {
		cfg := createDefaultConfig()
		cfg.InputConfig.Include = []string{"/var/log/llm-gateway/*.csv"}
		cfg.Format = FormatCSV
		cfg.Mapping = MappingConfig{TTFT: "ttft_ms", StartTime: "started", StartTimeFormat: layout}
		err := cfg.Validate()
		require.Error(t, err, "start_time_format %q was accepted", layout)
		assert.ErrorContains(t, err, "mapping::start_time_format:")
		assert.ErrorContains(t, err, "e.g. 2006-01-02 15:04:05")
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "02/01/2006 15:04", "2006-01-02T15:04:05.000Z07:00", "Jan _2 2006 15:04:05 MST", "2006-002 15:04"} {
		cfg := createDefaultConfig()
		cfg.InputConfig.Include = []string{"/var/log/llm-gateway/*.csv"}
		cfg.Format = FormatCSV
		cfg.Mapping = MappingConfig{TTFT: "ttft_ms", StartTime: "started", StartTimeFormat: layout}
		require.NoError(t, cfg.Validate(), layout)
	}
}
