package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
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
