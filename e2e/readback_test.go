package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// readBackSpans are honest streamed calls whose records the processor
// derived and the connector then refused to read back, before the
// derivation bounded event times, skewed durations and pauses at the end
// slack (internal/derive, derived_validates_test.go):
//   - rb-slow: a 5000 s stream (under max_duration_seconds 86400) whose
//     first content chunk came at 4000 s (above max_ttft_seconds 3600);
//   - rb-skew: a 1 s call with a nested 10 s call span on a clock two
//     days ahead, content at 5 s into it;
//   - rb-gap: a stream with content at its start and its last chunk 1 ms
//     after its end (the slack scanEvents admits);
//
// and rb-ok, an ordinary call.
func readBackSpans(now time.Time) []spanSpec {
	attrs := func(model string) map[string]any {
		return map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model,
			"gen_ai.request.stream": true, "ttft.route": "readback", "gen_ai.response.finish_reasons": []any{"stop"}}
	}
	id := func(n byte) (pcommon.TraceID, pcommon.SpanID) {
		return pcommon.TraceID{0xad, n, 1}, pcommon.SpanID{0xad, n, 1}
	}
	var out []spanSpec
	tr, sp := id(1)
	start := now.Add(-5001 * time.Second)
	out = append(out, spanSpec{service: "readback", scope: "readback", name: "chat", kind: ptrace.SpanKindClient, trace: tr, id: sp,
		start: start, end: start.Add(5000 * time.Second), attrs: attrs("rb-slow"),
		events: []eventSpec{{start.Add(4000 * time.Second), "content"}}})

	tr, sp = id(2)
	start = now.Add(-time.Minute)
	out = append(out, spanSpec{service: "readback", scope: "readback", name: "chat", kind: ptrace.SpanKindClient, trace: tr, id: sp,
		start: start, end: start.Add(time.Second), attrs: attrs("rb-skew")})
	inner := start.Add(48 * time.Hour)
	out = append(out, spanSpec{service: "readback", scope: "readback", name: "chat inner", kind: ptrace.SpanKindClient, trace: tr,
		id: pcommon.SpanID{0xad, 2, 2}, parent: sp, start: inner, end: inner.Add(10 * time.Second), attrs: attrs("rb-skew"),
		events: []eventSpec{{inner.Add(5 * time.Second), "content"}}})

	tr, sp = id(3)
	dur := 2*time.Second + 3*time.Nanosecond
	out = append(out, spanSpec{service: "readback", scope: "readback", name: "chat", kind: ptrace.SpanKindClient, trace: tr, id: sp,
		start: start, end: start.Add(dur), attrs: attrs("rb-gap"),
		events: []eventSpec{{start, "content"}, {start.Add(dur + time.Millisecond), "content"}}})

	tr, sp = id(4)
	out = append(out, spanSpec{service: "readback", scope: "readback", name: "chat", kind: ptrace.SpanKindClient, trace: tr, id: sp,
		start: start, end: start.Add(2 * time.Second), attrs: attrs("rb-ok"),
		events: []eventSpec{{start.Add(300 * time.Millisecond), "content"}}})
	return out
}

var readBackModels = []string{"rb-slow", "rb-skew", "rb-gap", "rb-ok"}

// lastMetrics is the last flush in a file exporter's output written by
// one collector instance.
func lastMetrics(path string) (pmetric.Metrics, bool) {
	all, err := readOutput(path)
	if err != nil || len(all) != 1 {
		return pmetric.Metrics{}, false
	}
	for _, md := range all {
		return md, true
	}
	return pmetric.Metrics{}, false
}

// readBackRequests is ttft.requests by model, and the largest TTFT histogram
// value by model.
func readBackRequests(md pmetric.Metrics) (requests, maxTTFT map[string]float64) {
	requests, maxTTFT = map[string]float64{}, map[string]float64{}
	eachForgedPoint(md, func(name string, attrs pcommon.Map, v float64) {
		m := attr(attrs, "gen_ai.request.model")
		switch name {
		case "ttft.requests":
			requests[m] += v
		case "ttft.time_to_first_token":
			maxTTFT[m] = max(maxTTFT[m], v)
		}
	})
	return requests, maxTTFT
}

