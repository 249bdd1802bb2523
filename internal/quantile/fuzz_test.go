package quantile

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// FuzzSketch drives two sketches with adds, weighted adds, merges and resets decoded
// from the input, then checks them against the exact values: counts match, quantiles
// are monotone in q, inside [min, max], exact at the extremes and within one bucket
// of nearest-rank (unless the cap collapsed low buckets), CountAbove is monotone.
func FuzzSketch(f *testing.F) {
	seed := func(ops ...any) []byte {
		var b []byte
		for i := 0; i+1 < len(ops); i += 2 {
			b = append(b, byte(ops[i].(int)))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ops[i+1].(float64)))
		}
		return b
	}
	f.Add(seed(0, 0.8, 0, 1.2, 0, 6.0, 1, 0.3, 3, 0.0))
	f.Add(seed(0, 0.0, 0, 1e-12, 0, math.NaN(), 0, math.Inf(1), 0, -1.0, 0, 5.0))
	f.Add(seed(0, 1e-8, 1, 1e8, 3, 0.0, 0, 1e-300, 0, math.MaxFloat64))
	f.Add(seed(2, 2.0, 2, 2.0, 4, 0.0, 0, 3.0, 3, 0.0))
	f.Add(seed(50, 1.0, 1, 1.0, 200, 1.0, 3, 0.0, 5, 0.0, 0, 0.5)) // 2^8 and 2^33 copies: widening in Add and Merge
	f.Add(seed(0, 0.5, 5, 0.0, 0, 0.5))
	f.Fuzz(runOne)
}

// wv is a value with a multiplicity, so AddN can be fuzzed with counts that widen
// every counter tier without materialising billions of values.
type wv struct {
	v float64
	n uint64
}

func runOne(t *testing.T, data []byte) {
	a, b := NewSketch(), NewSketch()
	var va, vb []wv // valid values in a and b
	valid := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }
	for len(data) >= 9 {
		op := data[0]
		v := math.Float64frombits(binary.LittleEndian.Uint64(data[1:9]))
		data = data[9:]
		switch op % 6 {
		case 0:
			a.Add(v)
			if valid(v) {
				va = append(va, wv{v, 1})
			}
		case 1:
			b.Add(v)
			if valid(v) {
				vb = append(vb, wv{v, 1})
			}
		case 2:
			n := uint64(1) << (op / 6) // up to 2^42: crosses the 8, 16 and 32-bit tiers
			a.AddN(v, n)
			if valid(v) {
				va = append(va, wv{v, n})
			}
		case 3:
			a.Merge(b)
			va = append(va, vb...)
		case 4:
			b.Reset()
			vb = vb[:0]
		case 5:
			a.Merge(a)
			va = append(va, va...)
		}
		if len(va) > 1<<14 || weight(va) > 1<<60 || weight(vb) > 1<<60 {
			return // keep the reference cheap and the counts far from wrapping
		}
	}
	check(t, a, va)
	check(t, b, vb)
}

func weight(vs []wv) uint64 {
	var n uint64
	for _, x := range vs {
		n += x.n
	}
	return n
}

func check(t *testing.T, s *Sketch, vals []wv) {
	t.Helper()
	sorted := slices.Clone(vals)
	slices.SortFunc(sorted, func(x, y wv) int { return cmp.Compare(x.v, y.v) })
	var total uint64
	for _, x := range sorted {
		total += x.n
	}
	if s.Count() != total {
		t.Fatalf("count %d, want %d", s.Count(), total)
	}
	if total == 0 {
		if _, ok := s.Quantile(0.5); ok {
			t.Fatal("quantile of an empty sketch")
		}
		return
	}
	// exact nearest-rank on the weighted values
	exact := func(k uint64) float64 {
		var cum uint64
		for _, x := range sorted {
			cum += x.n
			if cum >= k {
				return x.v
			}
		}
		return sorted[len(sorted)-1].v
	}
	lo, hi := sorted[0].v, sorted[len(sorted)-1].v
	if mn, _ := s.Min(); mn != lo {
		t.Fatalf("min %v, want %v", mn, lo)
	}
	if mx, _ := s.Max(); mx != hi {
		t.Fatalf("max %v, want %v", mx, hi)
	}
	prev := math.Inf(-1)
	for i := 0; i <= 400; i++ {
		q := float64(i) / 400
		got, ok := s.Quantile(q)
		if !ok || math.IsNaN(got) {
			t.Fatalf("q=%v: %v %v", q, got, ok)
		}
		if got < prev {
			t.Fatalf("not monotone: q=%v gives %v after %v", q, got, prev)
		}
		prev = got
		if got < lo || got > hi {
			t.Fatalf("q=%v: %v outside [%v, %v]", q, got, lo, hi)
		}
		want := exact(Rank(q, total))
		switch {
		case want < MinValue:
			if got >= MinValue {
				t.Fatalf("q=%v: exact %v is in the zero bucket but got %v", q, want, got)
			}
		case s.Collapsed() == 0 && got > 0:
			if e := math.Abs(got-want) / want; e > RelativeAccuracy*1.001 {
				t.Fatalf("q=%v: %v vs exact %v: rel.err %v", q, got, want, e)
			}
		}
	}
	if q0, _ := s.Quantile(0); q0 != lo {
		t.Fatalf("q=0 gives %v, want min %v", q0, lo)
	}
	if q1, _ := s.Quantile(1); q1 != hi {
		t.Fatalf("q=1 gives %v, want max %v", q1, hi)
	}
	last := s.Count()
	probes := []float64{-1, 0, MinValue, lo, lo * 2, (lo + hi) / 2, hi / 2, hi, hi * 2, math.Inf(1)}
	slices.Sort(probes)
	for _, v := range probes {
		n := s.CountAbove(v)
		if n > last {
			t.Fatalf("CountAbove not monotone at %v: %d after %d", v, n, last)
		}
		last = n
	}
	if s.SizeBytes() > 512+MaxBuckets*8 {
		t.Fatalf("size %d beyond the cap", s.SizeBytes())
	}
}
