package quantile

import (
	"math"
	"testing"
)

// atIndex is the value that closes bucket i (exact powers of γ belong to the bucket they close).
func atIndex(i int) float64 { return math.Exp2(float64(i) / BucketsPerOctave) }

func TestMinValueHasItsOwnBucket(t *testing.T) {
	s := NewSketch()
	s.Add(MinValue)
	if n := s.AddCounted(MinValue); n != 0 {
		t.Errorf("AddCounted(MinValue) = %d, want 0: MinValue is the smallest value with its own bucket", n)
	}
	if s.ZeroCount() != 0 || s.Count() != 2 {
		t.Errorf("after two MinValue: count %d, zero %d; want 2, 0", s.Count(), s.ZeroCount())
	}
}

func TestCountAboveTheMinimumLeavesItOut(t *testing.T) {
	s := sketchOf(1, 2, 3)
	if got := s.CountAbove(1); got != 2 {
		t.Errorf("CountAbove(min) = %d, want 2: the minimum is not above itself", got)
	}
}

func TestMergeKeepsTheOthersCollapsed(t *testing.T) {
	o := sketchOf(1e-6, 1e4) // 33 octaves: the cap folds 1e-6 into the lowest bucket
	if o.Collapsed() != 1 {
		t.Fatalf("o.Collapsed() = %d, want 1", o.Collapsed())
	}
	s := NewSketch()
	s.Merge(o)
	if s.Collapsed() != 1 {
		t.Errorf("after merging o: Collapsed %d, want 1", s.Collapsed())
	}
}

func TestCapFoldsOnlyBucketsBelowTheRange(t *testing.T) {
	const lo = -1280 // 2^-10 s
	s := NewSketch()
	s.Add(atIndex(lo))
	s.Add(atIndex(lo + 10))
	// The new top leaves lo+10 the lowest bucket kept: only lo's value loses its bucket.
	if n := s.AddCounted(atIndex(lo + 10 + MaxBuckets - 1)); n != 1 {
		t.Errorf("AddCounted at the new top = %d, want 1", n)
	}
	if s.Collapsed() != 1 {
		t.Errorf("Collapsed %d, want 1", s.Collapsed())
	}
	if got := s.st.get(lo + 10); got != 2 {
		t.Errorf("lowest kept bucket holds %d, want 2 (its own and the folded one)", got)
	}
}

func TestMergeOfADenseRunCutByTheCapEqualsOneSketch(t *testing.T) {
	// o is a dense run of 200 buckets near 1e-7 s; s holds one value of 1000 s,
	// so the merged range passes the cap inside o's run.
	const first = -2977
	o, all := NewSketch(), NewSketch()
	for i := range 200 {
		o.Add(atIndex(first + i))
		all.Add(atIndex(first + i))
	}
	if !o.st.dense {
		t.Fatal("o must be dense for Merge's dense path")
	}
	s := sketchOf(1000)
	all.Add(1000)
	s.Merge(o)
	if s.Count() != all.Count() || s.Collapsed() != all.Collapsed() {
		t.Fatalf("merged count %d collapsed %d, one sketch %d %d", s.Count(), s.Collapsed(), all.Count(), all.Collapsed())
	}
	if got, want := s.st.sum(s.st.lo, s.st.hi), all.st.sum(all.st.lo, all.st.hi); got != want {
		t.Fatalf("merged buckets hold %d values, one sketch's %d", got, want)
	}
	for k := uint64(1); k <= s.Count(); k++ {
		if got, want := s.atRank(k), all.atRank(k); got != want {
			t.Fatalf("rank %d: merged %v, one sketch %v", k, got, want)
		}
	}
}

func TestProductLimitDropsCensoringAtZeroFromTheRiskSet(t *testing.T) {
	// Ten requests cut at once say nothing but "at least 0": the product-limit
	// estimate is then the quantile of the ten events alone.
	ev := sketchOf(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	ce := NewSketch()
	ce.AddN(0, 10)
	got, st := ProductLimit(ev, ce, 0.5)
	if st != PLOK || math.Abs(got-5) > 5*RelativeAccuracy {
		t.Errorf("median with ten censored at 0: %v (%v), want 5", got, st)
	}
}
