package promreceiver

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
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

	pipe, sink, stop := scrapeInto(t, srv.URL, "vllm", true)

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
	stop()

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
