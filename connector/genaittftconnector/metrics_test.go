package genaittftconnector

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/promfixture"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// newMetricsConnector builds the shared connector through its metrics→metrics
// factory function, with a fake clock and own telemetry.
func newMetricsConnector(t testing.TB, cfg *Config, clock clockwork.Clock, tel *componenttest.Telemetry) (*ttftConnector, *consumertest.MetricsSink) {
	t.Helper()
	set := testSettings(tel)
	sink := new(consumertest.MetricsSink)
	mc, err := NewFactory().CreateMetricsToMetrics(clockwork.AddToContext(context.Background(), clock), set, cfg, sink)
	require.NoError(t, err)
	c := mc.(*metricsConnector).conn
	t.Cleanup(func() { require.NoError(t, mc.Shutdown(context.Background())) })
	return c, sink
}

// promToMetrics converts a parsed exposition's histograms into pdata the way
// the prometheus receiver does: cumulative explicit-bucket histograms with
// per-bucket counts, labels as data point attributes.
func promToMetrics(fams map[string]*dto.MetricFamily, start, ts time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "bifrost")
	rm.Resource().Attributes().PutStr("service.instance.id", "127.0.0.1:8080")
	sm := rm.ScopeMetrics().AppendEmpty()
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := fams[n]
		if f.GetType() != dto.MetricType_HISTOGRAM {
			m := sm.Metrics().AppendEmpty()
			m.SetName(n)
			g := m.SetEmptyGauge()
			for range f.GetMetric() {
				g.DataPoints().AppendEmpty().SetDoubleValue(1)
			}
			continue
		}
		m := sm.Metrics().AppendEmpty()
		m.SetName(n)
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for _, pm := range f.GetMetric() {
			dp := h.DataPoints().AppendEmpty()
			for _, l := range pm.GetLabel() {
				dp.Attributes().PutStr(l.GetName(), l.GetValue())
			}
			if !start.IsZero() {
				dp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			}
			dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
			ph := pm.GetHistogram()
			dp.SetCount(ph.GetSampleCount())
			dp.SetSum(ph.GetSampleSum())
			var prev uint64
			for _, b := range ph.GetBucket() {
				if math.IsInf(b.GetUpperBound(), 1) {
					continue
				}
				dp.ExplicitBounds().Append(b.GetUpperBound())
				dp.BucketCounts().Append(b.GetCumulativeCount() - prev)
				prev = b.GetCumulativeCount()
			}
			dp.BucketCounts().Append(ph.GetSampleCount() - prev)
		}
	}
	return md
}

func readFixture(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "bifrost-gateway", "bifrost-metrics.prom"))
	require.NoError(t, err)
	return raw
}

func parseProm(t testing.TB, raw []byte) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := promfixture.Parse(bytesReader(raw))
	require.NoError(t, err)
	return fams
}

