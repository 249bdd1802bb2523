package window

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

// t0 sits 90 s into an hour so slice alignment is exercised, not assumed.
var t0 = time.Date(2026, 11, 30, 10, 1, 30, 0, time.UTC)

const day = 24 * time.Hour

func TestSnapshotQuantileWithinOnePercentAcrossSlices(t *testing.T) {
	const n = 100_000
	for i, d := range quantiletest.Issue3() {
		t.Run(d.Name, func(t *testing.T) {
			xs := quantiletest.Sample(d, quantiletest.Rand(uint64(200+i)), n)
			w := New(day, 24, t0)
			// Spread over 23 h so every sample is live at the end and lands in one of 24 slices.
			step := 23 * time.Hour / n
			for j, x := range xs {
				w.Observe(x, t0.Add(time.Duration(j)*step))
			}
			end := t0.Add(23 * time.Hour)
			snap := w.Snapshot(end)
			if snap.Samples() != n || snap.Censored() != 0 {
				t.Fatalf("snapshot holds %d samples, %d censored; want %d, 0", snap.Samples(), snap.Censored(), n)
			}
			used := 0
			for k := range w.ring {
				if w.live(&w.ring[k]) && w.ring[k].ok.Count() > 0 {
					used++
				}
			}
			if used < 23 {
				t.Fatalf("samples landed in %d slices, want at least 23", used)
			}
			slices.Sort(xs)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				want := quantiletest.NearestRankSorted(xs, q)
				for _, censoring := range []bool{false, true} {
					got, st := snap.QuantileMin(q, 0, censoring)
					e := quantiletest.RelErr(got, want)
					if censoring {
						t.Logf("%-9s p%-5v exact=%9.5f window=%9.5f rel.err=%.4f%%", d.Name, q*100, want, got, 100*e)
					}
					if st != OK || e > 0.01 {
						t.Errorf("p%v censoring=%v: %v (%v) vs exact %v: rel.err %.3f%%", q*100, censoring, got, st, want, 100*e)
					}
				}
			}
		})
	}
}

func TestMinSamplesGate(t *testing.T) {
	cases := []struct {
		name       string
		q          float64
		minSamples int
		want       uint64
	}{
		{"p99.9 needs 1000 not 1001", 0.999, 200, 1000},
		{"p99.9 alone needs 1000", 0.999, 0, 1000},
		{"p99 is held by min_samples 200", 0.99, 200, 200},
		{"p99 alone needs 100", 0.99, 0, 100},
		{"p50 needs min_samples", 0.5, 200, 200},
		{"p50 alone needs 2", 0.5, 0, 2},
		{"p90 alone needs 10", 0.9, 0, 10},
		{"p99.99 needs 10000", 0.9999, 200, 10000},
		{"negative min_samples is ignored", 0.5, -5, 2},
		{"q of 1 can never be met", 1, 200, math.MaxUint64},
		{"q of 0 can never be met", 0, 200, math.MaxUint64},
		{"NaN q can never be met", math.NaN(), 200, math.MaxUint64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MinSamples(c.q, c.minSamples); got != c.want {
				t.Errorf("MinSamples(%v, %d) = %d, want %d", c.q, c.minSamples, got, c.want)
			}
		})
	}
}

func TestQuantileGateAtTheBoundary(t *testing.T) {
	cases := []struct {
		name       string
		samples    int
		q          float64
		minSamples int
		want       Status
	}{
		{"999 samples give no p99.9", 999, 0.999, 200, TooFew},
		{"1000 samples give p99.9", 1000, 0.999, 200, OK},
		{"199 samples give no p50 with min_samples 200", 199, 0.5, 200, TooFew},
		{"200 samples give p50 with min_samples 200", 200, 0.5, 200, OK},
		{"199 samples give no p99 with min_samples 200", 199, 0.99, 200, TooFew},
		{"99 samples give no p99 without min_samples", 99, 0.99, 0, TooFew},
		{"100 samples give p99 without min_samples", 100, 0.99, 0, OK},
		{"an empty window gives nothing", 0, 0.5, 0, TooFew},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := New(day, 24, t0)
			for i := range c.samples {
				w.Observe(0.5+float64(i)/1000, t0)
			}
			// Censored requests never count toward the gate.
			for range 5000 {
				w.ObserveCensored(10, t0)
			}
			snap := w.Snapshot(t0)
			_, st := snap.QuantileMin(c.q, c.minSamples, false)
			if st != c.want {
				t.Errorf("Quantile: %v, want %v", st, c.want)
			}
			if _, st2 := snap.QuantileMin(c.q, c.minSamples, true); (st2 == TooFew) != (c.want == TooFew) {
				t.Errorf("QuantileMin with censoring: %v, want gate result %v", st2, c.want)
			}
			if snap.Samples() != uint64(c.samples) {
				t.Errorf("samples %d, want %d", snap.Samples(), c.samples)
			}
		})
	}
}

