package quantile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/otelcol-ttft/otelcol-ttft/internal/logindex"
	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

var issueQuantiles = []float64{0.5, 0.9, 0.99, 0.999}

func TestSketchQuantileWithinOnePercentOfNearestRank(t *testing.T) {
	for i, d := range quantiletest.Issue3() {
		t.Run(d.Name, func(t *testing.T) {
			xs := quantiletest.Sample(d, quantiletest.Rand(uint64(100+i)), 100_000)
			s := NewSketch()
			for _, x := range xs {
				s.Add(x)
			}
			slices.Sort(xs)
			for _, q := range issueQuantiles {
				want := quantiletest.NearestRankSorted(xs, q)
				got, ok := s.Quantile(q)
				if !ok {
					t.Fatalf("p%v: no value", q*100)
				}
				e := quantiletest.RelErr(got, want)
				t.Logf("%s p%v exact=%.6f sketch=%.6f rel.err=%.4f%%", d.Name, q*100, want, got, 100*e)
				if e > 0.01 {
					t.Errorf("p%v: %v vs exact %v: relative error %.3f%% > 1%%", q*100, got, want, 100*e)
				}
				// The design bound: half a bucket (0.27%), with room for float error in the index.
				if e > RelativeAccuracy*1.001 {
					t.Errorf("p%v: relative error %.4f%% exceeds the bucket bound %.4f%%", q*100, 100*e, 100*RelativeAccuracy)
				}
			}
			t.Logf("%s: %d samples in %d bytes", d.Name, s.Count(), s.SizeBytes())
		})
	}
}

func TestRankIsExactNearestRank(t *testing.T) {
	cases := []struct {
		name string
		q    float64
		n    uint64
		want uint64
	}{
		{"float error above an integer does not add a rank", 0.7, 10, 7},
		{"p99.9 of 1000 is the 999th", 0.999, 1000, 999},
		{"p99.9 of 999 is the 999th (the maximum)", 0.999, 999, 999},
		{"p50 of an odd count rounds up", 0.5, 5, 3},
		{"q at 1 is the maximum", 1, 42, 42},
		{"tiny q is the minimum", 1e-9, 42, 1},
		{"q at 0 is the minimum", 0, 42, 1},
		{"negative q is the minimum", -1, 42, 1},
		{"empty has no rank", 0.5, 0, 0},
		{"NaN q is the minimum", math.NaN(), 3, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Rank(c.q, c.n); got != c.want {
				t.Errorf("Rank(%v, %d) = %d, want %d", c.q, c.n, got, c.want)
			}
		})
	}
	t.Run("matches exact rational arithmetic", func(t *testing.T) {
		r := quantiletest.Rand(1)
		qs := []float64{0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999}
		for range 20000 {
			q := qs[r.IntN(len(qs))]
			n := 1 + r.IntN(2_000_000)
			if got, want := Rank(q, uint64(n)), quantiletest.ExactRank(q, n); got != uint64(want) {
				t.Fatalf("Rank(%v, %d) = %d, exact %d", q, n, got, want)
			}
		}
	})
}

func TestCeilTolForgivesOnlyFloatError(t *testing.T) {
	cases := []struct {
		name string
		x    float64
		want float64
	}{
		{"1/(1-0.999) is 1000", 1 / (1 - 0.999), 1000},
		{"1/(1-0.99) is 100", 1 / (1 - 0.99), 100},
		{"1/(1-0.5) is 2", 1 / (1 - 0.5), 2},
		{"a real fraction still rounds up", 1000.001, 1001},
		{"an integer stays", 7, 7},
		{"just below an integer by float error", 6.999999999999999, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CeilTol(c.x); got != c.want {
				t.Errorf("CeilTol(%v) = %v, want %v", c.x, got, c.want)
			}
		})
	}
}

func TestSketchIgnoresInvalidValues(t *testing.T) {
	s := NewSketch()
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, -1e-300} {
		s.Add(v)
	}
	s.AddN(-3, 5)
	if s.Count() != 0 || s.Invalid() != 10 {
		t.Fatalf("count %d invalid %d, want 0 and 10", s.Count(), s.Invalid())
	}
	if _, ok := s.Quantile(0.5); ok {
		t.Error("an empty sketch returned a quantile")
	}
	s.Add(2)
	if v, ok := s.Quantile(0.5); !ok || v != 2 {
		t.Errorf("single value 2: quantile %v %v", v, ok)
	}
}