// TestBifrostExpositionRecommendations feeds the real Bifrost exposition,
// then a grown one (2,000 more samples per series), and checks what comes
// out per provider, model and routing rule.
func TestBifrostExpositionRecommendations(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	raw := readFixture(t)
	grown, err := promfixture.Grow(raw, promfixture.BifrostTTFT, 2000, 0.3)
	require.NoError(t, err)
	ctx := context.Background()

	// The receiver knows no start time for a classic histogram: the first
	// scrape is the baseline, only what grew counts.
	require.NoError(t, c.ConsumeMetrics(ctx, promToMetrics(parseProm(t, raw), time.Time{}, testStart)))
	clock.Advance(15 * time.Second)
	require.NoError(t, c.ConsumeMetrics(ctx, promToMetrics(parseProm(t, grown), time.Time{}, clock.Now())))
	md := flushNow(t, c, sink)

	samples := pointsWith(points(md, "ttft.window.samples"), map[string]any{attrResolution: "explicit_buckets"})
	require.Len(t, samples, 15, "one window per provider × model × rule × failed_over; the fixture has 15 series, each its own target")
	for _, p := range samples {
		assert.Equal(t, 2000.0, p.value, "%v: only the growth is windowed", p.attrs)
		assert.Equal(t, "unknown", p.attrs[record.KeyPromptBand])
		assert.Equal(t, record.ObserverGateway, p.attrs[record.KeyObserver])
		want := record.MeasuredAtFirstContent
		if p.attrs[record.KeyProvider] == "anthropic" {
			want = record.MeasuredAtFirstChunk
		}
		assert.Equal(t, want, p.attrs[record.KeyMeasuredAt], "%v", p.attrs)
	}

	// openai/scn-normal: mean 300 ms, σ 0.3 → p99 ≈ 600 ms, in (0.5 s, 1 s].
	normal := map[string]any{record.KeyProvider: "openai", record.KeyModel: "scn-normal", attrFailedOver: false}
	assert.Equal(t, 0.5, value(t, md, "ttft.quantile", attrsWith(normal, attrQuantile, "0.99", attrQuantileBound, "lower")))
	assert.Equal(t, 1.0, value(t, md, "ttft.quantile", attrsWith(normal, attrQuantile, "0.99", attrQuantileBound, "upper")))
	assert.Equal(t, 1.3, value(t, md, "ttft.timeout.recommended", attrsWith(normal, attrPolicy, "gateway_cutoff")))
	assert.LessOrEqual(t, value(t, md, "ttft.timeout.cut_ratio", attrsWith(normal, attrPolicy, "gateway_cutoff")), 0.01)

	// Routing rules become ttft.route; fallback_index 1 is a failed-over attempt.
	stall := map[string]any{record.KeyRoute: "stall-guard", record.KeyModel: "scn-stall"}
	assert.Equal(t, 12.5, value(t, md, "ttft.timeout.recommended", attrsWith(stall, attrPolicy, "gateway_cutoff")),
		"stall-guard: ~5 s TTFT, p99 in (5 s, 10 s] → 10 × 1.25")
	rl := pointsWith(points(md, "ttft.window.samples"), map[string]any{record.KeyRoute: "ratelimit-guard"})
	require.Len(t, rl, 1)
	assert.Equal(t, true, rl[0].attrs[attrFailedOver], "the rule's only series is its fallback attempt")

	// Anthropic stops at message_start: first_chunk, so the default policies
	// (first_content only) recommend nothing from it, but its quantiles show.
	anth := map[string]any{record.KeyProvider: "anthropic", record.KeyModel: "scn-normal", attrFailedOver: false}
	assert.Empty(t, pointsWith(points(md, "ttft.timeout.recommended"), anth))
	assert.Len(t, pointsWith(points(md, "ttft.quantile"), attrsWith(anth, attrQuantile, "0.99")), 2, "lower and upper bound")

	// Histogram inputs claim no censoring and no outcomes.
	assert.Empty(t, pointsWith(points(md, "ttft.window.samples"), map[string]any{attrCensored: true, attrResolution: "explicit_buckets"}))
	_, has := findMetric(md, "ttft.requests")
	assert.False(t, has)

	assert.Equal(t, map[string]int64{"metrics": 15 * 2000}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_records", "signal"))
	assert.Equal(t, map[string]int64{pointBaseline: 15, pointWindowed: 15}, sumByAttr(t, tel, "otelcol_connector_genai_ttft_histogram_points", "result"))
	skipped := sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")
	assert.Positive(t, skipped[skipNotTTFTMetric], "every other metric of the exposition is counted, not aggregated")
}

// TestBifrostOwnPushIsNoTTFT: Bifrost's otel plugin pushes a histogram of
// the same name under its meter "bifrost", built from the gap between its
// first and second chunk (testdata/fixtures/bifrost-gateway): the same
// points under that scope are skipped (scope_skipped), none windowed; the
// scraped ones (the prometheus receiver's scope) are read, as above.
func TestBifrostOwnPushIsNoTTFT(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	cfg := defaultConfig()
	cfg.Histograms.InitialValue = initialKeep // every point would count
	c, sink := newMetricsConnector(t, cfg, clockwork.NewFakeClockAt(testStart), tel)
	md := promToMetrics(parseProm(t, readFixture(t)), testStart.Add(-time.Minute), testStart)
	ttft := 0
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			sm.Scope().SetName("bifrost")
			for _, m := range sm.Metrics().All() {
				if m.Name() == "bifrost_stream_first_token_latency_seconds" {
					ttft += dataPointCount(m)
				}
			}
		}
	}
	require.Equal(t, 15, ttft)
	require.NoError(t, c.ConsumeMetrics(context.Background(), md))
	out := flushNow(t, c, sink)
	assert.Empty(t, points(out, "ttft.window.samples"))
	assert.Equal(t, int64(ttft), sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")[skipScopeSkipped])
}

