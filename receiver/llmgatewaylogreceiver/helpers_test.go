package llmgatewaylogreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// testConfig reads files matching glob from the beginning, polling fast.
func testConfig(t testing.TB, format, glob string) *Config {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.Format = format
	cfg.InputConfig.Include = []string{glob}
	cfg.InputConfig.PollInterval = 20 * time.Millisecond
	// A failed Bifrost row waits for its fallback row; not a minute here.
	cfg.Fallbacks.Wait = 100 * time.Millisecond
	return cfg
}

// harness runs one receiver with observable telemetry and logs.
type harness struct {
	rcv    receiver.Logs
	sink   *consumertest.LogsSink
	reader *sdkmetric.ManualReader
	logs   *observer.ObservedLogs
}

func newHarness(t testing.TB, cfg *Config) *harness {
	t.Helper()
	h := &harness{sink: new(consumertest.LogsSink), reader: sdkmetric.NewManualReader()}
	set := receivertest.NewNopSettings(typeStr)
	core, logs := observer.New(zap.DebugLevel)
	h.logs = logs
	set.Logger = zap.New(core)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	require.NoError(t, cfg.Validate())
	rcv, err := NewFactory().CreateLogs(context.Background(), set, cfg, h.sink)
	require.NoError(t, err)
	h.rcv = rcv
	return h
}

func (h *harness) start(t testing.TB) {
	t.Helper()
	require.NoError(t, h.rcv.Start(context.Background(), componenttest.NewNopHost()))
}

func (h *harness) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, h.rcv.Shutdown(context.Background()))
}

// waitRecords waits until the sink holds n log records, and fails if more arrive.
func (h *harness) waitRecords(t testing.TB, n int) []plog.LogRecord {
	t.Helper()
	require.Eventually(t, func() bool { return h.sink.LogRecordCount() >= n }, 30*time.Second, 10*time.Millisecond,
		"want %d records, have %d", n, h.sink.LogRecordCount())
	// Give a stray extra record the chance to show up before counting exactly.
	time.Sleep(150 * time.Millisecond)
	require.Equal(t, n, h.sink.LogRecordCount())
	return records(h.sink)
}

func records(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

// skipped returns the rows_skipped counter by reason.
func (h *harness) skipped(t testing.TB) map[string]int64 {
	return counterByAttr(t, h.reader, metricRowsSkipped, "reason")
}

func counterByAttr(t testing.TB, reader *sdkmetric.ManualReader, name, key string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok)
			for _, dp := range sum.DataPoints {
				v, _ := dp.Attributes.Value(attribute.Key(key))
				out[v.AsString()] += dp.Value
			}
		}
	}
	return out
}

func testdata(name string) string { return filepath.Join("testdata", name) }
