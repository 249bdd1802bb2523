package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

// The labels every fleet-wide expression groups by: a target and its prompt band.
const targetBand = "gen_ai_provider_name, gen_ai_request_model, ttft_route, ttft_prompt_band"

// TestPrometheusNativeHistograms runs the distribution against real
// Prometheus (Debian's 2.42), fed both ways: one scrapes the prometheus
// exporter (protobuf, negotiated by Prometheus) and evaluates the rules, a
// second receives the prometheus_remote_write exporter's series (one path
// per Prometheus, as the README says: the rules count each request once).
// A ttft_path label names the path. It proves that
// the exponential histograms arrive as native histograms both ways, that
// every PromQL expression shipped in the dashboard and the rules returns data,
// and that histogram_quantile over the native histogram agrees with the
// collector's own ttft.quantile gauge.
func TestPrometheusNativeHistograms(t *testing.T) {
	collectorBinary(t) // skip or fail early, before starting Prometheus
	promBin := requireTool(t, "prometheus")
	promtool := requireTool(t, "promtool")
	started := time.Now()

	rules, err := filepath.Abs(filepath.Join("..", "prometheus", "ttft-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}

	dir := t.TempDir()
	// The bundled sample, fed in two steps: a few rows first, so the first
	// samples Prometheus stores are small and increase() over the rules'
	// one-day range sees nearly every request (increase() cannot count what a
	// series already held at its first sample).
	sample, err := os.ReadFile(filepath.Join("..", "examples", "sample", "gateway-export.csv"))
	if err != nil {
		t.Fatal(err)
	}
	const firstRows = 100
	sampleRows := bytes.Count(sample, []byte("\n")) - 1
	cut := 0
	for i := 0; i <= firstRows; i++ { // the header and firstRows rows
		cut += bytes.IndexByte(sample[cut:], '\n') + 1
	}
	export := filepath.Join(dir, "gateway-export.csv")
	if err := os.WriteFile(export, sample[:cut], 0o600); err != nil {
		t.Fatal(err)
	}

	promPort, metricsPort, otlpPort, healthPort := freePort(t), freePort(t), freePort(t), freePort(t)
	prom := fmt.Sprintf("http://127.0.0.1:%d", promPort)

	promConfig := filepath.Join(dir, "prometheus.yml")
	writeFile(t, promConfig, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: otelcol-ttft
    static_configs:
      - targets: ["127.0.0.1:%d"]
        labels: {ttft_path: scrape}
`, rules, metricsPort))
	promProc := startProcess(t, "prometheus", dir, promBin,
		"--config.file="+promConfig,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort),
		"--enable-feature=native-histograms",
	)
	waitFor(t, promProc, 30*time.Second, "prometheus ready", httpOK(prom+"/-/ready"))
	// Remote write goes to a Prometheus of its own, as the README says (one
	// path per collector): the rules above then see every series once, and
	// their volume gates count each request once.
	rwPort := freePort(t)
	promRW := fmt.Sprintf("http://127.0.0.1:%d", rwPort)
	rwConfig := filepath.Join(dir, "prometheus-rw.yml")
	writeFile(t, rwConfig, "global:\n  evaluation_interval: 1s\n")
	rwProc := startProcess(t, "prometheus-rw", dir, promBin,
		"--config.file="+rwConfig,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb-rw"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", rwPort),
		"--enable-feature=native-histograms",
		"--web.enable-remote-write-receiver",
	)
	waitFor(t, rwProc, 30*time.Second, "prometheus (remote write) ready", httpOK(promRW+"/-/ready"))
	promOf := map[string]string{"scrape": prom, "remote_write": promRW}

	collector := startCollector(t, fmt.Sprintf(`
extensions:
  health_check:
    endpoint: 127.0.0.1:%[1]d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[2]d
  llm_gateway_log:
    include: [%[3]q]
    start_at: beginning
    format: infro_csv
processors:
  genai_ttft: {}
connectors:
  genai_ttft:
    flush_interval: 1s
exporters:
  prometheus:
    endpoint: 127.0.0.1:%[4]d
  prometheus_remote_write:
    http:
      endpoint: %[5]s/api/v1/write
    external_labels:
      ttft_path: remote_write
service:
  telemetry:
    metrics:
      level: none
  extensions: [health_check]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [genai_ttft]
      exporters: [genai_ttft]
    logs:
      receivers: [llm_gateway_log]
      exporters: [genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus, prometheus_remote_write]
`, healthPort, otlpPort, export, metricsPort, promRW))
	waitFor(t, collector, 30*time.Second, "collector health check", collectorReady(collector, fmt.Sprintf("http://127.0.0.1:%d/", healthPort)))

	// Instrumented-app spans with ttft.chunk events: the only source here of
	// first-chunk times and chunk gaps (the gateway export has neither).
	rng := rand.New(rand.NewPCG(7, 11))
	otlpURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort)
	const firstSpans, spans, moreSpans = 20, 1100, 400
	sendSpans(t, otlpURL, rng, firstSpans)
	want := float64(firstRows + firstSpans)
	for _, path := range []string{"scrape", "remote_write"} {
		waitFor(t, collector, 60*time.Second, "first requests counted via "+path, requestsEqual(promOf[path], path, want))
	}

	appendBytes(t, export, sample[cut:])
	sendSpans(t, otlpURL, rng, spans-firstSpans)
	want = float64(sampleRows + spans)
	for _, path := range []string{"scrape", "remote_write"} {
		waitFor(t, collector, 60*time.Second, "every request counted via "+path, requestsEqual(promOf[path], path, want))
	}
	t.Logf("%s: sample (%d rows) and %d spans in Prometheus via both paths", time.Since(started).Round(time.Second), sampleRows, spans)

	// More traffic, so rate() sees an increase between two samples.
	const moreRows = 3000
	appendRows(t, export, moreRows, sampleRows+1)
	sendSpans(t, otlpURL, rng, moreSpans)
	want += moreRows + moreSpans
	for _, path := range []string{"scrape", "remote_write"} {
		waitFor(t, collector, 60*time.Second, "appended requests counted via "+path, requestsEqual(promOf[path], path, want))
	}
	t.Logf("%s: appended %d rows and %d spans", time.Since(started).Round(time.Second), moreRows, moreSpans)

	t.Run("native histograms via both paths", func(t *testing.T) {
		for _, path := range []string{"scrape", "remote_write"} {
			for _, metric := range []string{"ttft_time_to_first_token_seconds", "ttft_time_to_first_chunk_seconds", "ttft_max_chunk_gap_seconds", "ttft_duration_seconds"} {
				res, err := promQuery(promOf[path], fmt.Sprintf(`%s{ttft_path=%q}`, metric, path))
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 {
					t.Errorf("%s via %s: no series", metric, path)
					continue
				}
				for _, s := range res {
					if s.Histogram == nil {
						t.Errorf("%s via %s arrived as a float series, not a native histogram: %v", metric, path, s.Metric)
						break
					}
				}
			}
			// No classic bucket series: Prometheus stored the native form only.
			if res, _ := promQuery(promOf[path], fmt.Sprintf(`ttft_time_to_first_token_seconds_bucket{ttft_path=%q}`, path)); len(res) > 0 {
				t.Errorf("via %s: %d classic _bucket series exist beside the native histogram", path, len(res))
			}
		}
		// Both paths carry the same counts.
		counts := map[string]float64{}
		for _, path := range []string{"scrape", "remote_write"} {
			res, err := promQuery(promOf[path], fmt.Sprintf(`sum(histogram_count(ttft_time_to_first_token_seconds{ttft_path=%q}))`, path))
			if err != nil || len(res) != 1 {
				t.Fatalf("histogram_count via %s: %v %v", path, res, err)
			}
			counts[path] = res[0].Value
		}
		if counts["scrape"] != counts["remote_write"] || counts["scrape"] == 0 {
			t.Errorf("histogram_count differs between paths: %v", counts)
		}
		t.Logf("histogram_count(ttft_time_to_first_token_seconds) = %v on both paths", counts["scrape"])
	})

	t.Run("dashboard and rule expressions return data", func(t *testing.T) {
		exprs := dashboardExprs(t)
		exprs = append(exprs, ruleExprs(t, rules)...)
		if len(exprs) < 20 {
			t.Fatalf("found only %d expressions in the dashboard and rules", len(exprs))
		}
		pending := map[string]string{}
		for _, e := range exprs {
			pending[e.expr] = e.where
		}
		// Recording rules are evaluated every second; a few rounds may be needed.
		deadline := time.Now().Add(45 * time.Second)
		for len(pending) > 0 && time.Now().Before(deadline) {
			for expr := range pending {
				if res, err := promQuery(prom, expr); err == nil && hasFinite(res) {
					delete(pending, expr)
				}
			}
			if len(pending) > 0 {
				time.Sleep(time.Second)
			}
		}
		for expr, where := range pending {
			res, err := promQuery(prom, expr)
			t.Errorf("%s returned no finite data (err %v, %d series):\n%s", where, err, len(res), expr)
		}
		t.Logf("%d expressions checked", len(exprs))
	})

	t.Run("histogram_quantile agrees with the ttft.quantile gauge", func(t *testing.T) {
		for _, path := range []string{"scrape", "remote_write"} {
			compareQuantiles(t, promOf[path], path)
		}
	})
	t.Run("ttft-summary reads the live endpoint", func(t *testing.T) {
		cmd := exec.Command("go", "run", "./cmd/ttft-summary", "-once", "-wait", "20s",
			"-url", fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ttft-summary: %v\n%s", err, out)
		}
		// The sample's busiest target has p99.9 and every TTFT policy.
		var row string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "chat-default ") && strings.Contains(l, " gpt-4.1-mini ") && strings.Contains(l, " <2k ") {
				row = l
			}
		}
		if row == "" || strings.Count(row, "s (") < 2 || !strings.Contains(string(out), "FIRST_TOKEN") || !strings.Contains(string(out), "GATEWAY_CUTOFF") {
			t.Errorf("summary lacks the chat-default/gpt-4.1-mini/<2k row with its recommendations:\n%s", out)
		}
		t.Logf("%s", out)
	})
	t.Logf("whole test: %s", time.Since(started).Round(time.Second))
}

// compareQuantiles checks p99 for every target and band the collector
// reports: histogram_quantile over the summed native histogram of successful
// first-content requests that did not fail over against the collector's own
// gauge. The newest
// histogram and gauge samples can come from different flushes for a moment
// under load; a real disagreement persists, so it retries for a while and
// judges the last attempt.
func compareQuantiles(t *testing.T, prom, path string) {
	t.Helper()
	var problems []string
	var report string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Second) {
		problems, report = quantileAgreement(prom, path)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Log(report)
	for _, p := range problems {
		t.Error(p)
	}
}

func quantileAgreement(prom, path string) (problems []string, report string) {
	// The windows hold requests of one attempt; the sample's rows give
	// attempts only, so failed_over=false is exactly those.
	sel := fmt.Sprintf(`ttft_outcome="complete", ttft_measured_at="first_content", ttft_failed_over="false", ttft_path=%q`, path)
	hist, err := promQuery(prom, fmt.Sprintf(`histogram_quantile(0.99, sum by (%s) (ttft_time_to_first_token_seconds{%s}))`, targetBand, sel))
	if err != nil {
		return []string{err.Error()}, ""
	}
	gauge, err := promQuery(prom, fmt.Sprintf(`max by (%s) (ttft_quantile_seconds{quantile="0.99", ttft_measured_at="first_content", ttft_path=%q})`, targetBand, path))
	if err != nil {
		return []string{err.Error()}, ""
	}
	// Censored samples (requests cut by a first-token timeout) enter the
	// gauge's product-limit estimate; a histogram of successes cannot hold them.
	censored, err := promQuery(prom, fmt.Sprintf(`sum by (%s) (ttft_window_samples{ttft_censored="true", ttft_measured_at="first_content", ttft_path=%q}) > 0`, targetBand, path))
	if err != nil {
		return []string{err.Error()}, ""
	}
	isCensored := map[string]bool{}
	for _, s := range censored {
		isCensored[s.key()] = true
	}
	byKey := map[string]float64{}
	for _, s := range hist {
		byKey[s.key()] = s.Value
	}
	var lines []string
	compared, worst := 0, 0.0
	for _, g := range gauge {
		h, ok := byKey[g.key()]
		if !ok || math.IsNaN(h) {
			problems = append(problems, fmt.Sprintf("via %s: gauge for %s has no native histogram counterpart", path, g.key()))
			continue
		}
		diff := math.Abs(h-g.Value) / g.Value
		note := ""
		if isCensored[g.key()] {
			note = " (censored samples: not compared)"
		} else {
			compared++
			worst = math.Max(worst, diff)
			if diff > 0.05 {
				problems = append(problems, fmt.Sprintf("via %s, %s: histogram_quantile(0.99) = %.4fs, ttft_quantile_seconds = %.4fs: %.1f%% apart (limit 5%%)", path, g.key(), h, g.Value, diff*100))
			}
		}
		lines = append(lines, fmt.Sprintf("  %-60s hist %.4fs gauge %.4fs diff %.2f%%%s", g.key(), h, g.Value, diff*100, note))
	}
	sort.Strings(lines)
	if compared < 5 {
		problems = append(problems, fmt.Sprintf("via %s: only %d series could be compared; want at least 5", path, compared))
	}
	return problems, fmt.Sprintf("p99 via %s, %d series compared, worst %.2f%%:\n%s", path, compared, worst*100, strings.Join(lines, "\n"))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// appendRows appends gateway rows (no header) the way a gateway appends to its export.
func appendRows(t *testing.T, path string, rows, firstID int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := gatewayexport.Write(f, gatewayexport.Options{
		Rows: rows, Seed: 2, Start: time.Now().Add(-time.Minute).UTC(), Span: time.Minute, FirstID: firstID,
	}); err != nil {
		t.Fatal(err)
	}
}

// sendSpans posts n streamed chat spans with ttft.chunk events over OTLP/HTTP:
// a role-only chunk first, then content chunks, some with a long pause.
func sendSpans(t *testing.T, endpoint string, rng *rand.Rand, n int) {
	t.Helper()
	for sent := 0; sent < n; {
		batch := min(250, n-sent)
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "e2e-chat-app")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("e2e.ttft.chunks")
		now := time.Now()
		for i := 0; i < batch; i++ {
			start := now.Add(-time.Duration(20+rng.IntN(20)) * time.Second)
			s := ss.Spans().AppendEmpty()
			var tid [16]byte
			var sid [8]byte
			for j := range tid {
				tid[j] = byte(rng.IntN(256))
			}
			for j := range sid {
				sid[j] = byte(rng.IntN(256))
			}
			s.SetTraceID(tid)
			s.SetSpanID(sid)
			s.SetName("chat gpt-4.1-mini")
			s.SetKind(ptrace.SpanKindClient)
			s.Status().SetCode(ptrace.StatusCodeOk)
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4.1-mini")
			a.PutStr("ttft.route", "assistant-stream")
			a.PutBool("gen_ai.request.stream", true)
			a.PutInt("gen_ai.usage.input_tokens", int64(200+rng.IntN(1700)))
			a.PutInt("gen_ai.usage.output_tokens", 40)
			a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")

			at := time.Duration((0.02 + 0.05*rng.Float64()) * float64(time.Second))
			chunk(s, start, at, "role")
			at = time.Duration(0.7 * math.Exp(0.5*rng.NormFloat64()) * float64(time.Second))
			chunk(s, start, at, "content")
			for c := 0; c < 8; c++ {
				gap := 0.03 * math.Exp(0.6*rng.NormFloat64())
				if rng.Float64() < 0.03 { // a reasoning pause
					gap = 1 + 3*rng.Float64()
				}
				at += time.Duration(gap * float64(time.Second))
				chunk(s, start, at, "content")
			}
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(at + 5*time.Millisecond)))
		}
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(endpoint, "application/json", bytes.NewReader(body)) //nolint:gosec // loopback
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s: %s", endpoint, resp.Status, msg)
		}
		sent += batch
	}
}

func chunk(s ptrace.Span, start time.Time, at time.Duration, kind string) {
	e := s.Events().AppendEmpty()
	e.SetName("ttft.chunk")
	e.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(at)))
	e.Attributes().PutStr("ttft.chunk.kind", kind)
}

// requestsEqual waits for sum(ttft_requests_total) on one path to reach want:
// every request, successful or not, counted exactly once.
func requestsEqual(prom, path string, want float64) func() error {
	return func() error {
		res, err := promQuery(prom, fmt.Sprintf(`sum(ttft_requests_total{ttft_path=%q})`, path))
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return fmt.Errorf("no ttft_requests_total via %s yet", path)
		}
		if got := res[0].Value; got != want {
			if got > want {
				return fmt.Errorf("ttft_requests_total via %s = %v, more than the %v requests sent", path, got, want)
			}
			return fmt.Errorf("ttft_requests_total via %s = %v, want %v", path, got, want)
		}
		return nil
	}
}

// promSample is one element of an instant-query vector.
type promSample struct {
	Metric    map[string]string
	Value     float64
	Histogram *promHistogram
}

type promHistogram struct {
	Count string `json:"count"`
	Sum   string `json:"sum"`
}

func (s promSample) key() string {
	return fmt.Sprintf("%s/%s/%s/%s", s.Metric["ttft_route"], s.Metric["gen_ai_request_model"], s.Metric["gen_ai_provider_name"], s.Metric["ttft_prompt_band"])
}

func promQuery(prom, expr string) ([]promSample, error) {
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(expr)) //nolint:gosec // loopback
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric    map[string]string `json:"metric"`
				Value     []any             `json:"value"`
				Histogram []json.RawMessage `json:"histogram"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, body.Error)
	}
	var out []promSample
	switch body.Data.ResultType {
	case "vector":
	case "scalar":
		return nil, fmt.Errorf("query %s: scalar result", expr)
	default:
		return nil, fmt.Errorf("query %s: result type %s", expr, body.Data.ResultType)
	}
	for _, r := range body.Data.Result {
		s := promSample{Metric: r.Metric, Value: math.NaN()}
		if len(r.Value) == 2 {
			if str, ok := r.Value[1].(string); ok {
				s.Value, _ = strconv.ParseFloat(str, 64)
			}
		}
		if len(r.Histogram) == 2 {
			var h promHistogram
			if err := json.Unmarshal(r.Histogram[1], &h); err != nil {
				return nil, err
			}
			s.Histogram = &h
		}
		out = append(out, s)
	}
	return out, nil
}

func hasFinite(res []promSample) bool {
	for _, s := range res {
		if s.Histogram != nil || (!math.IsNaN(s.Value) && !math.IsInf(s.Value, 0)) {
			return true
		}
	}
	return false
}

type located struct{ expr, where string }

// dashboardVars replaces Grafana's variables with what a user selecting
// "All" would send. The rate interval covers the whole test, so the increase
// between the test's two feeding steps stays inside it however slow the machine.
var dashboardVars = strings.NewReplacer(
	"$__rate_interval", "5m",
	"${__rate_interval}", "5m",
	"$__interval", "15s",
	"$__range", "1h",
	"$provider", ".*", "${provider}", ".*",
	"$model", ".*", "${model}", ".*",
	"$route", ".*", "${route}", ".*",
	"$band", ".*", "${band}", ".*",
)

func dashboardExprs(t *testing.T) []located {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "dashboards", "ttft.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	var out []located
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			expr := dashboardVars.Replace(tg.Expr)
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q %s: unsubstituted variable in %s", p.Title, tg.RefID, expr)
			}
			out = append(out, located{expr, fmt.Sprintf("dashboard panel %q query %s", p.Title, tg.RefID)})
		}
	}
	return out
}

