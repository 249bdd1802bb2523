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
