package window

import (
	"testing"
	"time"
	"unsafe"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

// filled returns a window holding n lognormal TTFTs spread over one day, plus 0.1% censored.
func filled(n int, seed uint64) (*Window, time.Time) {
	w := New(day, 24, t0)
	r := quantiletest.Rand(seed)
	d := quantiletest.Lognormal(0.8, 0.6)
	step := day / time.Duration(n)
	for i := range n {
		at := t0.Add(time.Duration(i) * step)
		if i%1000 == 999 {
			w.ObserveCensored(6.4, at)
		} else {
			w.Observe(d.Draw(r), at)
		}
	}
	return w, t0.Add(day - step)
}

func TestWindowMemoryIsFlatInSampleCount(t *testing.T) {
	// Hard bound: every slice's two sketches at the bucket cap with 64-bit counters.
	bound := int(unsafe.Sizeof(Window{})) + 24*(int(unsafe.Sizeof(slice{}))+2*(quantile.NewSketch().SizeBytes()+quantile.MaxBuckets*8))
	sizes := map[int]int{}
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		w, _ := filled(n, uint64(n))
		sizes[n] = w.SizeBytes()
		t.Logf("%9d samples: %7d bytes per window (%.3f bytes/sample)", n, sizes[n], float64(sizes[n])/float64(n))
		if sizes[n] > bound {
			t.Errorf("%d samples: %d bytes exceeds the cap bound %d", n, sizes[n], bound)
		}
	}
	// Size follows the value range (lognormal extremes grow like √(2 ln n)) and the
	// counter width (1→2→4→8 bytes as the fullest bucket passes 255, 65535, 2³²−1),
	// never the count: 1000× the samples cost under 3× the memory.
	if sizes[1_000_000] > 3*sizes[1_000] {
		t.Errorf("1M samples take %d bytes, more than 3× the %d of 1k", sizes[1_000_000], sizes[1_000])
	}
	t.Logf("cap bound %d bytes per window", bound)
}

func TestSnapshotIntoDoesNotAllocateOnceGrown(t *testing.T) {
	w, end := filled(100_000, 1)
	var snap Snapshot
	w.SnapshotInto(&snap, end)
	allocs := testing.AllocsPerRun(20, func() {
		w.SnapshotInto(&snap, end)
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
			snap.QuantileMin(q, 0, true)
		}
	})
	if allocs != 0 {
		t.Errorf("SnapshotInto + 4 quantiles: %v allocations", allocs)
	}
}

func TestObserveDoesNotAllocateInSteadyState(t *testing.T) {
	w, end := filled(100_000, 2)
	vals := quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), quantiletest.Rand(3), 1024)
	i := 0
	allocs := testing.AllocsPerRun(10_000, func() {
		w.Observe(vals[i%len(vals)], end)
		i++
	})
	if allocs != 0 {
		t.Errorf("Observe: %v allocations per call", allocs)
	}
}

func BenchmarkObserve(b *testing.B) {
	w, end := filled(100_000, 4)
	vals := quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), quantiletest.Rand(5), 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	now := end
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond) // rotates a slice every 3.6M calls
		w.Observe(vals[i&(1<<16-1)], now)
	}
}

func BenchmarkObserveCensored(b *testing.B) {
	w, end := filled(100_000, 6)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		w.ObserveCensored(6.4, end)
	}
}

func BenchmarkSnapshotAnd4Quantiles(b *testing.B) {
	w, end := filled(1_000_000, 7)
	qs := []float64{0.5, 0.9, 0.99, 0.999}
	b.Run("reused", func(b *testing.B) {
		var snap Snapshot
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			w.SnapshotInto(&snap, end)
			for _, q := range qs {
				snap.QuantileMin(q, 0, true)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			snap := w.Snapshot(end)
			for _, q := range qs {
				snap.QuantileMin(q, 0, true)
			}
		}
	})
}