func TestSamplesExpireAfterTheWindow(t *testing.T) {
	w := New(day, 24, t0)
	w.Observe(1, t0)
	sliceStart := t0.Truncate(time.Hour)
	cases := []struct {
		name string
		at   time.Time
		want uint64
	}{
		{"live at once", t0, 1},
		{"live 23 h later", t0.Add(23 * time.Hour), 1},
		{"live until its slice is a window old", sliceStart.Add(day - 1), 1},
		{"gone once its slice is a window old", sliceStart.Add(day), 0},
		{"gone a year later", t0.Add(365 * day), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Snapshots only look; a fresh window per case keeps the head from moving on.
			w := New(day, 24, t0)
			w.Observe(1, t0)
			if got := w.Snapshot(c.at).Samples(); got != c.want {
				t.Errorf("samples at %v: %d, want %d", c.at.Sub(t0), got, c.want)
			}
			if w.Empty(c.at) != (c.want == 0) {
				t.Errorf("Empty = %v with %d samples", w.Empty(c.at), c.want)
			}
		})
	}
}

func TestSlicesRotateHourByHour(t *testing.T) {
	w := New(day, 24, t0)
	for h := range 72 {
		now := t0.Add(time.Duration(h) * time.Hour)
		w.Observe(float64(h+1), now)
		w.ObserveCensored(100, now)
		snap := w.Snapshot(now)
		want := uint64(min(h+1, 24))
		if snap.Samples() != want || snap.Censored() != want {
			t.Fatalf("hour %d: %d samples %d censored, want %d", h, snap.Samples(), snap.Censored(), want)
		}
		// The oldest live sample is hour h−23: the minimum proves the right slices expired.
		lo, _ := snap.Successes().Min()
		if wantLo := float64(max(h-23, 0) + 1); lo != wantLo {
			t.Fatalf("hour %d: oldest live value %v, want %v", h, lo, wantLo)
		}
	}
}

func TestLongIdleGapsExpireEverythingAtOnce(t *testing.T) {
	w := New(day, 24, t0)
	for h := range 24 {
		w.Observe(1, t0.Add(time.Duration(h)*time.Hour))
	}
	cases := []struct {
		name string
		gap  time.Duration
	}{
		{"a window and a bit", day + time.Hour},
		{"a decade", 3650 * day},
		{"to the end of representable time", time.Duration(math.MaxInt64)},
	}
	now := t0.Add(23 * time.Hour)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			now = now.Add(c.gap)
			if !w.Empty(now) {
				t.Fatal("not empty after the gap")
			}
			w.Observe(2, now)
			snap := w.Snapshot(now)
			if v, _ := snap.Successes().Quantile(0.5); snap.Samples() != 1 || v != 2 {
				t.Fatalf("after the gap: %d samples, median %v; want only the new one", snap.Samples(), v)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("gap handling took %v: rotation must not loop over the gap", el)
			}
		})
	}
}

func TestLateSamplesLandInTheNewestSlice(t *testing.T) {
	w := New(day, 24, t0)
	w.Observe(1, t0.Add(5*time.Hour))
	w.Observe(2, t0) // 5 h late: counted, not lost, and does not rewind the ring
	w.Observe(3, t0.Add(-48*time.Hour))
	snap := w.Snapshot(t0.Add(5 * time.Hour))
	if snap.Samples() != 3 {
		t.Fatalf("samples %d, want 3", snap.Samples())
	}
	// All three live and die with the newest slice.
	if n := w.Snapshot(t0.Add(5*time.Hour + day)).Samples(); n != 0 {
		t.Errorf("late samples outlived their slice: %d", n)
	}
}

