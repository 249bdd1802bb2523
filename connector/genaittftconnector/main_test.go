package genaittftconnector

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testInstanceID = "test-instance"

// testStart is the fake clock's start: a whole hour, so window slices align.
var testStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func defaultConfig() *Config { return createDefaultConfig().(*Config) }

// loadConfig reads a partial config file over the defaults.
func loadConfig(t testing.TB, path string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	cfg := defaultConfig()
	require.NoError(t, cm.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

// newTestConnector builds the shared connector for cfg with a fake clock and
// returns it with its metrics sink.
func newTestConnector(t testing.TB, cfg *Config, clock clockwork.Clock, next consumer.Metrics) *ttftConnector {
	t.Helper()
	return newTestConnectorWith(t, testSettings(nil), cfg, clock, next)
}

// testSettings are the settings newTestConnector uses, with the
// telemetry of tel when it is not nil, for a test that reads its own
// telemetry or sets a logger before newTestConnectorWith.
func testSettings(tel *componenttest.Telemetry) connector.Settings {
	set := connectortest.NewNopSettings(metadata.Type)
	if tel != nil {
		set.TelemetrySettings = tel.NewTelemetrySettings()
	}
	set.Resource.Attributes().PutStr(serviceInstanceIDKey, testInstanceID)
	return set
}

func newTestConnectorWith(t testing.TB, set connector.Settings, cfg *Config, clock clockwork.Clock, next consumer.Metrics) *ttftConnector {
	t.Helper()
	ctx := clockwork.AddToContext(context.Background(), clock)
	tc, err := NewFactory().CreateTracesToMetrics(ctx, set, cfg, next)
	require.NoError(t, err)
	return tc.(*tracesConnector).conn
}

// req is a request record stamped on a span (as the processor writes it).
type req struct {
	provider, model, route string
	outcome                string
	band                   string
	measuredAt             string
	ttft                   float64 // first content (or first chunk when measuredAt is first_chunk); <0: none
	chunk, gap, duration   float64 // <=0: none
	attempts               int64
	streamed               *bool
}

func (r req) record() record.Record {
	rec := record.Record{
		Provider: r.provider, Model: r.model, Route: r.route,
		Outcome: r.outcome, PromptBand: r.band, MeasuredAt: r.measuredAt,
		Observer: record.ObserverClient, Attempts: max(r.attempts, 1),
	}
	if rec.Outcome == "" {
		rec.Outcome = record.OutcomeComplete
	}
	if rec.PromptBand == "" {
		rec.PromptBand = "<2k"
	}
	if rec.MeasuredAt == "" {
		rec.MeasuredAt = record.MeasuredAtFirstContent
	}
	if r.ttft >= 0 {
		if rec.MeasuredAt == record.MeasuredAtFirstChunk {
			rec.TimeToFirstChunk, rec.HasTimeToFirstChunk = r.ttft, true
		} else {
			rec.TimeToFirstContent, rec.HasTimeToFirstContent = r.ttft, true
		}
	}
	if r.chunk > 0 {
		rec.TimeToFirstChunk, rec.HasTimeToFirstChunk = r.chunk, true
	}
	if r.gap > 0 {
		rec.MaxChunkGap, rec.HasMaxChunkGap = r.gap, true
	}
	if r.duration > 0 {
		rec.Duration, rec.HasDuration = r.duration, true
	}
	rec.Streamed, rec.StreamedKnown = true, true
	if r.streamed != nil {
		rec.Streamed = *r.streamed
	}
	return rec
}

// stampedTraces builds one span per request, stamped with its record.
func stampedTraces(reqs ...req) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "test-app")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i, r := range reqs {
		s := spans.AppendEmpty()
		s.SetName("chat " + r.model)
		s.SetKind(ptrace.SpanKindClient)
		s.SetTraceID(pcommon.TraceID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		s.SetSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		rec := r.record()
		rec.Write(s.Attributes())
	}
	return td
}

// stampedLogs builds one log record per request, stamped with its record.
func stampedLogs(reqs ...req) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, r := range reqs {
		rec := r.record()
		rec.Observer = record.ObserverGateway
		rec.Write(lrs.AppendEmpty().Attributes())
	}
	return ld
}

// findMetric returns the metric named name in md, if any.
func findMetric(md pmetric.Metrics, name string) (pmetric.Metric, bool) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == name {
					return ms.At(k), true
				}
			}
		}
	}
	return pmetric.Metric{}, false
}

func testdataPath(elems ...string) string {
	return filepath.Join(append([]string{"testdata"}, elems...)...)
}

func nan() float64 { return math.NaN() }

// point is one data point, flattened for assertions: gauges and sums give
// their value, exponential histograms their count.
type point struct {
	attrs map[string]any
	value float64
	start pcommon.Timestamp
	ts    pcommon.Timestamp
}

func points(md pmetric.Metrics, name string) []point {
	m, ok := findMetric(md, name)
	if !ok {
		return nil
	}
	var out []point
	switch m.Type() {
	case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
		var dps pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeSum {
			dps = m.Sum().DataPoints()
		} else {
			dps = m.Gauge().DataPoints()
		}
		for i := 0; i < dps.Len(); i++ {
			dp := dps.At(i)
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			out = append(out, point{dp.Attributes().AsRaw(), v, dp.StartTimestamp(), dp.Timestamp()})
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			dp := dps.At(i)
			out = append(out, point{dp.Attributes().AsRaw(), float64(dp.Count()), dp.StartTimestamp(), dp.Timestamp()})
		}
	}
	return out
}

// pointsWith keeps the points whose attributes include every key/value of want.
func pointsWith(ps []point, want map[string]any) []point {
	var out []point
next:
	for _, p := range ps {
		for k, v := range want {
			if p.attrs[k] != v {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// value returns the single point of name matching want.
func value(t testing.TB, md pmetric.Metrics, name string, want map[string]any) float64 {
	t.Helper()
	ps := pointsWith(points(md, name), want)
	require.Len(t, ps, 1, "%s %v", name, want)
	return ps[0].value
}
