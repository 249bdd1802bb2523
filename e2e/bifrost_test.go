package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-ttft/otelcol-ttft/internal/promfixture"
)

// summaryGolden is ttft-summary's output on the collector that scraped the
// Bifrost fixture; the README shows it verbatim (cmd/ttft-summary tests it).
const (
	summaryGolden      = "../cmd/ttft-summary/testdata/bifrost-summary.txt"
	expositionGolden   = "../cmd/ttft-summary/testdata/bifrost-collector.txt"
	bifrostExtra       = 2000 // samples added per series for the second scrape
	bifrostSigma       = 0.3
	updateGoldenEnvVar = "TTFT_UPDATE_GOLDEN"
)

// TestBifrostHistogramEndToEnd runs config/examples/bifrost-prometheus.yaml
// on the built binary against a local server that serves the real Bifrost
// exposition, then a grown one: the prometheus receiver scrapes it, the
// connector emits quantile intervals and recommendations per provider,
// model and routing rule, and ttft-summary prints the per-rule
// ttft_timeout_ms.
func TestBifrostHistogramEndToEnd(t *testing.T) {
	collectorBinary(t) // skip or fail early
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "bifrost-gateway", "bifrost-metrics.prom"))
	if err != nil {
		t.Fatal(err)
	}
	grown, err := promfixture.Grow(fixture, promfixture.BifrostTTFT, bifrostExtra, bifrostSigma)
	if err != nil {
		t.Fatal(err)
	}

	// Serve the capture until it was scraped twice, then the grown scrape.
	var scrapes atomic.Int64
	bifrost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		body := fixture
		if scrapes.Add(1) > 2 {
			body = grown
		}
		_, _ = w.Write(body)
	}))
	defer bifrost.Close()

	raw, err := os.ReadFile(filepath.Join("..", "config", "examples", "bifrost-prometheus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	metricsPort, healthPort := freePort(t), freePort(t)
	cfg := strings.NewReplacer(
		"${env:BIFROST_METRICS_TARGET}", strings.TrimPrefix(bifrost.URL, "http://"),
		"scrape_interval: 15s", "scrape_interval: 1s",
		"flush_interval: 15s", "flush_interval: 1s",
		"localhost:8889", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"localhost:13133", fmt.Sprintf("127.0.0.1:%d", healthPort),
	).Replace(string(raw))
	for _, want := range []string{"${env:BIFROST_METRICS_TARGET}", "scrape_interval: 15s", "flush_interval: 15s", "localhost:8889", "localhost:13133"} {
		if !strings.Contains(string(raw), want) {
			t.Fatalf("config/examples/bifrost-prometheus.yaml no longer has %q, which this test relies on", want)
		}
	}
	cfg = strings.Replace(cfg, "\nservice:\n", "\nservice:\n  telemetry:\n    metrics:\n      level: none\n", 1)
	collector := startCollector(t, cfg)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	var fams map[string]*dto.MetricFamily
	var exposition []byte
	waitFor(t, collector, 60*time.Second, "recommendations from the grown scrape", func() error {
		resp, err := http.Get(metricsURL) //nolint:gosec // loopback test URL
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		fams, err = promfixture.Parse(bytes.NewReader(body))
		if err != nil {
			return err
		}
		rec := fams["ttft_timeout_recommended_seconds"]
		if rec == nil {
			return fmt.Errorf("no ttft_timeout_recommended_seconds yet (%d scrapes served)", scrapes.Load())
		}
		// Every openai primary series passes p99.9's gate only after the growth.
		n := 0
		for _, m := range rec.GetMetric() {
			if label(m, "ttft_policy") == "first_token" {
				n++
			}
		}
		if n < 8 {
			return fmt.Errorf("%d first_token recommendations, want 8 (the openai series of the fixture)", n)
		}
		exposition = body
		return nil
	})

	samples := fams["ttft_window_samples"]
	if samples == nil {
		t.Fatal("no ttft_window_samples")
	}
	byTarget := map[string]*dto.Metric{}
	for _, m := range samples.GetMetric() {
		if label(m, "ttft_resolution") != "explicit_buckets" {
			t.Errorf("window series without ttft_resolution=explicit_buckets: %v", m.GetLabel())
		}
		k := label(m, "gen_ai_provider_name") + "/" + label(m, "gen_ai_request_model") + "/" + label(m, "ttft_route") + "/" + label(m, "ttft_failed_over")
		byTarget[k] = m
		want := "first_content"
		if label(m, "gen_ai_provider_name") == "anthropic" {
			want = "first_chunk"
		}
		if got := label(m, "ttft_measured_at"); got != want {
			t.Errorf("%s: ttft_measured_at %q, want %q", k, got, want)
		}
		if v := m.GetGauge().GetValue(); v != bifrostExtra {
			t.Errorf("%s: %v samples in the window, want %d (the growth only; the first scrape is the baseline)", k, v, bifrostExtra)
		}
	}
	if len(byTarget) != 15 {
		t.Errorf("%d window series, want 15 (one per fixture series): %v", len(byTarget), keys(byTarget))
	}
	for _, k := range []string{"openai/scn-stall/stall-guard/false", "openai/scn-normal/ratelimit-guard/true", "anthropic/scn-normal//true", "openai/scn-normal//false"} {
		if byTarget[k] == nil {
			t.Errorf("no window series %s", k)
		}
	}

	// Both bounds of each quantile; the recommendation starts from the upper one.
	var lower, upper int
	for _, m := range fams["ttft_quantile_seconds"].GetMetric() {
		switch label(m, "ttft_quantile_bound") {
		case "lower":
			lower++
		case "upper":
			upper++
		default:
			t.Errorf("ttft_quantile_seconds without ttft_quantile_bound: %v", m.GetLabel())
		}
	}
	if lower == 0 || upper == 0 {
		t.Errorf("quantile bounds: %d lower, %d upper", lower, upper)
	}
	for _, m := range fams["ttft_timeout_recommended_seconds"].GetMetric() {
		if label(m, "gen_ai_provider_name") == "anthropic" {
			t.Errorf("a default policy recommended from Anthropic's first_chunk clock: %v", m.GetLabel())
		}
	}

	// ttft-summary on the live endpoint: per routing rule, ttft_timeout_ms.
	cmd := exec.Command("go", "run", "./cmd/ttft-summary", "-once", "-wait", "20s", "-min-requests", "0", "-ttft-timeout-json", "-url", metricsURL)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ttft-summary: %v\n%s", err, out)
	}
	summary := dropHeader(string(out))
	t.Logf("ttft-summary:\n%s", summary)
	cutoffs := map[string]string{} // route → the cutoff line's second field
	for _, l := range strings.Split(summary, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && (f[0] == "stall-guard" || f[0] == "ratelimit-guard") && !strings.Contains(l, "unknown") {
			cutoffs[f[0]] = f[1] + " " + strings.Join(f[2:], " ")
		}
	}
	if c := cutoffs["stall-guard"]; !strings.HasPrefix(c, "12500 openai/scn-stall content") {
		t.Errorf("stall-guard cutoff line %q, want 12500 ms from openai/scn-stall", c)
	}
	if c := cutoffs["ratelimit-guard"]; !strings.HasPrefix(c, "- only fallback attempts observed") {
		t.Errorf("ratelimit-guard cutoff line %q, want none: only its fallback was observed", c)
	}
	if !strings.Contains(summary, "# routing rule stall-guard\n{\"ttft_timeout_ms\": 12500}\n") {
		t.Errorf("summary lacks stall-guard's update body")
	}
	if os.Getenv(updateGoldenEnvVar) == "1" {
		writeFile(t, summaryGolden, summary)
		writeFile(t, expositionGolden, string(exposition))
		return
	}
	golden, err := os.ReadFile(summaryGolden)
	if err != nil {
		t.Fatalf("%v (run with %s=1 to write it)", err, updateGoldenEnvVar)
	}
	if string(golden) != summary {
		t.Errorf("ttft-summary output differs from %s (rerun with %s=1 and review the diff):\n%s", summaryGolden, updateGoldenEnvVar, summary)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// dropHeader removes ttft-summary's first line (time and URL), which differ per run.
func dropHeader(s string) string {
	s = strings.TrimLeft(s, "\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