func TestEmptyCountsCensoredSamples(t *testing.T) {
	w := New(day, 24, t0)
	if !w.Empty(t0) {
		t.Fatal("new window not empty")
	}
	w.ObserveCensored(5, t0)
	if w.Empty(t0) {
		t.Error("window with a censored sample reported empty")
	}
	if !w.Empty(t0.Add(2 * day)) {
		t.Error("window not empty after expiry")
	}
}

func TestReleaseDropsExpiredBuffers(t *testing.T) {
	w := New(day, 24, t0)
	r := quantiletest.Rand(8)
	for i := range 10_000 {
		w.Observe(r.ExpFloat64(), t0.Add(time.Duration(i)*time.Second))
	}
	full := w.SizeBytes()
	w.Release(t0.Add(3 * day))
	if after := w.SizeBytes(); after >= full/4 || !w.Empty(t0.Add(3*day)) {
		t.Errorf("after release %d bytes (was %d)", after, full)
	}
	w.Observe(1, t0.Add(3*day))
	if w.Snapshot(t0.Add(3*day)).Samples() != 1 {
		t.Error("window unusable after Release")
	}
}

func TestCutRatioCountsSlowSuccessesAndCensored(t *testing.T) {
	w := New(day, 24, t0)
	for i := 1; i <= 90; i++ {
		w.Observe(float64(i)/10, t0) // 0.1 .. 9.0
	}
	for range 10 {
		w.ObserveCensored(9.5, t0)
	}
	snap := w.Snapshot(t0)
	cases := []struct {
		name    string
		timeout float64
		want    float64
	}{
		{"above everything cuts only the censored", 20, 0.10},
		{"at 8.05 cuts 10 successes (8.1..9.0) and the censored", 8.05, 0.20},
		{"below everything cuts all", 0.01, 1},
		{"NaN cuts nothing", math.NaN(), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := snap.CutRatio(c.timeout); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("CutRatio(%v) = %v, want %v", c.timeout, got, c.want)
			}
		})
	}
	if r := New(day, 24, t0).Snapshot(t0).CutRatio(1); r != 0 {
		t.Errorf("empty window cut ratio %v", r)
	}
}

func TestCensoringChangesTheEstimateOnlyWhenCutsMatter(t *testing.T) {
	w := New(day, 24, t0)
	r := quantiletest.Rand(12)
	d := quantiletest.Lognormal(0.8, 0.6)
	var all []float64
	const cut = 3.0 // ≈ p98.6: p99 and p99.9 lie beyond it
	for i := range 50_000 {
		v := d.Draw(r)
		all = append(all, v)
		now := t0.Add(time.Duration(i) * time.Second)
		if v > cut {
			w.ObserveCensored(cut, now)
		} else {
			w.Observe(v, now)
		}
	}
	snap := w.Snapshot(t0.Add(50_000 * time.Second))
	slices.Sort(all)
	p90 := quantiletest.NearestRankSorted(all, 0.9)
	pl, st := snap.QuantileMin(0.9, 0, true)
	if st != OK || quantiletest.RelErr(pl, p90) > 0.01 {
		t.Errorf("p90 with censoring %v (%v), true %v", pl, st, p90)
	}
	naive, _ := snap.QuantileMin(0.9, 0, false)
	if naive >= p90*0.99 {
		t.Errorf("p90 ignoring censoring %v should be biased below the truth %v", naive, p90)
	}
	v, st := snap.QuantileMin(0.99, 0, true)
	if st != BeyondCensor || v != cut {
		t.Errorf("p99 beyond a cut at p98.6: %v (%v), want %v beyond censor", v, st, cut)
	}
	if v, st := snap.QuantileMin(0.99, 0, false); st != OK || v > cut {
		t.Errorf("p99 ignoring censoring: %v (%v), cannot exceed the cut", v, st)
	}
	t.Logf("true p90 %.4f, product-limit p90 %.4f, successes-only p90 %.4f", p90, pl, naive)
}

func TestNewClampsDegenerateShapes(t *testing.T) {
	for _, c := range []struct {
		name   string
		window time.Duration
		slices int
	}{
		{"zero slices", day, 0},
		{"negative slices", day, -3},
		{"zero window", 0, 24},
		{"window shorter than slices in ns", 5, 24},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := New(c.window, c.slices, t0)
			w.Observe(1, t0)
			if w.Snapshot(t0).Samples() != 1 {
				t.Error("sample not visible at once")
			}
		})
	}
}
