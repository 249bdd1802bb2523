package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func parseFile(t *testing.T, path string) *Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSummaryGroupsSeriesByTargetAndBand(t *testing.T) {
	s := parseFile(t, "testdata/metrics.txt")
	if len(s.Rows) != 3 {
		t.Fatalf("rows = %d, want 3 (agent 2k-16k, chat <2k, chat 16k-64k): %+v", len(s.Rows), s.Rows)
	}
	// Sorted by route, then band edge: agent first; chat <2k before 16k-64k.
	want := []Target{
		{Route: "agent", Model: "claude-sonnet-4-5", Provider: "anthropic", Band: "2k-16k"},
		{Route: "chat", Model: "gpt-4o", Provider: "openai", Band: "<2k"},
		{Route: "chat", Model: "gpt-4o", Provider: "openai", Band: "16k-64k"},
	}
	for i, w := range want {
		if s.Rows[i].Target != w {
			t.Errorf("row %d = %+v, want %+v", i, s.Rows[i].Target, w)
		}
	}
	chat := s.Rows[1]
	if chat.Requests != 2000 || chat.Failed != 100 {
		t.Errorf("chat <2k requests/failed = %v/%v, want 2000/100 (error and timeout are failures)", chat.Requests, chat.Failed)
	}
	if chat.MeasuredAt != "first_content" {
		t.Errorf("clock = %q, want first_content", chat.MeasuredAt)
	}
	if got := chat.Clock.Quantiles["0.999"]; got != 7.52 {
		t.Errorf("p99.9 = %v, want 7.52", got)
	}
	// The idle policy series carries no measured_at label: it still belongs to the row.
	if got := chat.Clock.Recommended["idle"]; got != 12 {
		t.Errorf("idle recommendation = %v, want 12", got)
	}
	if !chat.Clock.HasMargin || chat.Clock.Margin != 14.2 {
		t.Errorf("margin = %v (has %v), want 14.2", chat.Clock.Margin, chat.Clock.HasMargin)
	}
	if s.Rows[0].MeasuredAt != "first_chunk" {
		t.Errorf("agent clock = %q, want first_chunk when only first-chunk data exists", s.Rows[0].MeasuredAt)
	}
	if strings.Join(s.Policies, ",") != "first_token,gateway_cutoff,idle" {
		t.Errorf("policies = %v", s.Policies)
	}
}

func TestRenderShowsTimeoutsCutRatiosAndMissingValues(t *testing.T) {
	s := parseFile(t, "testdata/metrics.txt")
	var b bytes.Buffer
	render(&b, s)
	out := b.String()
	for _, want := range []string{
		"FIRST_TOKEN", "GATEWAY_CUTOFF", "IDLE", "MARGIN",
		"9.40s (0.05% cut)", "3.90s (1.2% cut)", "12.0s",
		"7.52s", "620ms", "-1.50s", "5.0%", "chunk*",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("want a header and 3 rows (+ legend), got:\n%s", out)
	}
	// Aligned: every table line has the same width.
	for _, l := range lines[1:4] {
		if len(l) != len(lines[0]) {
			t.Errorf("misaligned table:\n%s", out)
			break
		}
	}
}

