package bucketed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/expohist"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
)

// BifrostBounds are the 16 edges of bifrost_stream_first_token_latency_seconds (v1.5.11).
var BifrostBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}

// LiteLLMBounds are LiteLLM's LATENCY_BUCKETS (litellm/types/integrations/prometheus.py), +Inf implied.
var LiteLLMBounds = []float64{0.005, 0.00625, 0.0125, 0.025, 0.05, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
	5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 15.0, 20.0, 25.0, 30.0, 60.0, 120.0, 180.0, 240.0, 300.0}

const syntheticN = 100_000

type synthetic struct {
	name string
	gen  func(r *rand.Rand) float64
}

func lognormal(median, sigma float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return median * math.Exp(sigma*r.NormFloat64()) }
}

var synthetics = []synthetic{
	{"lognormal", lognormal(0.8, 0.6)},
	{"bimodal", func(r *rand.Rand) float64 {
		if r.Float64() < 0.7 {
			return lognormal(0.3, 0.3)(r)
		}
		return lognormal(3, 0.4)(r)
	}},
	// Pareto xm=0.2 s, α=1.5: p99.9 is 20 s and a few samples pass 300 s.
	{"pareto", func(r *rand.Rand) float64 { return 0.2 / math.Pow(1-r.Float64(), 1/1.5) }},
}

func samples(s synthetic, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x7f4a7c15))
	out := make([]float64, syntheticN)
	for i := range out {
		out[i] = s.gen(r)
	}
	sort.Float64s(out)
	return out
}

