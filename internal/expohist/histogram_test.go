package expohist

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lightstep/go-expohisto/structure"
)

// reference feeds the same values to go-expohisto, whose output the exported
// histograms must reproduce bucket for bucket.
func reference(maxSize int32, values []float64) *structure.Histogram[float64] {
	var h structure.Histogram[float64]
	h.Init(structure.NewConfig(structure.WithMaxSize(maxSize)))
	for _, v := range values {
		h.Update(v)
	}
	return &h
}

func requireSame(t *testing.T, name string, got *Histogram, want *structure.Histogram[float64]) {
	t.Helper()
	wantCounts := make([]uint64, want.Positive().Len())
	for i := range wantCounts {
		wantCounts[i] = want.Positive().At(uint32(i))
	}
	// go-expohisto may keep leading or trailing empty buckets after merging; compare the occupied run.
	trim := func(off int32, c []uint64) (int32, []uint64) {
		for len(c) > 0 && c[0] == 0 {
			c, off = c[1:], off+1
		}
		for len(c) > 0 && c[len(c)-1] == 0 {
			c = c[:len(c)-1]
		}
		return off, c
	}
	gotOff, gotC := trim(got.Offset(), got.BucketCounts())
	wantOff, wantC := trim(want.Positive().Offset(), wantCounts)
	if got.Scale() != want.Scale() || gotOff != wantOff || !slices.Equal(gotC, wantC) ||
		got.Count() != want.Count() || got.ZeroCount() != want.ZeroCount() ||
		got.Min() != want.Min() || got.Max() != want.Max() ||
		math.Abs(got.Sum()-want.Sum()) > 1e-9*math.Abs(want.Sum()) {
		t.Fatalf("%s: got scale %d offset %d counts %v (n=%d zero=%d min=%v max=%v sum=%v)\nwant scale %d offset %d counts %v (n=%d zero=%d min=%v max=%v sum=%v)",
			name, got.Scale(), gotOff, gotC, got.Count(), got.ZeroCount(), got.Min(), got.Max(), got.Sum(),
			want.Scale(), wantOff, wantC, want.Count(), want.ZeroCount(), want.Min(), want.Max(), want.Sum())
	}
}

func TestSameBucketsAsGoExpohisto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := map[string]func() float64{
		"lognormal ttft": func() float64 { return 0.8 * math.Exp(0.6*rng.NormFloat64()) },
		"wide range":     func() float64 { return math.Exp2(rng.Float64()*40 - 20) },
		"narrow range":   func() float64 { return 1 + rng.Float64()*1e-4 },
		"powers of two":  func() float64 { return math.Exp2(float64(rng.IntN(40) - 20)) },
		"with zeros": func() float64 {
			if rng.IntN(10) == 0 {
				return 0
			}
			return rng.ExpFloat64()
		},
		"millisecond grid": func() float64 { return float64(rng.IntN(60000)) / 1000 },
	}
	for name, g := range gen {
		for _, maxSize := range []int32{2, 4, 20, 160} {
			for _, n := range []int{1, 2, 10, 1000, 20000} {
				values := make([]float64, n)
				for i := range values {
					values[i] = g()
				}
				var h Histogram
				h.Init(maxSize)
				for _, v := range values {
					h.Update(v)
				}
				requireSame(t, name, &h, reference(maxSize, values))
			}
		}
	}
}

func TestIncreasingAndDecreasingOrder(t *testing.T) {
	// Growing the run downwards shifts the buckets; upwards appends.
	for _, order := range []string{"up", "down"} {
		values := make([]float64, 5000)
		for i := range values {
			values[i] = 0.001 * math.Pow(1.003, float64(i))
		}
		if order == "down" {
			slices.Reverse(values)
		}
		var h Histogram
		h.Init(160)
		for _, v := range values {
			h.Update(v)
		}
		requireSame(t, order, &h, reference(160, values))
	}
}

func TestClearStartsOverAtMaxScale(t *testing.T) {
	var h Histogram
	h.Init(160)
	for i := 1; i < 1000; i++ {
		h.Update(float64(i))
	}
	h.Clear()
	if h.Count() != 0 || len(h.BucketCounts()) != 0 || h.scale != MaxScale {
		t.Fatalf("not empty after Clear: n=%d buckets=%d scale=%d", h.Count(), len(h.BucketCounts()), h.Scale())
	}
	h.Update(0.25)
	requireSame(t, "after clear", &h, reference(160, []float64{0.25}))
}

