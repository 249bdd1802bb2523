package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// forgedCase is a span that carries a stamped record (ttft.* attributes)
// with one forged value, and its own evidence: a content chunk 0.5 s into a
// 2 s streamed call.
type forgedCase struct {
	name   string
	reason string // invalid_record reason the connector must count
	stamp  func(pcommon.Map)
}

var forgedCases = []forgedCase{
	{"TTFT 1e12 s", "ttft_above_max", func(a pcommon.Map) {
		a.PutDouble("ttft.time_to_first_content", 1e12)
		a.PutDouble("ttft.duration", 2e12)
	}},
	{"TTFT 4000 s above max_ttft_seconds 3600", "ttft_above_max", func(a pcommon.Map) {
		a.PutDouble("ttft.time_to_first_content", 4000)
		a.PutDouble("ttft.duration", 5000)
	}},
	{"TTFT 50 s in a 1 s request", "ttft_after_end", func(a pcommon.Map) {
		a.PutDouble("ttft.time_to_first_content", 50)
		a.PutDouble("ttft.duration", 1)
	}},
	{"duration 1e300 s", "duration_above_max", func(a pcommon.Map) { a.PutDouble("ttft.duration", 1e300) }},
	{"max_chunk_gap 1e15 s", "gap_above_max", func(a pcommon.Map) { a.PutDouble("ttft.max_chunk_gap", 1e15) }},
	{"gap longer than the request", "gap_above_max", func(a pcommon.Map) { a.PutDouble("ttft.max_chunk_gap", 10) }},
	{"attempts 4.6e18", "attempts", func(a pcommon.Map) { a.PutInt("ttft.attempts", 4_600_000_000_000_000_000) }},
	{"attempts 0", "attempts", func(a pcommon.Map) { a.PutInt("ttft.attempts", 0) }},
	{"band pwned", "prompt_band", func(a pcommon.Map) { a.PutStr("ttft.prompt_band", "pwned") }},
	{"1 MiB band", "prompt_band", func(a pcommon.Map) { a.PutStr("ttft.prompt_band", strings.Repeat("A", 1<<20)) }},
	{"observer admin", "observer", func(a pcommon.Map) { a.PutStr("ttft.observer", "admin") }},
	{"outcome pwned", "outcome", func(a pcommon.Map) { a.PutStr("ttft.outcome", "pwned") }},
	{"measured_at pwned", "measured_at", func(a pcommon.Map) { a.PutStr("ttft.measured_at", "pwned") }},
	{"first_chunk clock on a content time", "measured_at", func(a pcommon.Map) { a.PutStr("ttft.measured_at", "first_chunk") }},
	{"first chunk after first content", "chunk_after_content", func(a pcommon.Map) { a.PutDouble("ttft.time_to_first_chunk", 0.95) }},
	{"negative TTFT", "bad_value", func(a pcommon.Map) { a.PutDouble("ttft.time_to_first_content", -1) }},
	{"NaN duration", "bad_value", func(a pcommon.Map) { a.PutDouble("ttft.duration", math.NaN()) }},
	{"TTFT as text", "bad_value", func(a pcommon.Map) { a.PutStr("ttft.time_to_first_content", "fast") }},
}

// forgedSpan appends one span: streamed, its own chunk evidence, then a
// valid stamped record (TTFT 0.9 s, duration 1.5 s) that stamp corrupts.
func forgedSpan(spans ptrace.SpanSlice, i int, model string, stamp func(pcommon.Map)) {
	span := spans.AppendEmpty()
	span.SetName("chat " + model)
	span.SetKind(ptrace.SpanKindClient)
	span.SetTraceID(pcommon.TraceID{byte(i + 1), 1})
	span.SetSpanID(pcommon.SpanID{byte(i + 1), 1})
	start := time.Now().Add(-time.Minute)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Second)))
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", model)
	a.PutBool("gen_ai.request.stream", true)
	a.PutStr("gen_ai.response.finish_reasons", "stop")
	ev := span.Events().AppendEmpty()
	ev.SetName("ttft.chunk")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(500 * time.Millisecond)))
	ev.Attributes().PutStr("ttft.chunk.kind", "content")
	// A record as the processor writes it.
	a.PutDouble("ttft.time_to_first_content", 0.9)
	a.PutDouble("ttft.time_to_first_chunk", 0.05)
	a.PutDouble("ttft.duration", 1.5)
	a.PutStr("ttft.outcome", "complete")
	a.PutStr("ttft.prompt_band", "<2k")
	a.PutInt("ttft.attempts", 1)
	a.PutStr("ttft.measured_at", "first_content")
	a.PutStr("ttft.observer", "client")
	a.PutBool("ttft.streamed", true)
	stamp(a)
}

// metricsSink keeps the latest cumulative export.
type metricsSink struct {
	mu   sync.Mutex
	last pmetric.Metrics
}

func (s *metricsSink) latest() (pmetric.Metrics, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.last != (pmetric.Metrics{})
}

func startMetricsSink(t *testing.T) (*metricsSink, string) {
	s := &metricsSink{}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.last = req.Metrics()
		s.mu.Unlock()
		_, _ = w.Write(mustProto(pmetricotlp.NewExportResponse().MarshalProto()))
	})
	return s, serveLoopback(t, mux)
}

