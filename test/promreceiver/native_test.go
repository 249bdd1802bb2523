package promreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
)

// TestRealReceiverNativeHistogram: a vLLM-named native histogram served by
// client_golang (protobuf, created timestamp set), scraped with
// scrape_native_histograms: how it arrives and what the connector windows.
func TestRealReceiverNativeHistogram(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vllm:time_to_first_token_seconds", Help: "ttft",
		NativeHistogramBucketFactor: 1.1, NativeHistogramZeroThreshold: 1e-9,
	}, []string{"model_name"})
	reg.MustRegister(h)
	for i := 0; i < 30; i++ {
		h.WithLabelValues("m").Observe(0.3) // before the collector
	}
	var fail atomic.Bool
	var scrapes atomic.Int64
	ph := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer scrapes.Add(1)
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		ph.ServeHTTP(w, r)
	}))
	defer srv.Close()

	cf := genaittftconnector.NewFactory()
	ccfg := cf.CreateDefaultConfig().(*genaittftconnector.Config)
	ccfg.FlushInterval = 50 * time.Millisecond
	sink := new(consumertest.MetricsSink)
	conn, err := cf.CreateMetricsToMetrics(context.Background(), connectortest.NewNopSettings(cf.Type()), ccfg, sink)
	require.NoError(t, err)
	require.NoError(t, conn.Start(context.Background(), componenttest.NewNopHost()))
	pipe := &pipeline{conn: conn}
	rf := prometheusreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*prometheusreceiver.Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"config": map[string]any{
		"scrape_configs": []any{map[string]any{
			"job_name": "vllm", "scrape_interval": "300ms", "scrape_timeout": "250ms", "scrape_native_histograms": true,
			"static_configs": []any{map[string]any{"targets": []any{strings.TrimPrefix(srv.URL, "http://")}}},
		}},
	}}).Unmarshal(rcfg))
	recv, err := rf.CreateMetrics(context.Background(), receivertest.NewNopSettings(rf.Type()), rcfg, pipe)
	require.NoError(t, err)
	require.NoError(t, recv.Start(context.Background(), componenttest.NewNopHost()))

	wait := func(n int64) {
		t.Helper()
		require.Eventually(t, func() bool { return scrapes.Load() >= n && int64(pipe.n()) >= n }, 20*time.Second, 5*time.Millisecond)
	}
	wait(1) // baseline: 30 from before
	for i := 0; i < 20; i++ {
		h.WithLabelValues("m").Observe(0.6)
	}
	wait(2)
	fail.Store(true)
	n := scrapes.Load()
	wait(n + 1)
	for i := 0; i < 10; i++ {
		h.WithLabelValues("m").Observe(0.6)
	}
	fail.Store(false)
	n = scrapes.Load()
	wait(n + 2)
	require.NoError(t, recv.Shutdown(context.Background()))
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, conn.Shutdown(context.Background()))

	for i := 0; i < pipe.n(); i++ {
		pipe.mu.Lock()
		md := pipe.batches[i]
		pipe.mu.Unlock()
		rms := md.ResourceMetrics()
		for r := 0; r < rms.Len(); r++ {
			for s := 0; s < rms.At(r).ScopeMetrics().Len(); s++ {
				ms := rms.At(r).ScopeMetrics().At(s).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if m.Name() != "vllm:time_to_first_token_seconds" {
						continue
					}
					if m.Type() != pmetric.MetricTypeExponentialHistogram {
						t.Logf("batch %d: %s arrives as %s", i, m.Name(), m.Type())
						continue
					}
					dp := m.ExponentialHistogram().DataPoints().At(0)
					t.Logf("batch %d: exponential, %s, scale %d, count %d, start %d, NoRecordedValue %v",
						i, m.ExponentialHistogram().AggregationTemporality(), dp.Scale(), dp.Count(), dp.StartTimestamp(), dp.Flags().NoRecordedValue())
				}
			}
		}
	}
	all := sink.AllMetrics()
	got := windowed(sink)
	t.Logf("windowed: %v (%d flushes); want 30 (20 + 10 across one failed scrape)", got, len(all))
	require.Equal(t, 30.0, total(got))
}