func TestIgnoresValuesThatAreNotTimes(t *testing.T) {
	var h Histogram
	h.Init(160)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		h.Update(v)
	}
	if h.Count() != 0 {
		t.Fatalf("count %d after invalid values", h.Count())
	}
}

func BenchmarkUpdate(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := make([]float64, 4096)
	for i := range values {
		values[i] = 0.8 * math.Exp(0.6*rng.NormFloat64())
	}
	b.Run("expohist", func(b *testing.B) {
		var h Histogram
		h.Init(160)
		for i := 0; b.Loop(); i++ {
			h.Update(values[i&4095])
		}
	})
	b.Run("go-expohisto", func(b *testing.B) {
		var h structure.Histogram[float64]
		h.Init(structure.NewConfig(structure.WithMaxSize(160)))
		for i := 0; b.Loop(); i++ {
			h.Update(values[i&4095])
		}
	})
}

// FuzzSameBucketsAsGoExpohisto reads the input as float64 values (8 bytes
// each) and checks the histogram against go-expohisto on them.
func FuzzSameBucketsAsGoExpohisto(f *testing.F) {
	f.Add(uint8(160), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40})
	f.Add(uint8(2), []byte{0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, 0, 0, 0, 0, 0, 0x40, 0x8f, 0x40})
	f.Fuzz(func(t *testing.T, size uint8, raw []byte) {
		maxSize := int32(size%159) + 2
		var values []float64
		for len(raw) >= 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw))
			raw = raw[8:]
			// Times only: the connector never feeds negatives, NaN, Inf or
			// subnormals (below go-expohisto's normal range).
			if !(v >= 0) || math.IsInf(v, 0) || (v != 0 && v < 0x1p-1022) || v >= 0x1p1000 {
				continue
			}
			// go-expohisto rounds a logarithm: within a rounding error of a
			// bucket edge it may pick the upper bucket where the exact rule
			// picks the lower one (both valid). Compare away from the edges
			// (every edge at scale ≤ 7 is an edge at scale 7).
			if x := math.Log2(v) * 128; v != 0 && math.Abs(x-math.Round(x)) < 1e-6 {
				continue
			}
			values = append(values, v)
		}
		var h Histogram
		h.Init(maxSize)
		for _, v := range values {
			h.Update(v)
		}
		requireSame(t, "fuzz", &h, reference(maxSize, values))
	})
}

func TestCountersWidenPast16Bits(t *testing.T) {
	// One bucket past 65,535 on increment; two neighbours merged past it by
	// a downscale; and the run grown downwards after widening.
	cases := map[string][]float64{}
	var one []float64
	for range 70_000 {
		one = append(one, 1.5)
	}
	cases["one bucket"] = append(one, 0.25, 3, 1.5)
	var merged []float64
	for i := range 80_000 {
		merged = append(merged, []float64{1.5, 1.515}[i%2]) // apart at scale 7, together at 0
	}
	cases["merged by downscale"] = append(merged, 1e-3, 1e3)
	var down []float64
	for range 66_000 {
		down = append(down, 2)
	}
	for i := range 200 {
		down = append(down, 2/math.Pow(1.01, float64(i)))
	}
	cases["grown downwards after widening"] = down
	for name, values := range cases {
		for _, maxSize := range []int32{2, 20, 160} {
			var h Histogram
			h.Init(maxSize)
			for _, v := range values {
				h.Update(v)
			}
			requireSame(t, name, &h, reference(maxSize, values))
			if !h.wide {
				t.Errorf("%s (max %d): counters did not widen", name, maxSize)
			}
			h.Clear()
			h.Update(0.5)
			requireSame(t, name+" after clear", &h, reference(maxSize, []float64{0.5}))
		}
	}

	// The merge itself widens: each neighbour fits 16 bits, their sum does not.
	var h Histogram
	h.Init(160)
	for _, v := range merged {
		h.Update(v)
	}
	if h.wide {
		t.Fatal("widened before the merge")
	}
	h.Update(1e-3)
	h.Update(1e3)
	if !h.wide {
		t.Fatal("the merge did not widen")
	}
	requireSame(t, "merge", &h, reference(160, cases["merged by downscale"]))
}