func emptyCSV(t *testing.T, n *node) string {
	t.Helper()
	p := filepath.Join(n.dir, "empty.csv")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDefaultConfigReadsBackWhatItDerives runs config/default.yaml (only
// addresses, the gateway export path and the metrics exporter changed): the
// connector refuses none of the records its processor derived, and no TTFT
// above max_ttft_seconds reaches the histogram. Before, rb-slow's 4,000 s
// did, and three records were counted invalid.
func TestDefaultConfigReadsBackWhatItDerives(t *testing.T) {
	n := newNode(t, "default")
	d := readShipped(t, "default.yaml")
	d.common(t, n)
	d.set(t, []any{emptyCSV(t, n)}, "receivers", "llm_gateway_log", "include")
	d.toFile(t, n)
	d.write(t, n.cfg)
	n.start(t)

	postTraces(t, n, readBackSpans(time.Now()))
	var req, ttft map[string]float64
	waitFor(t, n.proc, 30*time.Second, "rb-ok in ttft.requests", func() error {
		md, ok := lastMetrics(n.output)
		if !ok {
			return fmt.Errorf("no metrics yet")
		}
		req, ttft = readBackRequests(md)
		if req["rb-ok"] != 1 {
			return fmt.Errorf("requests %v", req)
		}
		return nil
	})
	t.Logf("ttft.requests %v; TTFT histogram max %v", req, ttft)
	if v := ttft["rb-slow"]; v > 3600 {
		t.Errorf("ttft.time_to_first_token holds %v s, above max_ttft_seconds 3600", v)
	}
	got, err := scrapeCounter(fmt.Sprintf("http://127.0.0.1:%d/metrics", n.tel), "otelcol_connector_genai_ttft_invalid_records", "reason")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("the connector refused records its own processor derived from honest spans: invalid_records %v", got)
	}
}

// TestTwoTiersReadBackWhatTheyDerive runs config/gateway-trace.yaml into
// config/gateway-aggregate.yaml: every request reaches the aggregating
// tier with the TTFT the trace tier derived. Before, a record the trace
// tier refused was derived again there after its chunk events were dropped,
// and the aggregating tier got rb-gap and rb-skew without a TTFT.
func TestTwoTiersReadBackWhatTheyDerive(t *testing.T) {
	agg, gw := newNode(t, "aggregating-gateway"), newNode(t, "trace-gateway")
	d := readShipped(t, "gateway-aggregate.yaml")
	d.common(t, agg)
	d.toFile(t, agg)
	d.write(t, agg.cfg)
	d = readShipped(t, "gateway-trace.yaml")
	d.common(t, gw)
	d.set(t, "1s", "processors", "groupbytrace", "wait_duration")
	d.toBackends(t, "load_balancing/records", agg)
	d.write(t, gw.cfg)
	agg.start(t)
	gw.start(t)

	postTraces(t, gw, readBackSpans(time.Now()))
	var req map[string]float64
	waitFor(t, agg.proc, 60*time.Second, "rb-ok in ttft.requests", func() error {
		md, ok := lastMetrics(agg.output)
		if !ok {
			return fmt.Errorf("no metrics yet")
		}
		req, _ = readBackRequests(md)
		if req["rb-ok"] != 1 {
			return fmt.Errorf("requests %v", req)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // one more flush
	md, _ := lastMetrics(agg.output)
	req, ttft := readBackRequests(md)
	t.Logf("ttft.requests at the aggregating tier: %v, TTFT max %v", req, ttft)
	inv, _ := scrapeCounter(fmt.Sprintf("http://127.0.0.1:%d/metrics", agg.tel), "otelcol_connector_genai_ttft_invalid_records", "reason")
	t.Logf("aggregating tier invalid_records: %v", inv)
	for _, m := range readBackModels {
		if req[m] != 1 {
			t.Errorf("%s: %v requests at the aggregating tier, want 1", m, req[m])
		}
	}
	// rb-gap (TTFT 0 s, gap 2.001 s) and rb-skew (TTFT 5 s, from the
	// nested span) have first-content evidence the trace tier derived.
	for _, m := range []string{"rb-gap", "rb-skew"} {
		if _, ok := ttft[m]; !ok {
			t.Errorf("%s: no ttft.time_to_first_token point at the aggregating tier: the TTFT the trace tier derived was lost", m)
		}
	}
	got, err := scrapeCounter(fmt.Sprintf("http://127.0.0.1:%d/metrics", gw.tel), "otelcol_connector_genai_ttft_invalid_records", "reason")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("the trace tier's connector refused records its own processor derived: invalid_records %v", got)
	}
}
