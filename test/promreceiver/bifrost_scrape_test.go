// Package promreceiver runs the real contrib prometheus receiver (the
// version builder-config.yaml pins) against a local server that serves the
// captured Bifrost exposition, into the genai_ttft connector, and checks
// what the connector windows across the events a real deployment sees: the
// collector starting in the middle of Bifrost's life, growth, one failed
// scrape, a Bifrost restart, a series that appears after the start.
// Its own module, so the root module does not depend on the receiver.
package promreceiver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/protobuf/proto"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
	"github.com/otelcol-ttft/otelcol-ttft/internal/promfixture"
)

const ttft = promfixture.BifrostTTFT

// pipeline records what the receiver emitted and forwards it to the connector.
type pipeline struct {
	mu      sync.Mutex
	batches []pmetric.Metrics
	conn    consumer.Metrics
}

func (p *pipeline) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	cp := pmetric.NewMetrics()
	md.CopyTo(cp)
	p.mu.Lock()
	p.batches = append(p.batches, cp)
	p.mu.Unlock()
	return p.conn.ConsumeMetrics(ctx, md)
}
func (*pipeline) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (p *pipeline) n() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.batches) }

// ttftPoints returns the TTFT histogram points of batch i.
func (p *pipeline) ttftPoints(i int) []pmetric.HistogramDataPoint {
	p.mu.Lock()
	md := p.batches[i]
	p.mu.Unlock()
	var out []pmetric.HistogramDataPoint
	for r := 0; r < md.ResourceMetrics().Len(); r++ {
		sms := md.ResourceMetrics().At(r).ScopeMetrics()
		for s := 0; s < sms.Len(); s++ {
			ms := sms.At(s).Metrics()
			for m := 0; m < ms.Len(); m++ {
				if ms.At(m).Name() == ttft && ms.At(m).Type() == pmetric.MetricTypeHistogram {
					dps := ms.At(m).Histogram().DataPoints()
					for d := 0; d < dps.Len(); d++ {
						out = append(out, dps.At(d))
					}
				}
			}
		}
	}
	return out
}

// windowed is ttft.window.samples per provider/model/route/failed_over in the
// connector's last flush.
func windowed(sink *consumertest.MetricsSink) map[string]float64 {
	all := sink.AllMetrics()
	got := map[string]float64{}
	if len(all) == 0 {
		return got
	}
	md := all[len(all)-1]
	for r := 0; r < md.ResourceMetrics().Len(); r++ {
		sms := md.ResourceMetrics().At(r).ScopeMetrics()
		for s := 0; s < sms.Len(); s++ {
			ms := sms.At(s).Metrics()
			for m := 0; m < ms.Len(); m++ {
				if ms.At(m).Name() != "ttft.window.samples" {
					continue
				}
				dps := ms.At(m).Gauge().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					a := dps.At(d).Attributes()
					str := func(k string) string {
						if v, ok := a.Get(k); ok {
							return v.AsString()
						}
						return ""
					}
					got[fmt.Sprintf("%s/%s/%s/%s", str("gen_ai.provider.name"), str("gen_ai.request.model"), str("ttft.route"), str("ttft.failed_over"))] += float64(dps.At(d).IntValue())
				}
			}
		}
	}
	return got
}

func total(m map[string]float64) (t float64) {
	for _, v := range m {
		t += v
	}
	return t
}

// series renders the TTFT family with the series keep selects, each with n
// fresh samples in (0.25 s, 0.5 s] — a Bifrost that restarted — plus, when
// newModel is set, a copy of the first kept series under that model.
func series(t *testing.T, fixture []byte, n map[string]uint64, newModel string, newN uint64) []byte {
	t.Helper()
	fams, err := promfixture.Parse(bytes.NewReader(fixture))
	require.NoError(t, err)
	f := proto.Clone(fams[ttft]).(*dto.MetricFamily)
	fresh := func(m *dto.Metric, c uint64) {
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			b.CumulativeCount = proto.Uint64(0)
			if b.GetUpperBound() >= 0.5 {
				b.CumulativeCount = proto.Uint64(c)
			}
		}
		h.SampleCount = proto.Uint64(c)
		h.SampleSum = proto.Float64(0.4 * float64(c))
	}
	var ms []*dto.Metric
	for _, m := range f.GetMetric() {
		if c, ok := n[key(m)]; ok {
			fresh(m, c)
			ms = append(ms, m)
		}
	}
	if newModel != "" {
		m := proto.Clone(ms[0]).(*dto.Metric)
		for _, l := range m.GetLabel() {
			if l.GetName() == "model" {
				l.Value = proto.String(newModel)
			}
		}
		fresh(m, newN)
		ms = append(ms, m)
	}
	f.Metric = ms
	var buf bytes.Buffer
	require.NoError(t, promfixture.Write(&buf, map[string]*dto.MetricFamily{ttft: f}))
	return buf.Bytes()
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// key names a Bifrost series as the connector's window does:
// provider/model/route/failed_over.
func key(m *dto.Metric) string {
	return fmt.Sprintf("%s/%s/%s/%v", label(m, "provider"), label(m, "model"), label(m, "routing_rule_name"), label(m, "fallback_index") != "0")
}