func TestDurationFormatting(t *testing.T) {
	cases := map[float64]string{0.041: "41ms", 0.62: "620ms", 1.234: "1.23s", 12.5: "12.5s", 120: "120s", -1.5: "-1.50s"}
	for in, want := range cases {
		if got := duration(in); got != want {
			t.Errorf("duration(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBandOrder(t *testing.T) {
	bands := []string{"unknown", ">=64k", "16k-64k", "2k-16k", "<2k"}
	for i := 1; i < len(bands); i++ {
		if bandOrder(bands[i]) >= bandOrder(bands[i-1]) {
			t.Errorf("%q should sort before %q", bands[i], bands[i-1])
		}
	}
}

// collector.txt is a real scrape of the distribution's prometheus exporter
// on the bundled sample (two targets kept), so the parser meets the labels
// and suffixes the exporter really writes.
func TestSummaryOfARealScrape(t *testing.T) {
	s := parseFile(t, "testdata/collector.txt")
	var chat, agent *Row
	for i := range s.Rows {
		r := &s.Rows[i]
		switch r.Target {
		case Target{Route: "chat-default", Model: "gpt-4.1-mini", Provider: "openai", Band: "<2k"}:
			chat = r
		case Target{Route: "agent-tools", Model: "o4-mini", Provider: "openai", Band: "16k-64k"}:
			agent = r
		}
	}
	if chat == nil || agent == nil {
		t.Fatalf("rows missing: %+v", s.Rows)
	}
	// 2119 complete + 28 + 10 errors + 6 closed + 4 deadline + 10 idle timeouts.
	if chat.Requests != 2177 || chat.Failed != 58 {
		t.Errorf("chat requests/failed = %v/%v, want 2177/58", chat.Requests, chat.Failed)
	}
	if chat.Clock.Samples != 2119 {
		t.Errorf("chat window = %v, want the 2119 successful samples", chat.Clock.Samples)
	}
	if got := chat.Clock.Recommended["first_token"]; got != 9.8 {
		t.Errorf("chat first_token = %v, want 9.8", got)
	}
	if _, ok := chat.Clock.Quantiles["0.999"]; !ok {
		t.Error("chat has 2119 samples: p99.9 must be there")
	}
	// 1067 successful and 9 censored: WINDOW counts the successful ones only.
	if agent.Clock.Samples != 1067 {
		t.Errorf("agent window = %v, want 1067 (censored samples excluded)", agent.Clock.Samples)
	}
	if _, ok := agent.Clock.Quantiles["0.999"]; ok {
		t.Error("agent p99.9 should be absent (the collector withheld it)")
	}
	var b bytes.Buffer
	render(&b, s)
	if !strings.Contains(b.String(), "56.3s (0.8% cut)") {
		t.Errorf("agent's first_token timeout and cut ratio missing:\n%s", b.String())
	}
}

func TestFilterHidesSmallRowsButNeverAll(t *testing.T) {
	s := parseFile(t, "testdata/collector.txt")
	n := len(s.Rows)
	hidden := s.Filter(100)
	if hidden == 0 || len(s.Rows)+hidden != n {
		t.Errorf("Filter(100) hid %d of %d rows, %d left", hidden, n, len(s.Rows))
	}
	for _, r := range s.Rows {
		if r.Requests < 100 {
			t.Errorf("row with %v requests kept", r.Requests)
		}
	}
	if hidden := s.Filter(1e9); hidden != 0 || len(s.Rows) == 0 {
		t.Errorf("a filter that would hide every row must hide none; hid %d", hidden)
	}
}

// One target and band with an exact window and a histogram source's
// window (both band unknown, as a histogram knows no prompt size), and two
// histogram sources that differ only in observer and bucket kind: each
// window is a row of its own, never added to another.
func TestExactAndHistogramWindowsAreRowsOfTheirOwn(t *testing.T) {
	const l = `gen_ai_provider_name="openai",gen_ai_request_model="m",ttft_route="chat",ttft_prompt_band="unknown",ttft_measured_at="first_content"`
	exposition := `# TYPE ttft_requests_total counter
ttft_requests_total{gen_ai_provider_name="openai",gen_ai_request_model="m",ttft_route="chat",ttft_prompt_band="unknown",ttft_outcome="complete",ttft_first_content_seen="true"} 300
# TYPE ttft_window_samples gauge
ttft_window_samples{` + l + `,ttft_censored="false"} 300
ttft_window_samples{` + l + `,ttft_censored="false",ttft_observer="gateway",ttft_resolution="explicit_buckets",ttft_failed_over="false"} 5000
ttft_window_samples{` + l + `,ttft_censored="false",ttft_observer="server",ttft_resolution="exponential_buckets",ttft_failed_over="false"} 4000
# TYPE ttft_timeout_recommended_seconds gauge
ttft_timeout_recommended_seconds{` + l + `,ttft_policy="gateway_cutoff"} 2.7
ttft_timeout_recommended_seconds{` + l + `,ttft_policy="gateway_cutoff",ttft_observer="gateway",ttft_resolution="explicit_buckets",ttft_failed_over="false",ttft_quantile_bound="upper"} 6.3
ttft_timeout_recommended_seconds{` + l + `,ttft_policy="gateway_cutoff",ttft_observer="server",ttft_resolution="exponential_buckets",ttft_failed_over="false",ttft_quantile_bound="upper"} 1.9
`
	s, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 3 {
		t.Fatalf("%d rows, want 3: %+v", len(s.Rows), s.Rows)
	}
	want := []struct {
		observer string
		samples  float64
		cutoff   float64
	}{{"", 300, 2.7}, {"gateway", 5000, 6.3}, {"server", 4000, 1.9}}
	for i, w := range want {
		r := s.Rows[i]
		if r.Observer != w.observer || r.Clock.Samples != w.samples || r.Clock.Recommended["gateway_cutoff"] != w.cutoff {
			t.Errorf("row %d: observer %q, %v samples, cutoff %v; want %q, %v, %v", i, r.Observer, r.Clock.Samples, r.Clock.Recommended["gateway_cutoff"], w.observer, w.samples, w.cutoff)
		}
	}
	if r := s.Rows[0]; r.Requests != 300 {
		t.Errorf("the exact row has %v requests, want the counter's 300", r.Requests)
	}
	if cs := Cutoffs(s, "gateway_cutoff"); len(cs) != 1 || cs[0].Millis() != 6300 {
		t.Errorf("cutoffs %+v, want chat at 6300 ms: the slowest window of the route", cs)
	}
}

// A dimension beyond the target (service.name in config/examples/apps-otlp.yaml,
// served as service_name) splits rows: two services on one route keep
// their own quantiles and cutoffs, and the route's cutoff fits the slower.
// Merged, the row showed the slow p99 beside the fast cutoff, and the route
// got 1300 ms.
func TestOtherDimensionsAreRowsOfTheirOwn(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE ttft_requests_total counter\n# TYPE ttft_quantile_seconds gauge\n# TYPE ttft_timeout_recommended_seconds gauge\n")
	for _, svc := range []struct {
		name        string
		p99, cutoff float64
	}{{"fast", 1, 1.3}, {"slow", 9, 12}} {
		l := `gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",ttft_route="chat",ttft_prompt_band="<2k",service_name="` + svc.name + `",collector_instance_id="c1",otel_scope_name="x"`
		b.WriteString(`ttft_requests_total{` + l + `,ttft_outcome="complete",ttft_first_content_seen="true"} 500` + "\n")
		b.WriteString(`ttft_quantile_seconds{` + l + `,ttft_measured_at="first_content",quantile="0.99"} ` + strconv.FormatFloat(svc.p99, 'g', -1, 64) + "\n")
		b.WriteString(`ttft_timeout_recommended_seconds{` + l + `,ttft_measured_at="first_content",ttft_policy="gateway_cutoff"} ` + strconv.FormatFloat(svc.cutoff, 'g', -1, 64) + "\n")
	}
	s, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(s.Rows), s.Rows)
	}
	for i, want := range []struct {
		dims        string
		p99, cutoff float64
	}{{"service_name=fast", 1, 1.3}, {"service_name=slow", 9, 12}} {
		r := s.Rows[i]
		if r.Dims != want.dims || r.Requests != 500 || r.Clock.Quantiles["0.99"] != want.p99 || r.Clock.Recommended["gateway_cutoff"] != want.cutoff {
			t.Errorf("row %d: %q %v requests, p99 %v, cutoff %v; want %+v", i, r.Dims, r.Requests, r.Clock.Quantiles["0.99"], r.Clock.Recommended["gateway_cutoff"], want)
		}
	}
	if cs := Cutoffs(s, "gateway_cutoff"); len(cs) != 1 || cs[0].Millis() != 12000 {
		t.Errorf("cutoffs %+v, want chat at 12000 ms", cs)
	}
	var out bytes.Buffer
	render(&out, s)
	if !strings.Contains(out.String(), "DIMS") || !strings.Contains(out.String(), "service_name=slow") {
		t.Errorf("the table names the dimension:\n%s", out.String())
	}
}

// Hiding small rows from the table does not change the cutoff a route
// needs; a recommendation that is not a time in whole milliseconds within
// a day sets none.
func TestCutoffsIgnoreTheTableFilter(t *testing.T) {
	row := func(model string, requests, cutoff float64) string {
		l := `gen_ai_provider_name="openai",gen_ai_request_model="` + model + `",ttft_route="chat",ttft_prompt_band="<2k"`
		return `ttft_requests_total{` + l + `,ttft_outcome="complete",ttft_first_content_seen="true"} ` + strconv.FormatFloat(requests, 'f', -1, 64) + "\n" +
			`ttft_timeout_recommended_seconds{` + l + `,ttft_measured_at="first_content",ttft_policy="gateway_cutoff"} ` + strconv.FormatFloat(cutoff, 'g', -1, 64) + "\n"
	}
	body := "# TYPE ttft_requests_total counter\n# TYPE ttft_timeout_recommended_seconds gauge\n" +
		row("fast", 5000, 2) + row("slow", 500, 9) + row("broken", 5000, 1e300)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
	defer srv.Close()
	var out bytes.Buffer
	opts.cutoffJSON = true
	defer func() { opts.cutoffJSON = false }()
	if err := run(context.Background(), &out, srv.URL, time.Second, time.Second, 1000, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `{"ttft_timeout_ms": 9000}`) {
		t.Errorf("with the slow row hidden, the cutoff must still fit it:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "1e+300s") {
		t.Errorf("an absurd recommendation prints short:\n%s", out.String())
	}
}

// Rows of the bands "all" and "unknown" (both after the sized bands) come
// out in one order, and a label with a newline stays on its row.
func TestRowOrderAndCellText(t *testing.T) {
	exposition := "# TYPE ttft_requests_total counter\n" +
		`ttft_requests_total{gen_ai_request_model="nl\nx",ttft_prompt_band="unknown",ttft_outcome="complete"} 1` + "\n" +
		`ttft_requests_total{gen_ai_request_model="nl\nx",ttft_prompt_band="all",ttft_outcome="complete"} 1` + "\n"
	for range 20 {
		s, err := Parse(strings.NewReader(exposition))
		if err != nil {
			t.Fatal(err)
		}
		if s.Rows[0].Band != "all" || s.Rows[1].Band != "unknown" {
			t.Fatalf("bands %q, %q: want all, unknown", s.Rows[0].Band, s.Rows[1].Band)
		}
		var b bytes.Buffer
		render(&b, s)
		if n := strings.Count(b.String(), "\n"); n != 3 {
			t.Fatalf("%d lines, want a header and two rows:\n%s", n, b.String())
		}
	}
}
