package quantile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

func TestAdversarialSpreadStaysSparse(t *testing.T) {
	// TTFT alternating 1 µs / 3,000 s: a dense run would span 4,035 buckets.
	s := NewSketch()
	for i := range 1000 {
		if i%2 == 0 {
			s.Add(1e-6)
		} else {
			s.Add(3000)
		}
	}
	if s.st.dense {
		t.Fatal("two distinct values turned the store dense")
	}
	if n := s.SizeBytes(); n > 256 {
		t.Errorf("two buckets cost %d bytes", n)
	}
	if v, _ := s.Quantile(0.5); v != 1e-6 {
		t.Errorf("p50 %v", v)
	}
	if v, _ := s.Quantile(0.9); math.Abs(v-3000)/3000 > RelativeAccuracy {
		t.Errorf("p90 %v", v)
	}
}

func TestSparseAndDenseAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	d := quantiletest.Lognormal(0.8, 1.5)
	for _, n := range []int{1, 5, 15, 16, 17, 40, 200, 5000} {
		vals := quantiletest.Sample(d, r, n)
		sparse, dense := NewSketch(), NewSketch()
		dense.st.densify()
		for _, v := range vals {
			sparse.Add(v)
			dense.Add(v)
		}
		// Merge every combination of modes into fresh sketches.
		viaSparse, viaDense := NewSketch(), NewSketch()
		viaDense.st.densify()
		viaSparse.Merge(sparse)
		viaDense.Merge(sparse)
		viaSparse.Merge(dense)
		viaDense.Merge(dense)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
			a, _ := sparse.Quantile(q)
			b, _ := dense.Quantile(q)
			c, _ := viaSparse.Quantile(q)
			e, _ := viaDense.Quantile(q)
			if a != b || c != e {
				t.Errorf("n=%d q=%v: sparse %v dense %v; merged %v %v", n, q, a, b, c, e)
			}
		}
		for _, v := range []float64{0.1, 1, 2, 5, 20} {
			if sparse.CountAbove(v) != dense.CountAbove(v) || viaSparse.CountAbove(v) != 2*dense.CountAbove(v) {
				t.Errorf("n=%d CountAbove(%v): %d %d %d", n, v, sparse.CountAbove(v), dense.CountAbove(v), viaSparse.CountAbove(v))
			}
		}
		// Censored product-limit over either mode.
		cens := NewSketch()
		cens.AddN(2, uint64(max(n/10, 1)))
		for _, q := range []float64{0.5, 0.9} {
			a, sa := ProductLimit(sparse, cens, q)
			b, sb := ProductLimit(dense, cens, q)
			if a != b || sa != sb {
				t.Errorf("n=%d ProductLimit(%v): %v/%v vs %v/%v", n, q, a, sa, b, sb)
			}
		}
	}
}

func TestSparseTurnsDenseWhenCheaper(t *testing.T) {
	s := NewSketch()
	for i := range 2000 {
		s.Add(1 + float64(i)/2000) // one octave: 128 buckets
	}
	if !s.st.dense {
		t.Fatal("128 full buckets in one octave stayed sparse")
	}
	if s.SizeBytes() > 512 {
		t.Errorf("%d bytes for one octave", s.SizeBytes())
	}
}
