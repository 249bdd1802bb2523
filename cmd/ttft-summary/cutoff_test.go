package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBucketedRowsShowIntervals: rows from histogram sources show each
// quantile as the interval it lies in, their fallback attempts apart, and
// the per-route cutoff comes from the slowest primary.
func TestBucketedRowsShowIntervals(t *testing.T) {
	s := parseFile(t, "testdata/bucketed.txt")
	var b bytes.Buffer
	render(&b, s)
	out := b.String()
	for _, want := range []string{"(5.00s, 10.0s]", "> 300s", "scn-normal (fallback)", "12.5s (0.05% cut)", "(a, b]: from a histogram's buckets"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	cs := Cutoffs(s, "gateway_cutoff")
	if len(cs) != 3 {
		t.Fatalf("cutoffs for %d routes, want 3: %+v", len(cs), cs)
	}
	byRoute := map[string]RouteCutoff{}
	for _, c := range cs {
		byRoute[c.Route] = c
	}
	if c := byRoute["stall-guard"]; !c.OK || c.Millis() != 12500 || c.From.Model != "scn-stall" {
		t.Errorf("stall-guard: %+v, want 12500 ms from its slowest primary scn-stall", c)
	}
	if c := byRoute["ratelimit-guard"]; c.OK || !strings.Contains(c.Note, "only fallback attempts") {
		t.Errorf("ratelimit-guard: %+v, want no cutoff: only its fallback was observed", c)
	}
	if c := byRoute["claude-rule"]; c.OK || !strings.Contains(c.Note, "no gateway_cutoff recommendation") {
		t.Errorf("claude-rule: %+v, want no cutoff from a first_chunk clock", c)
	}
	b.Reset()
	renderCutoffJSON(&b, cs)
	if got, want := b.String(), "# routing rule stall-guard\n{\"ttft_timeout_ms\": 12500}\n"; got != want {
		t.Errorf("JSON bodies:\n%s\nwant:\n%s", got, want)
	}
}

// TestBifrostSummaryGolden renders the exposition the end-to-end test
// captured from the collector that scraped the Bifrost fixture, and checks
// it against the golden output the README shows.
func TestBifrostSummaryGolden(t *testing.T) {
	s := parseFile(t, "testdata/bifrost-collector.txt")
	var b bytes.Buffer
	render(&b, s)
	cs := Cutoffs(s, "gateway_cutoff")
	renderCutoffs(&b, cs, "gateway_cutoff")
	b.WriteString("\n")
	renderCutoffJSON(&b, cs)
	golden, err := os.ReadFile("testdata/bifrost-summary.txt")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(golden) {
		t.Errorf("render differs from testdata/bifrost-summary.txt:\n%s", b.String())
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, golden) {
		t.Errorf("README.md does not show testdata/bifrost-summary.txt verbatim")
	}
}
