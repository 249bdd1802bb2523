package sdktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// collectorBinary returns the built distribution, with the e2e tests' rule:
// skipped when not built, a failure when TTFT_E2E=1 says it must be there.
func collectorBinary(t *testing.T) (string, bool) {
	t.Helper()
	bin := os.Getenv("OTELCOL_TTFT_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "dist", "otelcol-ttft")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TTFT_E2E") == "1" {
			t.Fatalf("distribution binary %s not found (run make build): %v", bin, err)
		}
		return "", false
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs, true
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// collector is the distribution running otlp → genai_ttft → file.
type collector struct {
	endpoint string // OTLP/HTTP base URL
	out      string // exported spans, OTLP/JSON lines
}

func startCollector(t *testing.T, bin string) collector {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	out := filepath.Join(dir, "traces.json")
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  genai_ttft:
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [genai_ttft]
      exporters: [file]
`, port, out)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", logs.String())
		}
	})
	c := collector{endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), out: out}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Post(c.endpoint+"/v1/traces", "application/json", bytes.NewReader([]byte(`{}`)))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		select {
		case <-done:
			t.Fatalf("collector exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exportedSpan is one span of the file exporter's OTLP/JSON.
type exportedSpan struct {
	Name       string
	Start      int64
	Attributes map[string]any
}

// readSpans returns the exported spans keyed by their test.case attribute.
func (c collector) readSpans() (map[string]exportedSpan, error) {
	f, err := os.Open(c.out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type kv struct {
		Key   string                     `json:"key"`
		Value map[string]json.RawMessage `json:"value"`
	}
	type document struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []struct {
					Name       string `json:"name"`
					Start      string `json:"startTimeUnixNano"`
					Attributes []kv   `json:"attributes"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	out := map[string]exportedSpan{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var doc document // fresh per line: Unmarshal would merge into reused maps
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return nil, err
		}
		for _, rs := range doc.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					start, _ := strconv.ParseInt(s.Start, 10, 64)
					es := exportedSpan{Name: s.Name, Start: start, Attributes: map[string]any{}}
					for _, a := range s.Attributes {
						for typ, raw := range a.Value {
							var v any
							_ = json.Unmarshal(raw, &v)
							if typ == "intValue" { // OTLP/JSON writes int64 as a string
								if s, ok := v.(string); ok {
									n, _ := strconv.ParseInt(s, 10, 64)
									v = n
								}
							}
							es.Attributes[a.Key] = v
						}
					}
					if tc, ok := es.Attributes["test.case"].(string); ok {
						out[tc] = es
					}
				}
			}
		}
	}
	return out, sc.Err()
}
