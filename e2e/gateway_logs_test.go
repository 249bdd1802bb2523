package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// TestRealBifrostLogsOneRecordPerRequest reads the real Bifrost request
// logs (testdata/fixtures/bifrost-gateway: 44 rows for 40 client requests,
// as the logs API returns them and as the SQLite store keeps them) through
// the built distribution: llm_gateway_log → file exporter and the genai_ttft
// connector → prometheus exporter. Each file becomes one record per client
// request (a fallback's row folds into its request's), with the answer
// key's outcomes and failovers, no TTFT and no ttft.measured_at (the rows
// have no TTFT field), and ttft_requests_total counts the client requests.
func TestRealBifrostLogsOneRecordPerRequest(t *testing.T) {
	promPort := freePort(t)
	out := filepath.Join(t.TempDir(), "logs.json")
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "fixtures", "bifrost-gateway"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"bifrost-logs.detail.jsonl", "bifrost-logs.sqlite.jsonl"}
	col := startCollector(t, fmt.Sprintf(`
receivers:
  llm_gateway_log/detail:
    include: [%q]
    format: bifrost
    fallbacks: {wait: 1s}
  llm_gateway_log/sqlite:
    include: [%q]
    format: bifrost
    fallbacks: {wait: 1s}
connectors:
  genai_ttft:
    flush_interval: 1s
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
  prometheus:
    endpoint: 127.0.0.1:%d
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [llm_gateway_log/detail, llm_gateway_log/sqlite]
      exporters: [file, genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus]
`, filepath.Join(dir, files[0]), filepath.Join(dir, files[1]), out, promPort))

	const perFile = 40
	type tally struct {
		records, failedOver int
		outcomes            map[string]int
	}
	var byFile map[string]*tally
	waitFor(t, col, 60*time.Second, "every client request's record", func() error {
		byFile = map[string]*tally{}
		n := 0
		err := readExportedLogs(out, func(lr plog.LogRecord) {
			a := lr.Attributes().AsRaw()
			name, _ := a["log.file.name"].(string)
			tl := byFile[name]
			if tl == nil {
				tl = &tally{outcomes: map[string]int{}}
				byFile[name] = tl
			}
			tl.records++
			n++
			o, _ := a["ttft.outcome"].(string)
			tl.outcomes[o]++
			if fo, _ := a["ttft.failed_over"].(bool); fo {
				tl.failedOver++
			}
			for _, k := range []string{"ttft.measured_at", "ttft.time_to_first_chunk", "ttft.time_to_first_content"} {
				if v, ok := a[k]; ok {
					t.Errorf("%s: %s = %v on a record from rows without TTFT", name, k, v)
				}
			}
		})
		if err != nil {
			return err
		}
		if n < 2*perFile {
			return fmt.Errorf("%d records exported, want %d", n, 2*perFile)
		}
		return nil
	})
	// From expected.json: 30 complete, 8 error (mid-stream errors, 429s
	// without a fallback), 2 cut by the idle timeout before any content; the
	// 4 requests that failed over answered.
	want := map[string]int{"complete": 30, "error": 8, "timeout_first_token": 2}
	for _, f := range files {
		tl := byFile[f]
		if tl == nil {
			t.Fatalf("no records from %s", f)
		}
		if tl.records != perFile {
			t.Errorf("%s: %d records, want one per client request (%d)", f, tl.records, perFile)
		}
		for o, n := range want {
			if tl.outcomes[o] != n {
				t.Errorf("%s: %d %s records, want %d (all: %v)", f, tl.outcomes[o], o, n, tl.outcomes)
			}
		}
		if tl.failedOver != 4 {
			t.Errorf("%s: %d records failed over, want 4", f, tl.failedOver)
		}
	}

	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)
	waitFor(t, col, 30*time.Second, "ttft_requests_total to count the client requests", func() error {
		total, err := sumFamily(metrics, "ttft_requests_total")
		if err != nil {
			return err
		}
		if total != 2*perFile {
			return fmt.Errorf("ttft_requests_total = %v, want %d", total, 2*perFile)
		}
		return nil
	})
}

// readExportedLogs calls fn for every log record of a file exporter's JSON lines.
func readExportedLogs(path string, fn func(plog.LogRecord)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(sc.Bytes())
		if err != nil {
			return fmt.Errorf("exported line is not OTLP/JSON: %w", err)
		}
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					fn(lr)
				}
			}
		}
	}
	return sc.Err()
}
