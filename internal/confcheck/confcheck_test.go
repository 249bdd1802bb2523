package confcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

type inner struct {
	Max time.Duration `mapstructure:"max"`
}

type Squashed struct {
	Poll time.Duration `mapstructure:"poll_interval"`
}

type cfg struct {
	Squashed `mapstructure:",squash"`
	Flush    time.Duration            `mapstructure:"flush_interval"`
	Policies []inner                  `mapstructure:"policies"`
	Routes   map[string]time.Duration `mapstructure:"routes"`
	Ptr      *inner                   `mapstructure:"ptr"`
	Count    int                      `mapstructure:"count"`
}

func TestUnitlessDurations(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"flush_interval": 15,
		"poll_interval":  200,
		"policies":       []any{map[string]any{"max": "60s"}, map[string]any{"max": 60}},
		"routes":         map[string]any{"a": 1.5, "b": "2s", "c": 0},
		"ptr":            map[string]any{"max": 3},
		"count":          7,
	})
	err := UnitlessDurations(conf, &cfg{})
	require.Error(t, err)
	for _, want := range []string{
		"flush_interval: 15 has no unit and would be read as 15ns: write the unit, e.g. 15s",
		"poll_interval: 200 has no unit",
		"policies[1]::max: 60 has no unit",
		"routes::a: 1.5 has no unit",
		"ptr::max: 3 has no unit",
	} {
		assert.ErrorContains(t, err, want)
	}
	assert.NotContains(t, err.Error(), "policies[0]")
	assert.NotContains(t, err.Error(), "routes::b")
	assert.NotContains(t, err.Error(), "routes::c")
	assert.NotContains(t, err.Error(), "count")

	require.NoError(t, UnitlessDurations(confmap.NewFromStringMap(map[string]any{"flush_interval": "15s", "routes": map[string]any{"x": "0s"}}), &cfg{}))
}
