package llmgatewaylogreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func TestFactoryTypeAndStability(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "llm_gateway_log", f.Type().String())
	assert.Equal(t, component.StabilityLevelAlpha, f.LogsStability())
	require.NoError(t, componenttest.CheckConfigStruct(f.CreateDefaultConfig()))
}

func TestLifecycle(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.csv"), []byte("ttft_ms,status\n250,ok\n"), 0o600))
	for _, format := range []string{FormatInfroCSV, FormatBifrost, FormatLiteLLM} {
		t.Run(format, func(t *testing.T) {
			cfg := testConfig(t, format, filepath.Join(dir, "*"))
			rcv, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(typeStr), cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, rcv.Shutdown(context.Background()))
			require.NoError(t, rcv.Shutdown(context.Background()), "Shutdown is idempotent")
		})
	}
}

func TestShutdownWithoutStart(t *testing.T) {
	cfg := testConfig(t, FormatInfroCSV, filepath.Join(t.TempDir(), "*.csv"))
	rcv, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(typeStr), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, rcv.Shutdown(context.Background()))
}

func TestInvalidMappingFailsAtCreateNotAtFirstRow(t *testing.T) {
	cfg := testConfig(t, FormatCSV, filepath.Join(t.TempDir(), "*.csv"))
	cfg.Mapping.TTFTUnit = "fortnights" // what Validate would reject
	_, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(typeStr), cfg, consumertest.NewNop())
	require.Error(t, err)
}