func TestSketchZeroBucketHoldsTinyValues(t *testing.T) {
	s := NewSketch()
	s.AddN(0, 3)
	s.Add(MinValue / 10)
	s.Add(1)
	if s.ZeroCount() != 4 || s.Count() != 5 {
		t.Fatalf("zero %d count %d, want 4 and 5", s.ZeroCount(), s.Count())
	}
	if v, _ := s.Quantile(0.5); v != 0 {
		t.Errorf("median of mostly zeros = %v, want the minimum 0", v)
	}
	if v, _ := s.Quantile(1); v != 1 {
		t.Errorf("max = %v, want 1", v)
	}
	if n := s.CountAbove(MinValue / 100); n != 1 {
		t.Errorf("CountAbove(tiny) = %d, want 1", n)
	}
}

func TestSketchMergeEqualsOneSketch(t *testing.T) {
	r := quantiletest.Rand(3)
	d := quantiletest.Pareto(1.5, 0.2)
	all, a, b := NewSketch(), NewSketch(), NewSketch()
	for i := range 50_000 {
		v := d.Draw(r)
		all.Add(v)
		if i%3 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	a.Add(math.NaN())
	a.Merge(b)
	a.Merge(nil)
	a.Merge(NewSketch())
	if a.Count() != all.Count() || a.Invalid() != 1 {
		t.Fatalf("merged count %d invalid %d, want %d and 1", a.Count(), a.Invalid(), all.Count())
	}
	for q := 0.0; q <= 1; q += 0.001 {
		x, _ := a.Quantile(q)
		y, _ := all.Quantile(q)
		if x != y {
			t.Fatalf("q=%v: merged %v, single %v", q, x, y)
		}
	}
	t.Run("with itself doubles every count", func(t *testing.T) {
		before, _ := all.Quantile(0.9)
		n := all.Count()
		all.Merge(all)
		after, _ := all.Quantile(0.9)
		if all.Count() != 2*n || before != after {
			t.Errorf("self-merge: count %d (want %d), p90 %v → %v", all.Count(), 2*n, before, after)
		}
	})
}

func TestSketchCollapsesLowestBucketsBeyondCap(t *testing.T) {
	s := NewSketch()
	var xs []float64
	// 1e-8 .. 1e8 spans 53 octaves, more than the cap's 32.
	for e := -8.0; e <= 8; e += 0.01 {
		v := math.Pow(10, e)
		xs = append(xs, v)
		s.Add(v)
	}
	if s.st.hi-s.st.lo+1 > MaxBuckets || s.st.length() > MaxBuckets {
		t.Fatalf("bucket run %d, buffer %d exceed cap %d", s.st.hi-s.st.lo+1, s.st.length(), MaxBuckets)
	}
	if s.Collapsed() == 0 {
		t.Fatal("nothing collapsed")
	}
	if s.Count() != uint64(len(xs)) {
		t.Fatalf("count %d, want %d", s.Count(), len(xs))
	}
	slices.Sort(xs)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		got, _ := s.Quantile(q)
		if e := quantiletest.RelErr(got, quantiletest.NearestRankSorted(xs, q)); e > 0.01 {
			t.Errorf("p%v after collapse: rel.err %.3f%%", q*100, 100*e)
		}
	}
	if lo, _ := s.Quantile(0.01); lo > math.Pow(2, -32+math.Log2(1e8)+1) {
		t.Errorf("low quantile %v is not in the collapsed bucket", lo)
	}
	t.Run("a merge beyond the cap collapses too", func(t *testing.T) {
		a, b := NewSketch(), NewSketch()
		a.Add(1e-8)
		b.Add(1e8)
		a.Merge(b)
		if a.st.hi-a.st.lo+1 > MaxBuckets || a.Count() != 2 || a.Collapsed() != 1 {
			t.Errorf("run %d count %d collapsed %d", a.st.hi-a.st.lo+1, a.Count(), a.Collapsed())
		}
		if v, _ := a.Quantile(1); v != 1e8 {
			t.Errorf("max %v, want 1e8", v)
		}
	})
}

