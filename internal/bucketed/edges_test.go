package bucketed

import (
	"math"
	"testing"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
)

func TestValidBoundsEdges(t *testing.T) {
	cases := []struct {
		name   string
		bounds []float64
		want   bool
	}{
		{"a bound of zero is a TTFT of zero", []float64{0, 0.5, 1}, true},
		{"no bounds", nil, true},
		{"a repeated bound is not increasing", []float64{0.5, 1, 1, 2}, false},
		{"decreasing", []float64{1, 0.5}, false},
		{"negative", []float64{-1, 1}, false},
		{"NaN", []float64{0.5, math.NaN()}, false},
		{"+Inf is implied, never listed", []float64{0.5, math.Inf(1)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ValidBounds(c.bounds); got != c.want {
				t.Errorf("ValidBounds(%v) = %v, want %v", c.bounds, got, c.want)
			}
		})
	}
}

func TestCappedEdges(t *testing.T) {
	const limit = 3600
	inf := math.Inf(1)
	cases := []struct {
		name string
		iv   Interval
		want Interval
	}{
		{"within the limit stays", Interval{1, 2}, Interval{1, 2}},
		{"an upper bound at the limit is no bound past it", Interval{1, limit}, Interval{1, limit}},
		{"an upper bound past the limit says only above", Interval{1, limit + 1}, Interval{1, inf}},
		{"a lower bound past the limit says no more than the limit", Interval{1e300, inf}, Interval{limit, inf}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.iv.Capped(limit); got != c.want {
				t.Errorf("%+v.Capped(%v) = %+v, want %+v", c.iv, limit, got, c.want)
			}
		})
	}
}

func TestRankIsAtLeastOne(t *testing.T) {
	// q·n within float error of 0 still names the first sample, never rank 0.
	if k := Rank(1e-12, 5); k != 1 {
		t.Errorf("Rank(1e-12, 5) = %d, want 1", k)
	}
	d := &Dist{Kind: Explicit, Bounds: []float64{1, 2}, Counts: []uint64{0, 5, 0}}
	if iv, ok := d.Quantile(1e-12); !ok || iv != (Interval{Lower: 1, Upper: 2}) {
		t.Errorf("Quantile(1e-12) = %+v %v, want the first non-empty bucket (1, 2]", iv, ok)
	}
}

func TestExponentialRankAtTheLastZeroIsInTheZeroBucket(t *testing.T) {
	// Five zeros (≤ 1 ms) and five in (1 s, 2 s]: rank 5 is the last zero.
	d := &Dist{Kind: Exponential, Scale: 0, Offset: 0, Counts: []uint64{5}, Zero: 5, ZeroThreshold: 1e-3}
	iv, ok := d.Quantile(0.5)
	if !ok || iv != (Interval{Lower: 0, Upper: 1e-3}) {
		t.Errorf("p50 = %+v %v, want [0, 0.001]: rank 5 of 10 is a zero", iv, ok)
	}
	if iv, _ := d.Quantile(0.6); !(iv.Lower < 1 && iv.Upper > 2 && iv.Upper < 2.001) {
		t.Errorf("p60 = %+v, want (1 s, 2 s] widened by an ulp", iv)
	}
}

func TestExponentialBucketIsWidenedByAnUlp(t *testing.T) {
	// Bucket 0 at scale 0 is (1, 2]: a producer whose 2 rounded an ulp high
	// still put the value there, so neither bound is taken as exact.
	d := &Dist{Kind: Exponential, Scale: 0, Offset: 0, Counts: []uint64{4}}
	iv, _ := d.Quantile(0.5)
	if !(iv.Lower < 1 && iv.Upper > 2) || iv.Lower != math.Nextafter(1, 0) || iv.Upper != math.Nextafter(2, 3) {
		t.Errorf("interval %+v, want (1−ulp, 2+ulp]", iv)
	}
	if r := d.CutRatio(2); r != 1 {
		t.Errorf("CutRatio(2) = %v, want 1: a sample of the bucket is not known to be ≤ 2", r)
	}
	if r := d.CutRatio(math.Nextafter(2, 3)); r != 0 {
		t.Errorf("CutRatio(2+ulp) = %v, want 0", r)
	}
}

func TestDownscaleStopsAtMinScale(t *testing.T) {
	d := &Dist{Kind: Exponential, Scale: MinScale + 1, Offset: 0, Counts: []uint64{1, 1, 1, 1}}
	d.Downscale(5)
	if d.Scale != MinScale || d.Offset != 0 || len(d.Counts) != 2 || d.Counts[0] != 2 || d.Counts[1] != 2 {
		t.Errorf("after Downscale(5) from scale %d: scale %d offset %d counts %v; want scale %d, offset 0, [2 2]",
			MinScale+1, d.Scale, d.Offset, d.Counts, MinScale)
	}
}

