package e2eload

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// builderComponent is one module entry of an ocb configuration.
type builderComponent struct {
	GoMod  string `yaml:"gomod"`
	Import string `yaml:"import"`
}

// builderConfig is what the test reads of an ocb configuration.
type builderConfig struct {
	Receivers, Processors, Exporters, Connectors, Extensions, Providers []builderComponent
	Replaces                                                            []string
}

func readBuilderConfig(t *testing.T, path string) builderConfig {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var c builderConfig
	require.NoError(t, yaml.Unmarshal(b, &c))
	return c
}

// TestVariantCarriesTheDistribution: the benchmark's second distribution
// holds every component of otelcol-ttft at the same version, so a pipeline
// costs the same on either binary (bench/builder-spanmetrics.yaml says why)
// and its pipelines compare components, not builds.
func TestVariantCarriesTheDistribution(t *testing.T) {
	dist := readBuilderConfig(t, "../../builder-config.yaml")
	variant := readBuilderConfig(t, "../builder-spanmetrics.yaml")
	for _, kind := range []struct {
		name      string
		want, got []builderComponent
	}{
		{"receivers", dist.Receivers, variant.Receivers},
		{"processors", dist.Processors, variant.Processors},
		{"exporters", dist.Exporters, variant.Exporters},
		{"connectors", dist.Connectors, variant.Connectors},
		{"extensions", dist.Extensions, variant.Extensions},
		{"providers", dist.Providers, variant.Providers},
	} {
		require.NotEmpty(t, kind.want, kind.name)
		for _, w := range kind.want {
			assert.Contains(t, kind.got, w, "%s of builder-config.yaml missing from bench/builder-spanmetrics.yaml", kind.name)
		}
	}
	for _, r := range dist.Replaces {
		if r == "github.com/otelcol-ttft/otelcol-ttft => ../" {
			continue // the variant's output path is a level deeper
		}
		assert.Contains(t, variant.Replaces, r)
	}
	assert.Contains(t, variant.Replaces, "github.com/otelcol-ttft/otelcol-ttft => ../../")
}
