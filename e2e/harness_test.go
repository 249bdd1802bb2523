// Package e2e runs the built distribution (dist/otelcol-ttft) as a user would:
// real binary, real config files, real network on loopback, real Prometheus.
package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// collectorBinary returns the distribution under test. `go test ./...` alone
// skips these tests when nothing was built; `make test` sets TTFT_E2E=1,
// which turns a missing binary into a failure.
func collectorBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_TTFT_BIN")
	if bin == "" {
		bin = filepath.Join("..", "dist", "otelcol-ttft")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TTFT_E2E") == "1" {
			t.Fatalf("distribution binary %s not found (run make build): %v", bin, err)
		}
		t.Skipf("distribution binary %s not built; run `make test` for the end-to-end tests", bin)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// requireTool finds a tool such as prometheus or promtool, with the same
// skip/fail rule as collectorBinary.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("TTFT_E2E") == "1" {
			t.Fatalf("%s not installed (make test installs Debian's prometheus package): %v", name, err)
		}
		t.Skipf("%s not installed; run `make test`", name)
	}
	return p
}

// freePort asks the kernel for an unused loopback port.
// serveLoopback serves h on a free loopback port until the test ends and
// returns its base URL.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
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

// syncBuffer collects a child's output for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// process is a child started by a test and stopped at cleanup.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Output returns everything the process wrote so far.
func (p *process) Output() string { return p.out.String() }

// Exited reports whether the process has ended.
func (p *process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits (then SIGKILL) so every test leaves no child behind.
func (p *process) Stop(t *testing.T) {
	t.Helper()
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop within 15s of SIGTERM", p.name)
	}
}

func startProcess(t *testing.T, name string, dir string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			t.Logf("---- %s output ----\n%s", name, tail(p.Output(), 8000))
		}
	})
	return p
}

// startCollector writes config to a file and runs the distribution on it.
func startCollector(t *testing.T, config string) *process {
	t.Helper()
	bin := collectorBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProcess(t, "otelcol-ttft", dir, bin, "--config", path)
}

// waitFor polls cond until it holds or the deadline passes; it fails the test
// with the last error and the process output.
func waitFor(t *testing.T, p *process, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = cond(); last == nil {
			return
		}
		if p != nil && p.Exited() {
			t.Fatalf("%s exited while waiting for %s: %v\n%s", p.name, what, last, tail(p.Output(), 8000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, last)
}

// httpOK is a waitFor condition: GET url answers 200.
func httpOK(url string) func() error {
	return func() error {
		resp, err := http.Get(url) //nolint:gosec // loopback test URL
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// collectorReady is a waitFor condition for a collector with the
// health_check extension on healthURL: the URL answers 200 and the
// collector has logged that it runs. A health check alone can be answered
// by another package's test server that took the port after freePort let
// it go (go test runs packages in parallel); the log line is this process's
// own.
func collectorReady(p *process, healthURL string) func() error {
	health := httpOK(healthURL)
	return func() error {
		if err := health(); err != nil {
			return err
		}
		if !strings.Contains(p.Output(), "Everything is ready") {
			return fmt.Errorf("%s answers but %s has not logged that it is ready", healthURL, p.name)
		}
		return nil
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// yamlList renders paths as a YAML flow list for config templates.
func yamlList(items ...string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// postOTLP posts one OTLP/HTTP request until the collector accepts it.
func postOTLP(t *testing.T, col *process, url, contentType, what string, body []byte) {
	t.Helper()
	waitFor(t, col, 30*time.Second, "OTLP/HTTP to accept "+what, func() error {
		resp, err := http.Post(url, contentType, bytes.NewReader(body)) //nolint:gosec // loopback
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: %s", url, resp.Status)
		}
		return nil
	})
}
