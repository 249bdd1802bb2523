package genaittftprocessor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/docstest"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

func TestConfigStruct(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(createDefaultConfig()))
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig()
	custom.Derive = derive.Config{
		PromptBands:           []int64{4000, 32000},
		RouteAttribute:        "gateway.route",
		MaxEvents:             500,
		MaxTTFTSeconds:        600,
		MaxDurationSeconds:    7200,
		MaxChunkGapSeconds:    300,
		Producers:             []derive.ProducerMatch{{Name: "acme-gw", ScopePrefixes: []string{"acme.gateway"}, Gateway: true}},
		Rows:                  []derive.Row{{Producer: "acme-gw", Key: "acme.first_token_ms", Meaning: "first_content", Unit: "ms", Rank: 1, Source: "acme docs"}},
		ContentExactProducers: []derive.Producer{{ScopePrefix: "acme.llm", Attribute: "acme.ttfc_ms", Unit: "ms"}},
		SkipScopes:            []string{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "io.opentelemetry.jdbc"},
	}
	custom.DropChunkEvents = true
	custom.SkippedLogInterval = 10 * time.Second

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr []string // every fragment must appear: the key and the fix
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: custom},
		{id: component.NewIDWithName(metadata.Type, "bad_bands"), wantErr: []string{"prompt_bands", "strictly increasing", "[2000, 16000, 64000]"}},
		{id: component.NewIDWithName(metadata.Type, "bad_producer"), wantErr: []string{"content_exact_producers[0]", "unit", "s, ms, us or ns"}},
		{id: component.NewIDWithName(metadata.Type, "bad_skip_scopes"), wantErr: []string{"derive::skip_scopes[1]", `"@ai-sdk" would skip scope "@ai-sdk/otel"`, "holds LLM calls", "longer prefix"}},
		{id: component.NewIDWithName(metadata.Type, "bad_interval"), wantErr: []string{"skipped_log_interval", ">= 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			// confmap.Validate is what the collector runs; the processor's
			// Validate checks its derive block itself.
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, frag := range tt.wantErr {
					assert.Contains(t, err.Error(), frag)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDeriveErrorsAreReportedOnce(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Derive.PromptBands = []int64{16000, 2000}
	err := confmap.Validate(cfg)
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(err.Error(), "prompt_bands"), err.Error())
}

// TestArchitectureDefaults: the processor's keys docs/architecture.md §8
// lists have the values it lists as their defaults.
func TestArchitectureDefaults(t *testing.T) {
	sub, err := docstest.Component(filepath.Join("..", "..", "docs", "architecture.md"), "processors::"+metadata.Type.String())
	require.NoError(t, err, "§8 lists the processor's keys")
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	assert.Equal(t, createDefaultConfig(), cfg, "a value §8 lists is not the default")
}