// eachForgedPoint calls f with every data point's metric name, attributes and the
// largest value it stands for (a histogram's max, a sum's or gauge's value).
func eachForgedPoint(md pmetric.Metrics, f func(name string, attrs pcommon.Map, v float64)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeExponentialHistogram:
					for d := 0; d < m.ExponentialHistogram().DataPoints().Len(); d++ {
						dp := m.ExponentialHistogram().DataPoints().At(d)
						f(m.Name(), dp.Attributes(), dp.Max())
					}
				case pmetric.MetricTypeSum:
					for d := 0; d < m.Sum().DataPoints().Len(); d++ {
						dp := m.Sum().DataPoints().At(d)
						f(m.Name(), dp.Attributes(), float64(dp.IntValue()))
					}
				case pmetric.MetricTypeGauge:
					for d := 0; d < m.Gauge().DataPoints().Len(); d++ {
						dp := m.Gauge().DataPoints().At(d)
						f(m.Name(), dp.Attributes(), dp.DoubleValue()+float64(dp.IntValue()))
					}
				}
			}
		}
	}
}

// TestForgedRecordsNeverReachAMetric sends spans whose stamped ttft.* records
// were forged through the built collector's connector: each is counted by
// reason in own telemetry and aggregated from the span's own evidence
// (0.5 s to first content, 2 s long), never as stamped.
// With stamped_only the connector reads the same records the same way: a
// forged record carries ttft.outcome, so it is read, fails, and is derived
// afresh.
func TestForgedRecordsNeverReachAMetric(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"deriving", ""},
		{"stamped_only", "    stamped_only: true\n"},
	} {
		t.Run(c.name, func(t *testing.T) { forgedRecordsNeverReachAMetric(t, c.extra) })
	}
}

func forgedRecordsNeverReachAMetric(t *testing.T, connectorExtra string) {
	otlpPort, telPort := freePort(t), freePort(t)
	sink, url := startMetricsSink(t)
	col := startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
connectors:
  genai_ttft:
    flush_interval: 1s
    min_samples: 1
%s
exporters:
  otlp_http:
    endpoint: %s
    compression: none
service:
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [otlp_http]
`, otlpPort, connectorExtra, url, telPort))

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, c := range forgedCases {
		forgedSpan(spans, i, "forged-"+strconv.Itoa(i), c.stamp)
	}
	// One honest stamped record, read back as is (TTFT 0.9 s, not the 0.5 s of its events).
	forgedSpan(spans, len(forgedCases), "honest", func(pcommon.Map) {})
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	postOTLP(t, col, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort), "application/x-protobuf", "the forged spans", body)

	var md pmetric.Metrics
	waitFor(t, col, 30*time.Second, "every request in ttft.requests", func() error {
		m, ok := sink.latest()
		if !ok {
			return fmt.Errorf("no metrics yet")
		}
		var n float64
		eachForgedPoint(m, func(name string, _ pcommon.Map, v float64) {
			if name == "ttft.requests" {
				n += v
			}
		})
		if int(n) != len(forgedCases)+1 {
			return fmt.Errorf("%v requests of %d", n, len(forgedCases)+1)
		}
		md = m
		return nil
	})

	eachForgedPoint(md, func(name string, attrs pcommon.Map, v float64) {
		model, _ := attrs.Get("gen_ai.request.model")
		honest := model.Str() == "honest"
		for k, val := range attrs.All() {
			if s := val.AsString(); len(s) > 256 || s == "pwned" || s == "admin" {
				t.Errorf("%s carries forged label %s=%.40q", name, k, s)
			}
		}
		if fo, ok := attrs.Get("ttft.failed_over"); ok && fo.Bool() {
			t.Errorf("%s %s: failed_over from forged attempts", name, model.Str())
		}
		// Every value is one the spans' own evidence (or the honest record) allows.
		limit := map[string]float64{
			"ttft.time_to_first_token": 0.5, "ttft.time_to_first_chunk": 0.5, "ttft.max_chunk_gap": 2,
			"ttft.duration": 2, "ttft.quantile": 0.5, "ttft.timeout.recommended": 3,
		}
		if honest {
			limit["ttft.time_to_first_token"], limit["ttft.quantile"], limit["ttft.duration"] = 0.9, 0.9, 1.5
		}
		if l, ok := limit[name]; ok && v > l*(1+1e-9) {
			t.Errorf("%s %s = %v, above what the span shows (%v)", name, model.Str(), v, l)
		}
		if name == "ttft.time_to_first_token" && honest && math.Abs(v-0.9) > 1e-9 {
			t.Errorf("the honest record was not read back as is: TTFT max %v, want 0.9", v)
		}
	})

	// Own telemetry: each forged record counted under its reason.
	want := map[string]int{}
	for _, c := range forgedCases {
		want[c.reason]++
	}
	waitFor(t, col, 30*time.Second, "invalid_records counted by reason", func() error {
		got, err := scrapeCounter(fmt.Sprintf("http://127.0.0.1:%d/metrics", telPort), "otelcol_connector_genai_ttft_invalid_records", "reason")
		if err != nil {
			return err
		}
		for r, n := range want {
			if got[r] != n {
				return fmt.Errorf("reason %s: %d, want %d (all: %v)", r, got[r], n, got)
			}
		}
		if len(got) != len(want) {
			return fmt.Errorf("reasons %v, want %v", got, want)
		}
		return nil
	})
}

// scrapeCounter sums a counter's samples by one label from a Prometheus
// text exposition.
func scrapeCounter(url, metric, label string) (map[string]int, error) {
	resp, err := http.Get(url) //nolint:gosec // loopback
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric) || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.Index(line, label+`="`)
		if i < 0 {
			continue
		}
		rest := line[i+len(label)+2:]
		val := rest[:strings.IndexByte(rest, '"')]
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return nil, err
		}
		out[val] += int(f)
	}
	return out, sc.Err()
}