func TestFitAndMergeKeepResolutionAtExactlyMaxBuckets(t *testing.T) {
	const maxBuckets = 4
	d := &Dist{Kind: Exponential, Scale: 3, Offset: 10, Counts: []uint64{1, 0, 0, 1}}
	if d.Fit(maxBuckets) || d.Scale != 3 || len(d.Counts) != maxBuckets {
		t.Errorf("Fit(%d) of %d buckets: scale %d, %d buckets; want no change", maxBuckets, maxBuckets, d.Scale, len(d.Counts))
	}
	a := &Dist{Kind: Exponential, Scale: 3, Offset: 10, Counts: []uint64{1, 1}}
	b := &Dist{Kind: Exponential, Scale: 3, Offset: 12, Counts: []uint64{1, 1}}
	if a.Merge(b, maxBuckets) || a.Scale != 3 || a.Offset != 10 || len(a.Counts) != maxBuckets {
		t.Errorf("merging into a union of %d buckets: scale %d offset %d counts %v; want scale 3, offset 10, 4 buckets",
			maxBuckets, a.Scale, a.Offset, a.Counts)
	}
}

func TestMergeIntoACoarserScaleReportsIt(t *testing.T) {
	fine := &Dist{Kind: Exponential, Scale: 4, Offset: 0, Counts: []uint64{1, 1}}
	coarse := &Dist{Kind: Exponential, Scale: 3, Offset: 0, Counts: []uint64{1}}
	if !fine.Merge(coarse, 160) {
		t.Error("a scale-4 distribution merged with a scale-3 one lost resolution: Merge must say so")
	}
	if fine.Scale != 3 || fine.Total() != 3 {
		t.Errorf("after merge: scale %d, total %d; want 3, 3", fine.Scale, fine.Total())
	}
}

func TestExponentialBoundAtNegativeScales(t *testing.T) {
	// At scale −2 the base is 2^4: bucket 1 is (16, 256].
	d := &Dist{Kind: Exponential, Scale: -2, Offset: 1, Counts: []uint64{3}}
	iv, ok := d.Quantile(0.5)
	if !ok || iv.Lower != math.Nextafter(16, 0) || iv.Upper != math.Nextafter(256, math.Inf(1)) {
		t.Errorf("scale −2 bucket 1: %+v %v, want (16, 256] widened by an ulp", iv, ok)
	}
}

func TestMergeIntoAnEmptyDistReportsTheFit(t *testing.T) {
	empty := &Dist{Kind: Exponential, Scale: 3}
	wide := &Dist{Kind: Exponential, Scale: 3, Offset: 0, Counts: []uint64{1, 0, 0, 0, 0, 0, 0, 1}}
	if !empty.Merge(wide, 4) {
		t.Error("merging 8 buckets into an empty distribution capped at 4 lost resolution: Merge must say so")
	}
	if empty.Scale != 2 || empty.Total() != 2 {
		t.Errorf("after merge: scale %d, total %d; want 2, 2", empty.Scale, empty.Total())
	}
}

