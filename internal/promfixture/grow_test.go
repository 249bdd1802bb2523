package promfixture

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGrowAddsExactlyExtraAndIsDeterministic: every series of the histogram
// gains exactly `extra` samples, buckets stay cumulative, other families are
// copied unchanged, and two runs give the same bytes.
func TestGrowAddsExactlyExtraAndIsDeterministic(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "bifrost-gateway", "bifrost-metrics.prom"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Grow(raw, BifrostTTFT, 500, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Grow(raw, BifrostTTFT, 500, 0.3)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs differ")
	}
	before, _ := Parse(bytes.NewReader(raw))
	after, err := Parse(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != len(after) {
		t.Fatalf("%d families, want %d", len(after), len(before))
	}
	old, grown := before[BifrostTTFT].GetMetric(), after[BifrostTTFT].GetMetric()
	if len(old) != 15 || len(grown) != 15 {
		t.Fatalf("series: %d → %d, want 15", len(old), len(grown))
	}
	for i := range old {
		ho, hg := old[i].GetHistogram(), grown[i].GetHistogram()
		if hg.GetSampleCount() != ho.GetSampleCount()+500 {
			t.Errorf("series %d: count %d → %d", i, ho.GetSampleCount(), hg.GetSampleCount())
		}
		var prev uint64
		for j, bk := range hg.GetBucket() {
			if bk.GetCumulativeCount() < prev || bk.GetCumulativeCount() < ho.GetBucket()[j].GetCumulativeCount() {
				t.Errorf("series %d bucket %d: not cumulative or shrank", i, j)
			}
			prev = bk.GetCumulativeCount()
		}
	}
	if _, err := Grow(raw, "no_such_metric", 1, 0.3); err == nil {
		t.Error("growing a missing histogram did not fail")
	}
}