func grow(t *testing.T, b []byte, n int) []byte {
	t.Helper()
	out, err := promfixture.Grow(b, ttft, n, 0.3)
	require.NoError(t, err)
	return out
}

// TestRealReceiverIntoConnector: what the prometheus receiver v0.165.1
// delivers from Bifrost's exposition, and what the connector windows of it.
func TestRealReceiverIntoConnector(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "bifrost-gateway", "bifrost-metrics.prom"))
	require.NoError(t, err)
	fams, err := promfixture.Parse(bytes.NewReader(fixture))
	require.NoError(t, err)
	var keys []string
	for _, m := range fams[ttft].GetMetric() {
		keys = append(keys, key(m))
	}
	require.Len(t, keys, 15)
	const normal, tool = "openai/scn-normal//false", "openai/scn-tool//false"

	// One response per scrape, in order.
	script := []struct {
		name string
		body []byte // nil: the scrape fails (503)
	}{
		{"0 collector starts mid-life: baseline", fixture},
		{"1 +50 per series", grow(t, fixture, 50)},
		{"2 one failed scrape", nil},
		{"3 +50 more per series (during and after the failure)", grow(t, fixture, 100)},
		{"4 Bifrost restarted: only scn-normal, 5 fresh samples", series(t, fixture, map[string]uint64{normal: 5}, "", 0)},
		{"5 scn-normal 10, scn-tool back with 3", series(t, fixture, map[string]uint64{normal: 10, tool: 3}, "", 0)},
		{"6 a new model appears with 4", series(t, fixture, map[string]uint64{normal: 10, tool: 3}, "scn-new", 4)},
	}
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(scrapes.Load())
		if i >= len(script) {
			i = len(script) - 1
		}
		defer scrapes.Add(1)
		if script[i].body == nil {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(script[i].body)
	}))
	defer srv.Close()

	pipe, sink, stop := scrapeInto(t, srv.URL, "bifrost", false)
	require.Eventually(t, func() bool { return pipe.n() >= len(script) }, 60*time.Second, 10*time.Millisecond)
	stop()

	// What the receiver delivered, scrape by scrape.
	for i, s := range script {
		var live, stale, withStart int
		for _, dp := range pipe.ttftPoints(i) {
			switch {
			case dp.Flags().NoRecordedValue():
				stale++
			default:
				live++
			}
			if dp.StartTimestamp() != 0 {
				withStart++
			}
		}
		t.Logf("scrape %-58q TTFT points: %2d live, %2d NoRecordedValue, %d with a StartTimestamp", s.name, live, stale, withStart)
	}
	for _, dp := range pipe.ttftPoints(0) {
		require.Zero(t, dp.StartTimestamp(), "text exposition without _created: no start time")
	}
	require.Len(t, pipe.ttftPoints(2), 15, "a failed scrape marks every series stale")
	for _, dp := range pipe.ttftPoints(2) {
		require.True(t, dp.Flags().NoRecordedValue())
	}

	got := windowed(sink)
	want := map[string]float64{}
	for _, k := range keys {
		want[k] = 100 // +50 at scrape 1, +50 at scrape 3; none of the fixture's own
	}
	want[normal] += 10 // 5 + 5 after the restart
	want[tool] += 3    // back after the restart with 3
	want["openai/scn-new//false"] = 4
	t.Logf("windowed: %v", got)
	for _, k := range append(keys, "openai/scn-new//false") {
		if got[k] != want[k] {
			t.Errorf("%-40s windowed %4v, want %4v", k, got[k], want[k])
		}
	}
	t.Logf("windowed in all %v, want %v", total(got), total(want))
}

// scrapeInto starts a genai_ttft connector (flushing every 50 ms) and,
// feeding it through a pipeline that keeps every batch, the real prometheus
// receiver scraping url every 300 ms as job (native histograms if asked).
// stop shuts the receiver down, lets the connector flush once more, and
// shuts it down.
func scrapeInto(t *testing.T, url, job string, native bool) (*pipeline, *consumertest.MetricsSink, func()) {
	t.Helper()
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
	scrape := map[string]any{
		"job_name": job, "scrape_interval": "300ms", "scrape_timeout": "250ms",
		"static_configs": []any{map[string]any{"targets": []any{strings.TrimPrefix(url, "http://")}}},
	}
	if native {
		scrape["scrape_native_histograms"] = true
	}
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"config": map[string]any{
		"scrape_configs": []any{scrape},
	}}).Unmarshal(rcfg))
	recv, err := rf.CreateMetrics(context.Background(), receivertest.NewNopSettings(rf.Type()), rcfg, pipe)
	require.NoError(t, err)
	require.NoError(t, recv.Start(context.Background(), componenttest.NewNopHost()))
	return pipe, sink, func() {
		require.NoError(t, recv.Shutdown(context.Background()))
		time.Sleep(200 * time.Millisecond)
		require.NoError(t, conn.Shutdown(context.Background()))
	}
}