// explicitDist buckets sorted samples as a Prometheus client does (le: upper-inclusive).
func explicitDist(sorted, bounds []float64) *Dist {
	d := &Dist{Kind: Explicit, Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
	for _, v := range sorted {
		d.Counts[sort.SearchFloat64s(bounds, v)]++
	}
	return d
}

func nearestRank(sorted []float64, q float64) float64 {
	return sorted[Rank(q, uint64(len(sorted)))-1]
}

func countAbove(sorted []float64, t float64) int {
	return len(sorted) - sort.Search(len(sorted), func(i int) bool { return sorted[i] > t })
}

var testQuantiles = []float64{0.5, 0.9, 0.99, 0.999}

var testPolicies = []recommend.Policy{
	// The tightest a policy can be: the upper bound itself.
	{Name: "bare", Signal: recommend.SignalTimeToFirstToken, Headroom: 1},
	// The default gateway cutoff's headroom and rounding.
	{Name: "gateway_cutoff", Signal: recommend.SignalTimeToFirstToken, Headroom: 1.25, RoundTo: 100 * time.Millisecond},
}

// TestAccuracyExplicitBuckets: on 100k synthetic samples bucketed at
// Bifrost's and LiteLLM's edges, the interval holds the exact nearest-rank
// quantile in every case, and every recommendation cuts at most 1−q of the
// requests, both in truth (exact samples) and as reported (the bound
// computed from bucket counts, which must not understate the truth).
func TestAccuracyExplicitBuckets(t *testing.T) {
	layouts := []struct {
		name   string
		bounds []float64
	}{{"bifrost", BifrostBounds}, {"litellm", LiteLLMBounds}}
	cases, contained, recs := 0, 0, 0
	for si, s := range synthetics {
		sorted := samples(s, uint64(si+1))
		for _, l := range layouts {
			d := explicitDist(sorted, l.bounds)
			if d.Total() != syntheticN {
				t.Fatalf("%s/%s: %d samples bucketed", s.name, l.name, d.Total())
			}
			for _, q := range testQuantiles {
				cases++
				exact := nearestRank(sorted, q)
				iv, ok := d.Quantile(q)
				if !ok {
					t.Fatalf("%s/%s q=%v: no interval", s.name, l.name, q)
				}
				if (exact > iv.Lower || (iv.Lower == 0 && exact >= 0)) && exact <= iv.Upper {
					contained++
				} else {
					t.Errorf("%s/%s q=%v: exact %v outside (%v, %v]", s.name, l.name, q, exact, iv.Lower, iv.Upper)
				}
				for _, p := range testPolicies {
					p.Quantile = q
					r := Evaluate(p, d, 200, math.Inf(1))
					if !r.OK {
						if r.Reason != ReasonBeyondBuckets || !math.IsInf(iv.Upper, 1) {
							t.Errorf("%s/%s q=%v %s: no recommendation: %s", s.name, l.name, q, p.Name, r.Reason)
						}
						t.Logf("%-9s %-7s q=%-5v %-14s p∈(%v s, +Inf): beyond the last bucket, no recommendation", s.name, l.name, q, p.Name, iv.Lower)
						continue
					}
					recs++
					trueCut := float64(countAbove(sorted, r.Seconds)) / syntheticN
					if trueCut > 1-q+1e-12 {
						t.Errorf("%s/%s q=%v %s: cutoff %v cuts %.5f > 1−q", s.name, l.name, q, p.Name, r.Seconds, trueCut)
					}
					if r.CutRatio+1e-12 < trueCut || r.CutRatio > 1-q+1e-12 {
						t.Errorf("%s/%s q=%v %s: reported cut ratio %.5f, true %.5f, limit %.5f", s.name, l.name, q, p.Name, r.CutRatio, trueCut, 1-q)
					}
					t.Logf("%-9s %-7s q=%-5v %-14s exact %8.4fs ∈ (%v, %v] → cutoff %7.3fs cuts %.5f (reported ≤ %.5f, limit %.4f)",
						s.name, l.name, q, p.Name, exact, iv.Lower, iv.Upper, r.Seconds, trueCut, r.CutRatio, 1-q)
				}
			}
		}
	}
	if contained != cases {
		t.Fatalf("interval held the exact quantile in %d of %d cases", contained, cases)
	}
	if recs < cases { // at least one recommendation per case on average: the test must exercise the cut
		t.Fatalf("only %d recommendations for %d cases", recs, cases)
	}
	t.Logf("%d/%d intervals hold the exact quantile; %d recommendations, none cut more than 1−q", contained, cases, recs)
}

// expoDist buckets samples as an OpenTelemetry SDK's exponential histogram
// with maxSize buckets does (bucket for bucket what go-expohisto builds).
func expoDist(sorted []float64, maxSize int32) *Dist {
	var h expohist.Histogram
	h.Init(maxSize)
	for _, v := range sorted {
		h.Update(v)
	}
	return &Dist{Kind: Exponential, Scale: h.Scale(), Offset: h.Offset(), Zero: h.ZeroCount(),
		Counts: slices.Clone(h.BucketCounts())}
}

// TestAccuracyExponential: an exponential histogram gives quantiles within
// 1% of exact where its scale allows (scale ≥ 7: buckets 0.54% wide), and its
// interval says so where it does not: at coarser scales the bounds are
// further apart than 1%, and still hold the exact quantile.
func TestAccuracyExponential(t *testing.T) {
	for si, s := range synthetics {
		sorted := samples(s, uint64(si+1))
		for _, maxSize := range []int32{160, 320, 2048, 8192} {
			d := expoDist(sorted, maxSize)
			fine := RelativeWidth(d.Scale) <= 0.01
			for _, q := range testQuantiles {
				exact := nearestRank(sorted, q)
				iv, ok := d.Quantile(q)
				if !ok || !(exact > iv.Lower && exact <= iv.Upper) {
					t.Errorf("%s max_size %d scale %d q=%v: exact %v outside (%v, %v]", s.name, maxSize, d.Scale, q, exact, iv.Lower, iv.Upper)
					continue
				}
				lo, hi := (exact-iv.Lower)/exact, (iv.Upper-exact)/exact
				width := iv.Upper/iv.Lower - 1
				switch {
				case fine && (lo > 0.01 || hi > 0.01):
					t.Errorf("%s scale %d q=%v: bounds %.4f%%/%.4f%% from exact, want ≤ 1%%", s.name, d.Scale, q, 100*lo, 100*hi)
				case !fine && width <= 0.01:
					t.Errorf("%s scale %d q=%v: interval %.4f%% wide claims more than the scale allows", s.name, d.Scale, q, 100*width)
				}
				t.Logf("%-9s max_size %4d scale %2d (width %.2f%%) q=%-5v exact %8.4fs ∈ (%.5f, %.5f]: bounds -%.3f%% / +%.3f%%",
					s.name, maxSize, d.Scale, 100*RelativeWidth(d.Scale), q, exact, iv.Lower, iv.Upper, 100*lo, 100*hi)
			}
		}
	}
}

// TestWindowFitsExponentialToMaxBuckets: a window keeps an exponential input
// within max_buckets by downscaling, and still holds the exact quantile.
func TestWindowFitsExponentialToMaxBuckets(t *testing.T) {
	sorted := samples(synthetics[0], 9)
	now := time.Unix(1_800_000_000, 0)
	w := NewWindow(Exponential, time.Hour, 4, 100, now)
	// Two halves at different scales, a quarter of an hour apart.
	a := expoDist(sorted[:syntheticN/2], 8192)
	b := expoDist(sorted[syntheticN/2:], 160)
	if !w.Add(a, now) || !w.Add(b, now.Add(15*time.Minute)) {
		t.Fatal("Add refused an exponential increment")
	}
	snap := w.Snapshot(now.Add(20 * time.Minute))
	if snap.Total() != syntheticN || len(snap.Counts) > 100 {
		t.Fatalf("snapshot: %d samples in %d buckets (scale %d)", snap.Total(), len(snap.Counts), snap.Scale)
	}
	all := slices.Clone(sorted)
	sort.Float64s(all)
	for _, q := range testQuantiles {
		exact := nearestRank(all, q)
		if iv, _ := snap.Quantile(q); !(exact > iv.Lower && exact <= iv.Upper) {
			t.Errorf("q=%v: exact %v outside (%v, %v]", q, exact, iv.Lower, iv.Upper)
		}
	}
	if w.Coarsened() == 0 {
		t.Error("downscaling to fit was not counted")
	}
	if w.Add(&Dist{Kind: Explicit, Bounds: []float64{1}, Counts: []uint64{1, 1}}, now) {
		t.Error("an explicit increment entered an exponential window")
	}
}

// TestLayoutChangeCoarsensToSharedBounds: increments with different bounds
// merge onto the bounds they share; the interval still holds the exact
// quantile of the union.
func TestLayoutChangeCoarsensToSharedBounds(t *testing.T) {
	sorted := samples(synthetics[1], 3)
	half := syntheticN / 2
	a := explicitDist(sorted[:half], BifrostBounds)
	b := explicitDist(sorted[half:], LiteLLMBounds)
	now := time.Unix(1_800_000_000, 0)
	w := NewWindow(Explicit, time.Hour, 2, 1024, now)
	w.Add(a, now)
	w.Add(b, now)
	snap := w.Snapshot(now)
	want := sharedBounds(BifrostBounds, LiteLLMBounds)
	if !slices.Equal(snap.Bounds, want) || snap.Total() != syntheticN {
		t.Fatalf("bounds %v (%d samples), want %v", snap.Bounds, snap.Total(), want)
	}
	all := slices.Clone(sorted)
	for _, q := range testQuantiles {
		exact := nearestRank(all, q)
		if iv, _ := snap.Quantile(q); !(exact > iv.Lower || iv.Lower == 0) || exact > iv.Upper {
			t.Errorf("q=%v: exact %v outside (%v, %v]", q, exact, iv.Lower, iv.Upper)
		}
	}
	if w.Coarsened() != 1 {
		t.Errorf("coarsened %d times, want 1", w.Coarsened())
	}
}

// TestGateOnBucketCounts: the minimum-volume gate counts bucket samples.
func TestGateOnBucketCounts(t *testing.T) {
	d := &Dist{Kind: Explicit, Bounds: BifrostBounds, Counts: make([]uint64, len(BifrostBounds)+1)}
	d.Counts[6] = 999
	p := recommend.Policy{Name: "p", Quantile: 0.999, Headroom: 1.25, RoundTo: 100 * time.Millisecond}
	if r := Evaluate(p, d, 200, math.Inf(1)); r.OK || r.Reason != ReasonTooFewSamples || r.Samples != 999 {
		t.Fatalf("999 samples for p99.9: %+v", r)
	}
	d.Counts[7] = 1
	r := Evaluate(p, d, 200, math.Inf(1))
	// Rank 999 lies in (0.25 s, 0.5 s]: 0.5 × 1.25 rounds up to 0.7 s, and the one
	// sample in (0.5 s, 1 s] may be slower than that: at most 0.1% cut.
	if !r.OK || r.Interval != (Interval{Lower: 0.25, Upper: 0.5}) || r.Seconds != 0.7 {
		t.Fatalf("1000 samples: %+v", r)
	}
	if r.CutRatio != 0.001 {
		t.Errorf("cut ratio %v, want 0.001", r.CutRatio)
	}
}

func ExampleDist_Quantile() {
	d := &Dist{Kind: Explicit, Bounds: BifrostBounds, Counts: make([]uint64, len(BifrostBounds)+1)}
	d.Counts[7], d.Counts[8], d.Counts[9] = 900, 95, 5 // (0.5,1], (1,2.5], (2.5,5]
	iv, _ := d.Quantile(0.99)
	r := Evaluate(recommend.Policy{Quantile: 0.99, Headroom: 1.25, RoundTo: 100 * time.Millisecond}, d, 200, math.Inf(1))
	fmt.Printf("p99 ∈ (%g s, %g s] → cutoff %g s, cuts ≤ %.1f%%\n", iv.Lower, iv.Upper, r.Seconds, 100*r.CutRatio)
	// Output: p99 ∈ (1 s, 2.5 s] → cutoff 3.2 s, cuts ≤ 0.5%
}

// TestHolds: Holds agrees with Total() > 0 (Window.Empty reads it on every
// flush, so it stops at the first sample).
func TestHolds(t *testing.T) {
	for _, d := range []*Dist{
		nil,
		{Kind: Explicit, Bounds: []float64{1}, Counts: []uint64{0, 0}},
		{Kind: Explicit, Bounds: []float64{1}, Counts: []uint64{0, 3}},
		{Kind: Exponential, Zero: 1},
		{Kind: Exponential, Counts: []uint64{0, 0, 1}},
		{Kind: Exponential},
	} {
		if d.Holds() != (d.Total() > 0) {
			t.Errorf("%+v: Holds %v, Total %d", d, d.Holds(), d.Total())
		}
	}
}

// TestWindowSharesExplicitBounds: the slices of a window share one copy of
// an explicit layout's bounds, so 24 slices of a 1,024-bucket layout hold
// about 24 × 8 KiB of counts and 8 KiB of bounds, not 24 × 16 KiB (heap
// measured over 100 windows, not only the window's own accounting).
func TestWindowSharesExplicitBounds(t *testing.T) {
	bounds := make([]float64, 1023)
	for i := range bounds {
		bounds[i] = float64(i+1) * 0.01
	}
	counts := make([]uint64, 1024)
	counts[100] = 1
	point := &Dist{Kind: Explicit, Bounds: bounds, Counts: counts}
	start := time.Unix(1_700_000_000, 0)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const windows = 100
	ws := make([]*Window, windows)
	before := heap()
	for i := range ws {
		ws[i] = NewWindow(Explicit, 24*time.Hour, 24, 1024, start)
		for s := 0; s < 24; s++ {
			ws[i].Add(point, start.Add(time.Duration(s)*time.Hour))
		}
	}
	perWindow := float64(heap()-before) / windows
	runtime.KeepAlive(ws)
	sized := ws[0].SizeBytes()
	t.Logf("per window: %.0f bytes on the heap, SizeBytes %d", perWindow, sized)
	if perWindow > 25*1024*8+16*1024 {
		t.Errorf("%.0f bytes a window: the bounds are not shared", perWindow)
	}
	if math.Abs(perWindow-float64(sized)) > 0.1*perWindow {
		t.Errorf("SizeBytes %d, the heap holds %.0f", sized, perWindow)
	}
	// Shared bounds are never written in place: a merge to another layout
	// gives the slice bounds of its own.
	ws[0].Add(&Dist{Kind: Explicit, Bounds: []float64{bounds[49]}, Counts: []uint64{1, 1}}, start.Add(23*time.Hour))
	if !slices.Equal(bounds, ws[0].ring[mod(ws[0].head-1, 24)].d.Bounds) || !slices.Equal(bounds, ws[0].bounds) {
		t.Error("a merge to another layout wrote the shared bounds")
	}
	if got := ws[0].Snapshot(start.Add(23 * time.Hour)).Bounds; len(got) != 1 {
		t.Errorf("snapshot bounds %d, want the 1 both layouts share", len(got))
	}
}

// TestQuantileAcrossZeroThresholds: a window that merged a source with a
// zero threshold of 1 µs (its zero bucket: ten samples of 0.5 µs) and one
// with none (ten samples of 1 ns, in the bucket (2^-30, 2^-29]) keeps the
// wider threshold, so a bucket lies wholly inside the zero bucket's range.
// Every interval still holds the exact nearest-rank quantile. Before, a
// bucket's lower bound was raised to the threshold: the p90 came out as
// (1e-6, 1.9e-9], inverted and missing the 0.5 µs it had to hold.
func TestQuantileAcrossZeroThresholds(t *testing.T) {
	wide := &Dist{Kind: Exponential, Scale: 0, Zero: 10, ZeroThreshold: 1e-6}
	none := &Dist{Kind: Exponential, Scale: 0, Offset: -30, Counts: []uint64{10}}
	if math.Ldexp(1, -30) >= 1e-9 || 1e-9 > math.Ldexp(1, -29) {
		t.Fatal("1 ns is not in bucket -30 at scale 0")
	}
	sorted := make([]float64, 0, 20)
	for range 10 {
		sorted = append(sorted, 1e-9)
	}
	for range 10 {
		sorted = append(sorted, 5e-7)
	}
	for _, order := range [][2]*Dist{{wide, none}, {none, wide}} {
		d := order[0].Clone()
		d.Merge(order[1], 160)
		for _, q := range []float64{0.1, 0.5, 0.55, 0.9, 0.99} {
			exact := nearestRank(sorted, q)
			iv, ok := d.Quantile(q)
			if !ok || !(iv.Lower <= iv.Upper) || !(exact >= iv.Lower && exact <= iv.Upper) {
				t.Errorf("threshold %v first: q=%v: exact %v outside [%v, %v]", order[0].ZeroThreshold, q, exact, iv.Lower, iv.Upper)
			}
			if r := d.CutRatio(iv.Upper); r > 1-q+1e-9 {
				t.Errorf("q=%v: cutting at the upper bound %v cuts %v > 1−q", q, iv.Upper, r)
			}
		}
	}
}
