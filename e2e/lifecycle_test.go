package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// gatewayRecordLogs is n gateway request records as the llm_gateway_log
// receiver stamps them (the processor reads them back and keeps them).
func gatewayRecordLogs(n int, model string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "gw")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for range n {
		a := lrs.AppendEmpty().Attributes()
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("ttft.route", "lifecycle")
		a.PutDouble("ttft.time_to_first_content", 0.9)
		a.PutDouble("ttft.time_to_first_chunk", 0.05)
		a.PutDouble("ttft.duration", 1.5)
		a.PutStr("ttft.outcome", "complete")
		a.PutStr("ttft.prompt_band", "<2k")
		a.PutInt("ttft.attempts", 1)
		a.PutStr("ttft.measured_at", "first_content")
		a.PutStr("ttft.observer", "gateway")
		a.PutBool("ttft.streamed", true)
	}
	return ld
}

func postLogs(t *testing.T, n *node, ld plog.Logs) {
	t.Helper()
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/logs", n.http), "application/x-protobuf", bytes.NewReader(body)) //nolint:gosec // loopback
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST logs: %s", resp.Status)
	}
}

// TestSIGTERMDefaultConfigLosesNothing runs config/default.yaml (only
// addresses, the gateway export path and the metrics exporter changed to a
// file; flush_interval 1h so only the stop's flush carries the records),
// sends spans and gateway records over OTLP/HTTP, and stops the collector
// with SIGTERM while the batch processors still hold them. README "A
// graceful stop flushes": every record must be in the last export. Before,
// the first of the connector's pipelines to stop stopped it, and 6 of 6
// stops lost one pipeline's last batch.
func TestSIGTERMDefaultConfigLosesNothing(t *testing.T) {
	const runs = 6
	var lost []string
	for run := range runs {
		n := newNode(t, fmt.Sprintf("default-%d", run))
		d := readShipped(t, "default.yaml")
		d.common(t, n)
		d.set(t, []any{emptyCSV(t, n)}, "receivers", "llm_gateway_log", "include")
		d.toFile(t, n)
		d.set(t, "1h", "connectors", "genai_ttft", "flush_interval")
		d.write(t, n.cfg)
		n.start(t)

		var specs []spanSpec
		for _, s := range readBackSpans(time.Now()) {
			if s.attrs["gen_ai.request.model"] == "rb-ok" {
				specs = append(specs, s)
			}
		}
		postTraces(t, n, specs)
		postLogs(t, n, gatewayRecordLogs(3, "gw-logs"))
		_ = n.proc.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.proc.done:
		case <-time.After(20 * time.Second):
			t.Fatal("no exit within 20s of SIGTERM")
		}
		md, ok := lastMetrics(n.output)
		req := map[string]float64{}
		if ok {
			eachForgedPoint(md, func(name string, attrs pcommon.Map, v float64) {
				if name == "ttft.requests" {
					req[attr(attrs, "gen_ai.request.model")] += v
				}
			})
		}
		t.Logf("run %d: ttft.requests in the last export: %v", run, req)
		if req["rb-ok"] != 1 || req["gw-logs"] != 3 {
			lost = append(lost, fmt.Sprintf("run %d: %v (want rb-ok 1, gw-logs 3)", run, req))
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d SIGTERMs lost records:\n%v", len(lost), runs, lost)
	}
}

// TestSIGTERMWithRefusingBackend: the metrics backend answers 503 (down
// for maintenance); the otlp_http exporter retries (retry_on_failure, the
// default, without a sending queue) inside the connector's flush. A SIGTERM
// must still stop the collector promptly. Before, the connector's Shutdown
// waited for the flush loop, whose context was never cancelled, while the
// exporter would stop retrying only at its own Shutdown, which the graph
// runs after the connector's.
func TestSIGTERMWithRefusingBackend(t *testing.T) {
	var posts atomic.Int64
	sink := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	n := newNode(t, "refusing")
	cfg := fmt.Sprintf(`
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
connectors:
  genai_ttft:
    flush_interval: 1s
exporters:
  otlp_http:
    endpoint: %s
    compression: none
    sending_queue: {enabled: false}
service:
  extensions: [health_check]
  telemetry: {metrics: {level: none}}
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [otlp_http]
`, n.health, n.http, sink)
	writeFile(t, n.cfg, cfg)
	n.start(t)
	postLogs(t, n, gatewayRecordLogs(1, "gw-block"))
	waitFor(t, n.proc, 20*time.Second, "a flush to reach the backend", func() error {
		if posts.Load() == 0 {
			return fmt.Errorf("no POST yet")
		}
		return nil
	})
	start := time.Now()
	_ = n.proc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.proc.done:
		t.Logf("exited %v after SIGTERM (%d POSTs)", time.Since(start), posts.Load())
	case <-time.After(30 * time.Second):
		t.Errorf("still running 30s after SIGTERM (%d POSTs so far): the connector's Shutdown waits on a flush the exporter retries until max_elapsed_time (5m)", posts.Load())
		_ = n.proc.cmd.Process.Kill()
		<-n.proc.done
	}
}

// TestDeltaPrometheusHistogramCount: aggregation_temporality: delta into
// the prometheus exporter (which turns delta into cumulative). Three records
// of one target, one flush apart, with idle flushes between them: the
// scraped ttft_requests_total says 3; the TTFT histogram's count must say 3
// as well. Before, each idle flush moved the histograms' delta start and the
// exporter took the next point as a reset.
func TestDeltaPrometheusHistogramCount(t *testing.T) {
	n := newNode(t, "delta-prom")
	prom := lowPort(t)
	cfg := fmt.Sprintf(`
extensions:
  health_check: {endpoint: "127.0.0.1:%d"}
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
connectors:
  genai_ttft:
    flush_interval: 1s
    aggregation_temporality: delta
exporters:
  prometheus: {endpoint: "127.0.0.1:%d"}
service:
  extensions: [health_check]
  telemetry: {metrics: {level: none}}
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus]
`, n.health, n.http, prom)
	writeFile(t, n.cfg, cfg)
	n.start(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", prom)
	for i := 1; i <= 3; i++ {
		postLogs(t, n, gatewayRecordLogs(1, "gw-delta"))
		waitFor(t, n.proc, 20*time.Second, fmt.Sprintf("ttft_requests_total = %d", i), func() error {
			v, err := sumFamily(url, "ttft_requests_total")
			if err != nil || v != float64(i) {
				return fmt.Errorf("ttft_requests_total %v (%v)", v, err)
			}
			return nil
		})
		time.Sleep(2500 * time.Millisecond) // two idle flushes
	}
	reqs, _ := sumFamily(url, "ttft_requests_total")
	count, err := sumFamily(url, "ttft_time_to_first_token_seconds_count")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scraped ttft_requests_total %v, ttft_time_to_first_token_seconds_count %v", reqs, count)
	if count != reqs {
		t.Errorf("the TTFT histogram counts %v requests where ttft_requests_total counts %v: each idle flush moved its delta start, and the exporter took the next point as a reset", count, reqs)
	}
}
