// Package sample holds the gateway export `make run` reads. Its test proves
// the committed file is exactly what the committed command writes, and that it
// is realistic enough to show every part of the summary.
package sample

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

const committed = "gateway-export.csv"

func TestSampleRegeneratesByteForByte(t *testing.T) {
	out := filepath.Join(t.TempDir(), "export.csv")
	cmd := exec.Command("bash", "generate.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("generate.sh wrote %d bytes that differ from the committed %s (%d bytes): "+
			"regenerate it with examples/sample/generate.sh and commit both", len(got), committed, len(want))
	}
}

func TestSampleIsSmallAndRealistic(t *testing.T) {
	fi, err := os.Stat(committed)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 3<<20 {
		t.Errorf("%s is %d bytes; keep the committed sample under 3 MiB", committed, fi.Size())
	}
	f, err := os.Open(committed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	for _, c := range []string{"route_slug", "model", "status", "prompt_tokens", "attempts", "ttft_ms"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("header lacks %q: %v", c, rows[0])
		}
	}
	band := func(s string) string {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			return "unknown"
		case n < 2000:
			return "<2k"
		case n < 16000:
			return "2k-16k"
		case n < 64000:
			return "16k-64k"
		}
		return ">=64k"
	}
	routes, models, bands, statuses := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]int{}
	okPerTarget := map[string]int{}
	failovers, slow := 0, 0
	for _, r := range rows[1:] {
		routes[r[col["route_slug"]]] = true
		models[r[col["model"]]] = true
		b := band(r[col["prompt_tokens"]])
		bands[b] = true
		statuses[r[col["status"]]]++
		if r[col["status"]] == "ok" {
			okPerTarget[r[col["route_slug"]]+"/"+r[col["model"]]+"/"+b]++
		}
		if a, _ := strconv.Atoi(r[col["attempts"]]); a > 1 {
			failovers++
		}
		if ms, err := strconv.ParseFloat(r[col["ttft_ms"]], 64); err == nil && ms > 8000 {
			slow++
		}
	}
	if len(routes) < 3 || len(models) < 3 {
		t.Errorf("want several routes and models, got %d routes, %d models", len(routes), len(models))
	}
	for _, b := range []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"} {
		if !bands[b] {
			t.Errorf("no row in prompt band %s", b)
		}
	}
	for _, s := range []string{"ok", "error", "timeout_first_token", "timeout_idle", "timeout_deadline", "closed"} {
		if statuses[s] == 0 {
			t.Errorf("no row with status %s", s)
		}
	}
	if failovers == 0 || slow == 0 {
		t.Errorf("want failovers and a slow tail, got %d failovers, %d rows over 8 s", failovers, slow)
	}
	// p99.9 needs 1,000 successful samples per target and band (docs/architecture.md §2).
	big := 0
	for _, n := range okPerTarget {
		if n >= 1000 {
			big++
		}
	}
	if big < 3 {
		t.Errorf("only %d (target, band) pairs hold >= 1000 successful rows; p99.9 recommendations need them: %v", big, okPerTarget)
	}
}
