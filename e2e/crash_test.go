package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Bifrost's log rows of a request that failed over (v1.5.11): the first
// attempt's 429 and the fallback that served it, linked by
// parent_request_id.
const (
	crashParentRow = `{"id":"p-1","parent_request_id":null,"timestamp":"2026-12-01T07:52:44.30573491Z","provider":"openai","model":"scn-http_429","number_of_retries":1,"fallback_index":0,"routing_rule_name":"ratelimit-guard","latency":119,"status":"error","stream":true,"error_details":{"status_code":429,"error":{"type":"requests","message":"Rate limit reached"}},"attempt_trail":[{"attempt":0,"fail_reason":"rate_limit_error"},{"attempt":1,"fail_reason":"rate_limit_error"}]}`
	crashChildRow  = `{"id":"c-1","parent_request_id":"p-1","timestamp":"2026-12-01T07:52:44.425359051Z","provider":"openai","model":"scn-normal","number_of_retries":0,"fallback_index":1,"routing_rule_name":"ratelimit-guard","latency":551,"status":"success","stream":true,"token_usage":{"prompt_tokens":1234,"completion_tokens":10},"attempt_trail":[{"attempt":0}]}`
)

// TestCrashKeepsHeldFallbackRows: the built collector reads a request's
// failed first row, holds it for its fallback row, and is killed
// (SIGKILL) once stanza has checkpointed past the row. The fallback row,
// written while it is down, is read after the start and folds into the
// held row: one record, three attempts, failed over. Before the journal,
// the held row was lost with the process and the fallback row came out as
// a request of its own after fallbacks::wait.
func TestCrashKeepsHeldFallbackRows(t *testing.T) {
	collectorBinary(t)
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	if err := os.Mkdir(storage, 0o700); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "bifrost.jsonl")
	appendLine := func(line string) {
		f, err := os.OpenFile(logs, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []map[string]any
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/logs", handleOTLPLogs(func(ld plog.Logs) {
		rls := ld.ResourceLogs()
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < rls.Len(); i++ {
			for j := 0; j < rls.At(i).ScopeLogs().Len(); j++ {
				lrs := rls.At(i).ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					got = append(got, lrs.At(k).Attributes().AsRaw())
				}
			}
		}
	}))
	url := serveLoopback(t, mux)
	telPort := freePort(t)
	cfg := fmt.Sprintf(`
extensions:
  file_storage:
    directory: %q
receivers:
  llm_gateway_log:
    include: [%q]
    start_at: beginning
    format: bifrost
    storage: file_storage
    poll_interval: 100ms
    fallbacks:
      wait: 8s
exporters:
  otlp_http:
    endpoint: %s
    compression: none
    sending_queue: {enabled: false}
service:
  extensions: [file_storage]
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
    logs:
      receivers: [llm_gateway_log]
      exporters: [otlp_http]
`, storage, filepath.Join(dir, "*.jsonl"), url, telPort)

	appendLine(crashParentRow)
	col := startCollector(t, cfg)
	waitFor(t, col, 30*time.Second, "the failed row to be held", func() error {
		m, err := scrapeCounter(fmt.Sprintf("http://127.0.0.1:%d/metrics", telPort), "otelcol_receiver_llm_gateway_log_rows_mapped", "format")
		if err != nil {
			return err
		}
		if m["bifrost"] != 1 {
			return fmt.Errorf("rows mapped %v", m)
		}
		return nil
	})
	// Polls every 100 ms: a few of them checkpoint the file's end.
	time.Sleep(time.Second)
	if err := col.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-col.done
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("the held row was emitted before the crash: %v", got)
	}
	mu.Unlock()

	appendLine(crashChildRow)
	started := time.Now()
	col = startCollector(t, cfg)
	defer col.Stop(t)
	waitFor(t, col, 30*time.Second, "a record", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return fmt.Errorf("no record yet")
		}
		return nil
	})
	// A second record would come at the wait's end at the latest.
	time.Sleep(time.Until(started.Add(10 * time.Second)))
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d records, want 1 (the fallback folded into its held request): %v", len(got), got)
	}
	r := got[0]
	if r["ttft.attempts"] != int64(3) || r["ttft.failed_over"] != true || r["ttft.outcome"] != "complete" {
		t.Errorf("attempts %v, failed_over %v, outcome %v; want 3, true, complete: %v", r["ttft.attempts"], r["ttft.failed_over"], r["ttft.outcome"], r)
	}
	if _, ok := r["log.file.path"]; ok {
		t.Errorf("log.file.path emitted without include_file_path: %v", r)
	}
}