func TestSketchCountersWidenWithoutLoss(t *testing.T) {
	s := NewSketch()
	s.st.densify() // the dense run's counters are what this test widens
	s.Add(0.5)
	s.AddN(1, 200)
	if s.st.width != 8 {
		t.Fatalf("width %d after 200, want 8", s.st.width)
	}
	s.AddN(1, 69_800)        // past uint8, then past uint16
	s.AddN(1, 5_000_000_000) // past uint32
	s.Add(2)
	if want := uint64(5_000_070_002); s.Count() != want {
		t.Fatalf("count %d, want %d", s.Count(), want)
	}
	if s.st.width != 64 {
		t.Errorf("width %d, want 64", s.st.width)
	}
	if n := s.CountAbove(1.5); n != 1 {
		t.Errorf("CountAbove(1.5) = %d, want 1", n)
	}
	if n := s.CountAbove(0.9); n != 5_000_070_001 {
		t.Errorf("CountAbove(0.9) = %d", n)
	}
	if v, _ := s.Quantile(0.5); quantiletest.RelErr(v, 1) > RelativeAccuracy {
		t.Errorf("median %v, want ≈1", v)
	}
}

func TestCountAboveMatchesExactOutsideOneBucket(t *testing.T) {
	r := quantiletest.Rand(4)
	xs := quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), r, 20_000)
	s := NewSketch()
	for _, x := range xs {
		s.Add(x)
	}
	for _, v := range []float64{0.01, 0.1, 0.5, 0.8, 1, 2, 4, 6.4, 100} {
		var above, inBucket uint64
		for _, x := range xs {
			if x > v {
				above++
				if index(x) == index(v) {
					inBucket++
				}
			}
		}
		got := s.CountAbove(v)
		if got > above || got < above-inBucket {
			t.Errorf("CountAbove(%v) = %d, exact %d (%d share its bucket)", v, got, above, inBucket)
		}
	}
}

func TestResetKeepsBufferSoAddDoesNotAllocate(t *testing.T) {
	s := NewSketch()
	r := rand.New(rand.NewPCG(5, 5))
	vals := quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), r, 10_000)
	for _, v := range vals {
		s.Add(v)
	}
	s.Reset()
	if s.Count() != 0 {
		t.Fatal("reset kept samples")
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		s.Add(vals[i%len(vals)])
		i++
	})
	if allocs != 0 {
		t.Errorf("Add after Reset allocates %v times per call", allocs)
	}
	s.Release()
	if s.SizeBytes() > 256 {
		t.Errorf("released sketch holds %d bytes", s.SizeBytes())
	}
}

func TestBucketBoundaries(t *testing.T) {
	// Exact powers of γ belong to the bucket they close.
	for i := -300; i <= 300; i += 7 {
		v := math.Exp2(float64(i) / BucketsPerOctave)
		if got := index(v); got != i && got != i+1 {
			t.Errorf("index(γ^%d) = %d", i, got)
		}
		if e := quantiletest.RelErr(bucketValue(index(v)), v); e > RelativeAccuracy*1.001 {
			t.Errorf("γ^%d reported with rel.err %v", i, e)
		}
	}
	if s := fmt.Sprintf("%.4f", 100*RelativeAccuracy); s != "0.2708" {
		t.Errorf("relative accuracy %s%%, want 0.2708%%", s)
	}
}

// AddCountedCeil with the caller's logindex.Ceil is AddCounted, value for
// value, special values included.
func TestAddCountedCeilIsAddCounted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := []float64{0, 1e-12, 5e-324, -1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-9, 3000}
	for range 2000 {
		vals = append(vals, math.Exp(r.NormFloat64()*3))
	}
	a, b := NewSketch(), NewSketch()
	for _, v := range vals {
		k, ok := logindex.Ceil(v)
		if x, y := a.AddCounted(v), b.AddCountedCeil(v, k, ok); x != y {
			t.Fatalf("%v: AddCounted %d, AddCountedCeil %d", v, x, y)
		}
	}
	if a.Count() != b.Count() || a.Invalid() != b.Invalid() || a.ZeroCount() != b.ZeroCount() || a.Collapsed() != b.Collapsed() {
		t.Fatalf("counts differ: %d/%d %d/%d %d/%d %d/%d", a.Count(), b.Count(), a.Invalid(), b.Invalid(), a.ZeroCount(), b.ZeroCount(), a.Collapsed(), b.Collapsed())
	}
	for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.999} {
		x, _ := a.Quantile(q)
		y, _ := b.Quantile(q)
		if x != y {
			t.Errorf("q=%v: %v vs %v", q, x, y)
		}
	}
}