func attrsWith(m map[string]any, kv ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestOpenLITServerMetricIsNotAServers feeds OpenLIT's real metrics (the
// fixtures' openlit-openai/normal capture), as OTLP and as a Prometheus
// scrape names them (the prometheus receiver keeps the scope from
// otel_scope_name). OpenLIT, a client library, emits the semconv server
// metric gen_ai.server.time_to_first_token on its own clock, with the
// values of the gen_ai.client.operation.time_to_first_chunk it also emits:
// each call counts once, as a client's first chunk, and the server metric's
// points are counted as scope_skipped.
func TestOpenLITServerMetricIsNotAServers(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "openlit-openai", "normal.metrics.json"))
	require.NoError(t, err)
	for _, scrape := range []bool{false, true} {
		t.Run(map[bool]string{false: "otlp", true: "scraped"}[scrape], func(t *testing.T) {
			md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(raw)
			require.NoError(t, err)
			server := 0
			for _, rm := range md.ResourceMetrics().All() {
				for _, sm := range rm.ScopeMetrics().All() {
					for _, m := range sm.Metrics().All() {
						if m.Name() == "gen_ai.server.time_to_first_token" {
							server += dataPointCount(m)
						}
						if scrape {
							asScraped(m)
						}
					}
				}
			}
			require.Positive(t, server, "the capture holds the server metric")

			tel := componenttest.NewTelemetry()
			defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
			cfg := defaultConfig()
			cfg.Histograms.InitialValue = initialKeep // one capture: its points count whole
			c, sink := newMetricsConnector(t, cfg, clockwork.NewFakeClockAt(testStart), tel)
			require.NoError(t, c.ConsumeMetrics(context.Background(), md))
			out := flushNow(t, c, sink)

			samples := points(out, "ttft.window.samples")
			require.NotEmpty(t, samples)
			for _, p := range samples {
				assert.Equal(t, record.ObserverClient, p.attrs[record.KeyObserver], "%v", p.attrs)
				assert.Equal(t, record.MeasuredAtFirstChunk, p.attrs[record.KeyMeasuredAt], "%v", p.attrs)
			}
			assert.Equal(t, int64(server), sumByAttr(t, tel, "otelcol_connector_genai_ttft_skipped", "reason")[skipScopeSkipped])
		})
	}
}

// asScraped renames an OTLP GenAI histogram and its point attributes as a
// Prometheus exposition carries them (dots to underscores, the unit
// suffixed): gen_ai.server.time_to_first_token becomes
// gen_ai_server_time_to_first_token_seconds.
func asScraped(m pmetric.Metric) {
	if m.Type() != pmetric.MetricTypeHistogram {
		return
	}
	m.SetName(strings.ReplaceAll(m.Name(), ".", "_") + "_seconds")
	for _, dp := range m.Histogram().DataPoints().All() {
		attrs := pcommon.NewMap()
		for k, v := range dp.Attributes().All() {
			v.CopyTo(attrs.PutEmpty(strings.ReplaceAll(k, ".", "_")))
		}
		attrs.CopyTo(dp.Attributes())
	}
}