// comparison matches the last line of an alert expression: its comparison
// operator, optional matching clause, and right-hand side.
var comparison = regexp.MustCompile(`^\s*(==|!=|>=|<=|>|<)\s*(?:bool\s+)?(?:(?:on|ignoring)\s*\([^)]*\)\s*)?(?:(?:group_left|group_right)\s*(?:\([^)]*\))?\s*)?(.+)$`)

// ruleExprs returns every recording rule's expression and both sides of
// every alert's comparison (an alert that does not fire has no data; its
// inputs must).
func ruleExprs(t *testing.T, path string) []located {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Record string `yaml:"record"`
				Alert  string `yaml:"alert"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	var out []located
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				out = append(out, located{r.Expr, "recording rule " + r.Record})
				continue
			}
			lines := strings.Split(strings.TrimSpace(r.Expr), "\n")
			m := comparison.FindStringSubmatch(lines[len(lines)-1])
			if m == nil || len(lines) < 2 {
				t.Errorf("alert %s: put the comparison on the expression's last line so both sides can be tested:\n%s", r.Alert, r.Expr)
				continue
			}
			out = append(out, located{strings.Join(lines[:len(lines)-1], "\n"), "left side of alert " + r.Alert})
			if _, err := strconv.ParseFloat(strings.TrimSpace(m[2]), 64); err != nil {
				out = append(out, located{m[2], "right side of alert " + r.Alert})
			}
		}
	}
	return out
}
