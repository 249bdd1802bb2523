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

// A duration written as a bare number is read by the collector as
// nanoseconds (skipped_log_interval: 60 is 60 ns); it fails at start-up
// naming the key and the unit to write.
func TestUnitlessDurationFails(t *testing.T) {
	cfg := createDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"skipped_log_interval": 60}).Unmarshal(cfg)
	if err == nil {
		err = cfg.Validate()
	}
	require.Error(t, err, "skipped_log_interval: 60 was read as %v", cfg.SkippedLogInterval)
	assert.ErrorContains(t, err, "skipped_log_interval: 60 has no unit")
	assert.ErrorContains(t, err, "e.g. 60s")

	cfg = createDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"skipped_log_interval": 0}).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
}

// An empty entry in a producer's scope_prefixes, scope_contains or
// service_names (an unset ${env:...} expands to one) matches every span:
// with gateway: true every app's call was recorded as ttft.observer=gateway
// and read with that producer's rows. skip_scopes and
// content_exact_producers already refuse an empty prefix.
func TestEmptyProducerMatchFails(t *testing.T) {
	for _, tc := range []struct {
		p    derive.ProducerMatch
		want string
	}{
		{derive.ProducerMatch{Name: "acme-gw", ScopePrefixes: []string{"acme.gateway", ""}, Gateway: true}, "derive::producers[0]::scope_prefixes[1] is empty"},
		{derive.ProducerMatch{Name: "acme-gw", ScopeContains: []string{""}}, "derive::producers[0]::scope_contains[0] is empty"},
		{derive.ProducerMatch{Name: "acme-gw", ServiceNames: []string{""}}, "derive::producers[0]::service_names[0] is empty"},
	} {
		cfg := createDefaultConfig()
		cfg.Derive.Producers = []derive.ProducerMatch{tc.p}
		err := cfg.Validate()
		require.Error(t, err, "%+v was accepted", tc.p)
		assert.ErrorContains(t, err, tc.want)
		assert.ErrorContains(t, err, "or remove it")
	}
}

// The route attribute is read as the route and as nothing else: with
// route_attribute: gen_ai.request.model every record's model was empty (and
// its route the model), silently; a record key (ttft.outcome) would be lost
// the same way. It fails at start-up.
func TestRouteAttributeReadAsSomethingElseFails(t *testing.T) {
	for attr, want := range map[string]string{
		"gen_ai.request.model": `derive::route_attribute "gen_ai.request.model" is read as model by the producer table`,
		"gen_ai.provider.name": `derive::route_attribute "gen_ai.provider.name" is read as provider`,
		"ttft.outcome":         `derive::route_attribute "ttft.outcome" is a key of the request record`,
	} {
		cfg := createDefaultConfig()
		cfg.Derive.RouteAttribute = attr
		err := cfg.Validate()
		require.Error(t, err, "route_attribute %q was accepted", attr)
		assert.ErrorContains(t, err, want)
		assert.ErrorContains(t, err, "e.g. ttft.route")
	}
	for _, attr := range []string{"ttft.route", "gateway.route", ""} {
		cfg := createDefaultConfig()
		cfg.Derive.RouteAttribute = attr
		require.NoError(t, cfg.Validate(), attr)
	}
}