func TestWindowSamplesExpireAfterTheWindow(t *testing.T) {
	const day = 24 * time.Hour
	one := &Dist{Kind: Explicit, Bounds: []float64{1}, Counts: []uint64{1, 0}}
	for _, c := range []struct {
		name string
		at   time.Time
	}{
		{"inside a slice", time.Date(2026, 11, 30, 10, 1, 30, 0, time.UTC)},
		{"on a slice's first nanosecond", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		{"before 1970", time.Unix(-90, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			sliceStart := c.at.Truncate(time.Hour)
			if c.at.Before(time.Unix(0, 0)) {
				sliceStart = time.Unix(-3600, 0) // Truncate rounds toward the zero time, not the epoch
			}
			for _, probe := range []struct {
				at   time.Time
				want uint64
			}{
				{sliceStart.Add(day - 1), 1},
				{sliceStart.Add(day), 0},
				{sliceStart.Add(day + time.Hour/2), 0},
			} {
				// Snapshots only look; a fresh window per probe keeps the head from moving on.
				w := NewWindow(Explicit, day, 24, 160, c.at)
				w.Add(one, c.at)
				if got := w.Snapshot(probe.at).Total(); got != probe.want {
					t.Errorf("samples at slice start + %v: %d, want %d", probe.at.Sub(sliceStart), got, probe.want)
				}
			}
		})
	}
}

func TestWindowCountsEveryCoarsening(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	// The first increment of a slice is fitted to the cap.
	w := NewWindow(Exponential, time.Hour, 4, 4, now)
	w.Add(&Dist{Kind: Exponential, Scale: 3, Counts: []uint64{1, 0, 0, 0, 0, 0, 0, 1}}, now)
	if w.Coarsened() != 1 {
		t.Errorf("fitting a slice's first increment: coarsened %d, want 1", w.Coarsened())
	}
	// A later increment of the same slice in another layout.
	e := NewWindow(Explicit, time.Hour, 4, 160, now)
	e.Add(&Dist{Kind: Explicit, Bounds: []float64{1, 2}, Counts: []uint64{1, 1, 0}}, now)
	e.Add(&Dist{Kind: Explicit, Bounds: []float64{1, 3}, Counts: []uint64{1, 1, 0}}, now)
	if e.Coarsened() != 1 {
		t.Errorf("a layout change within a slice: coarsened %d, want 1", e.Coarsened())
	}
	// Two slices in different layouts, merged by the snapshot.
	s := NewWindow(Explicit, time.Hour, 4, 160, now)
	s.Add(&Dist{Kind: Explicit, Bounds: []float64{1, 2}, Counts: []uint64{1, 1, 0}}, now)
	s.Add(&Dist{Kind: Explicit, Bounds: []float64{1, 3}, Counts: []uint64{1, 1, 0}}, now.Add(15*time.Minute))
	if s.Coarsened() != 0 {
		t.Fatalf("slices of their own layout: coarsened %d before a snapshot", s.Coarsened())
	}
	if snap := s.Snapshot(now.Add(15 * time.Minute)); snap.Total() != 4 || s.Coarsened() != 1 {
		t.Errorf("snapshot over two layouts: %d samples, coarsened %d; want 4, 1", snap.Total(), s.Coarsened())
	}
}

func TestWindowEmptyReleasesStaleSlices(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	w := NewWindow(Explicit, time.Hour, 4, 160, now)
	bare := w.SizeBytes()
	w.Add(&Dist{Kind: Explicit, Bounds: []float64{1, 2}, Counts: []uint64{1, 1, 0}}, now)
	if w.SizeBytes() <= bare {
		t.Fatal("a slice holding a distribution costs nothing")
	}
	if !w.Empty(now.Add(2 * time.Hour)) {
		t.Fatal("not empty a window later")
	}
	if got := w.SizeBytes(); got != bare {
		t.Errorf("after Empty: %d bytes, want an empty window's %d: stale slices are released", got, bare)
	}
}

func TestWindowTrimsBeforeFitting(t *testing.T) {
	// Six buckets of which the last two hold samples: trimmed, they fit a cap of 4
	// without losing resolution.
	now := time.Unix(1_800_000_000, 0)
	w := NewWindow(Exponential, time.Hour, 4, 4, now)
	w.Add(&Dist{Kind: Exponential, Scale: 5, Offset: 10, Counts: []uint64{0, 0, 0, 0, 1, 1}}, now)
	snap := w.Snapshot(now)
	if w.Coarsened() != 0 || snap.Scale != 5 || snap.Offset != 14 || len(snap.Counts) != 2 {
		t.Errorf("coarsened %d, snapshot scale %d offset %d counts %v; want 0, scale 5, offset 14, [1 1]",
			w.Coarsened(), snap.Scale, snap.Offset, snap.Counts)
	}
}

func TestEvaluateRefusesZeroHeadroom(t *testing.T) {
	d := &Dist{Kind: Explicit, Bounds: []float64{1}, Counts: []uint64{1000, 0}}
	p := recommend.Policy{Name: "p", Quantile: 0.99, Headroom: 0, RoundTo: 100 * time.Millisecond}
	if r := Evaluate(p, d, 0, math.Inf(1)); r.OK || r.Reason != ReasonInvalidPolicy {
		t.Errorf("headroom 0: %+v, want %s", r, ReasonInvalidPolicy)
	}
}

func TestEvaluateCutRatioIsAtTheRecommendation(t *testing.T) {
	// p90 lies in (0, 1 s]; 1 × 1.25 = 1.25 s also keeps the bucket (1 s, 1.2 s],
	// so it cuts 5%, not the 10% a timeout at the upper bound would.
	d := &Dist{Kind: Explicit, Bounds: []float64{1, 1.2, 2}, Counts: []uint64{90, 5, 5, 0}}
	p := recommend.Policy{Name: "p", Quantile: 0.9, Headroom: 1.25, RoundTo: 50 * time.Millisecond}
	r := Evaluate(p, d, 0, math.Inf(1))
	if !r.OK || r.Seconds != 1.25 || r.CutRatio != 0.05 {
		t.Errorf("%+v, want 1.25 s cutting 0.05", r)
	}
}
