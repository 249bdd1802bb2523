// Package bucketed keeps TTFT distributions that arrive already bucketed —
// the classic (explicit-bound) and exponential histograms gateways and servers
// export — and answers quantiles from them honestly: as an interval, the
// bounds of the bucket that holds the exact nearest-rank sample, never as a
// number the buckets cannot support (see the connector README, "Histogram
// inputs", and docs/architecture.md §3, "Histogram inputs and gateway rows").
//
// It is kept apart from internal/window and internal/quantile, which hold
// exact samples: merging a 16-bucket histogram into a 0.27%-resolution sketch
// would invent precision. A Dist holds per-bucket (not cumulative) counts.
//
// Conservative by construction: for quantile q over n samples the interval's
// upper bound U has at most n − ⌈q·n⌉ ≤ (1−q)·n samples above it, so any
// timeout ≥ U cuts at most 1−q of the requests the histogram counted.
//
// Not safe for concurrent use: the caller locks.
package bucketed // import "github.com/otelcol-ttft/otelcol-ttft/internal/bucketed"

import (
	"math"
	"slices"
	"unsafe"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
)

// Kind says how a distribution is bucketed.
type Kind uint8

const (
	// Explicit buckets: (−∞, b0], (b0, b1], …, (bn−1, +∞), as Prometheus
	// classic histograms and OTLP explicit-bucket histograms.
	Explicit Kind = iota + 1
	// Exponential buckets: (base^i, base^(i+1)] with base = 2^(2^−scale),
	// plus a zero bucket, as OTLP exponential and Prometheus native histograms.
	Exponential
)

// Resolution names a kind for the ttft.resolution attribute.
func (k Kind) Resolution() string {
	switch k {
	case Explicit:
		return "explicit_buckets"
	case Exponential:
		return "exponential_buckets"
	}
	return "unknown"
}

// Scale limits of OTLP exponential histograms.
const (
	MinScale = -10
	MaxScale = 20
)

// Dist is one bucketed distribution of non-negative values (seconds).
type Dist struct {
	Kind Kind
	// Bounds are the finite upper bounds of explicit buckets: non-negative,
	// strictly increasing. Counts has len(Bounds)+1 entries; the last bucket
	// is (Bounds[len−1], +∞).
	Bounds []float64
	// Counts are per-bucket counts. Exponential: Counts[j] is bucket
	// Offset+j, i.e. (base^(Offset+j), base^(Offset+j+1)].
	Counts []uint64
	// Exponential only.
	Scale         int32
	Offset        int32
	Zero          uint64  // values ≤ ZeroThreshold
	ZeroThreshold float64 // ≥ 0
}

// Total is the number of samples, at most math.MaxUint64.
func (d *Dist) Total() uint64 {
	if d == nil {
		return 0
	}
	n := d.Zero
	for _, c := range d.Counts {
		n = satAdd(n, c)
	}
	return n
}

// Holds reports whether d holds any sample; it stops at the first.
func (d *Dist) Holds() bool {
	if d == nil {
		return false
	}
	if d.Zero > 0 {
		return true
	}
	for _, c := range d.Counts {
		if c > 0 {
			return true
		}
	}
	return false
}

// satAdd is a + b, or math.MaxUint64 where that would wrap. Every count is
// added this way: each point's buckets add up to its count, but a window
// adds points from many senders, and a sender may claim counts near 2^64
// (docs/architecture.md §10). A count that wrapped would make a window of
// millions hold a handful, and a cut ratio above 1.
func satAdd(a, b uint64) uint64 {
	if c := a + b; c >= a {
		return c
	}
	return math.MaxUint64
}

// Clone returns a deep copy.
func (d *Dist) Clone() *Dist {
	c := *d
	c.Bounds = slices.Clone(d.Bounds)
	c.Counts = slices.Clone(d.Counts)
	return &c
}

// SizeBytes is the memory the distribution holds.
func (d *Dist) SizeBytes() int {
	if d == nil {
		return 0
	}
	return int(unsafe.Sizeof(*d)) + 8*cap(d.Bounds) + 8*cap(d.Counts)
}

// ValidBounds reports whether explicit bounds are usable: finite,
// non-negative (a TTFT is never negative) and strictly increasing.
func ValidBounds(b []float64) bool {
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
		if i > 0 && !(v > b[i-1]) {
			return false
		}
	}
	return true
}

// Interval is where a quantile lies: in (Lower, Upper], or in [0, Upper]
// when the bucket starts at zero. Upper is +Inf when the quantile lies in
// the open-ended last bucket: the data can only say "above Lower".
type Interval struct {
	Lower, Upper float64
}

// Capped is the interval as far as times up to limit seconds go: an upper
// bound past limit says no more than "above" (+Inf), a lower bound past it
// no more than limit. A bucket bound of 10^300 s is the sender's, not a
// time to size a timeout by (docs/architecture.md §10); derived TTFTs past
// derive::max_ttft_seconds are refused the same way.
func (iv Interval) Capped(limit float64) Interval {
	if iv.Upper > limit {
		iv.Upper = math.Inf(1)
	}
	if iv.Lower > limit {
		iv.Lower = limit
	}
	return iv
}

// Rank is the nearest-rank position of quantile q among n samples:
// ⌈q·n⌉, at least 1 (a product a float error above an integer stays on it).
func Rank(q float64, n uint64) uint64 {
	k := uint64(quantile.CeilTol(q * float64(n)))
	return min(max(k, 1), n)
}

// Quantile returns the interval that holds the exact nearest-rank q-quantile
// of the samples the distribution counted; ok is false when it is empty or q
// is not in (0, 1).
func (d *Dist) Quantile(q float64) (Interval, bool) {
	n := d.Total()
	if n == 0 || !(q > 0 && q < 1) {
		return Interval{}, false
	}
	k := Rank(q, n)
	switch d.Kind {
	case Explicit:
		var cum uint64
		for j, c := range d.Counts {
			cum = satAdd(cum, c)
			if cum >= k {
				return d.explicitBucket(j), true
			}
		}
	case Exponential:
		if d.Zero >= k {
			return Interval{Lower: 0, Upper: d.ZeroThreshold}, true
		}
		cum := d.Zero
		for j, c := range d.Counts {
			cum = satAdd(cum, c)
			if cum >= k {
				// A window keeps the widest zero threshold of its
				// sources, so a bucket of a source with a narrower one
				// may lie below it: the zero bucket's samples, counted
				// first, may then be larger than this bucket's, and
				// the rank's sample is at most the threshold.
				iv := d.expoBucket(j)
				iv.Upper = math.Max(iv.Upper, d.ZeroThreshold)
				return iv, true
			}
		}
	}
	return Interval{}, false
}

func (d *Dist) explicitBucket(j int) Interval {
	iv := Interval{Lower: 0, Upper: math.Inf(1)}
	if j > 0 {
		iv.Lower = d.Bounds[j-1]
	}
	if j < len(d.Bounds) {
		iv.Upper = d.Bounds[j]
	}
	return iv
}

// expoBucket is bucket Offset+j widened by one ulp each side, so a value the
// producer put on a boundary computed with a different rounding stays inside.
// Its lower bound is the bucket's, not the zero threshold: in a window that
// merged sources, the threshold is the widest of theirs, and the samples of
// a source with a narrower one may lie under it.
func (d *Dist) expoBucket(j int) Interval {
	i := int64(d.Offset) + int64(j)
	lo := expoBound(i, d.Scale)
	hi := expoBound(i+1, d.Scale)
	return Interval{Lower: math.Nextafter(lo, 0), Upper: math.Nextafter(hi, math.Inf(1))}
}

// expoBound is base^i at the scale: 2^(i·2^−scale).
func expoBound(i int64, scale int32) float64 {
	if scale <= 0 {
		return math.Ldexp(1, int(i<<uint(-scale)))
	}
	return math.Exp2(float64(i) / float64(int64(1)<<uint(scale)))
}

// RelativeWidth is Upper/Lower − 1 of an exponential bucket at the scale:
// the resolution the input allows (scale 8: 0.27%, 7: 0.54%, 6: 1.1%, 3: 9%).
func RelativeWidth(scale int32) float64 {
	return math.Exp2(math.Exp2(-float64(scale))) - 1
}

// CutRatio bounds the share of the samples a timeout of t seconds would cut
// (those slower than t) from above: every sample not known to be ≤ t counts
// as cut, so a bucket that straddles t counts whole.
func (d *Dist) CutRatio(t float64) float64 {
	n := d.Total()
	if n == 0 || math.IsNaN(t) {
		return 0
	}
	var within uint64 // samples known to be ≤ t
	switch d.Kind {
	case Explicit:
		for j, c := range d.Counts {
			if j < len(d.Bounds) && d.Bounds[j] <= t {
				within = satAdd(within, c)
			}
		}
	case Exponential:
		if d.ZeroThreshold <= t {
			within = d.Zero
		}
		for j, c := range d.Counts {
			if d.expoBucket(j).Upper <= t {
				within = satAdd(within, c)
			}
		}
	}
	return float64(n-within) / float64(n)
}

// Merge adds o into d. Explicit layouts that differ are both coarsened to
// the bounds they share (every bucket of either lies inside one bucket of
// the shared layout, so nothing is guessed); exponential ones are
// downscaled to the coarser scale, then further until at most maxBuckets
// buckets span both. It reports whether d lost resolution. Kinds must match.
func (d *Dist) Merge(o *Dist, maxBuckets int) (coarsened bool) {
	if o == nil || o.Kind != d.Kind {
		return false
	}
	if d.Kind == Explicit {
		if slices.Equal(d.Bounds, o.Bounds) {
			for j, c := range o.Counts {
				d.Counts[j] = satAdd(d.Counts[j], c)
			}
			return false
		}
		common := sharedBounds(d.Bounds, o.Bounds)
		d.rebucket(common)
		oc := o.Clone()
		oc.rebucket(common)
		for j, c := range oc.Counts {
			d.Counts[j] = satAdd(d.Counts[j], c)
		}
		return true
	}
	return d.mergeExpo(o, maxBuckets)
}

func sharedBounds(a, b []float64) []float64 {
	var out []float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

// rebucket maps explicit counts onto bounds, a subset of d.Bounds: bucket
// (b[j−1], b[j]] lands in the shared bucket whose upper bound is the first
// shared bound ≥ b[j].
func (d *Dist) rebucket(bounds []float64) {
	counts := make([]uint64, len(bounds)+1)
	m := 0
	for j, c := range d.Counts {
		if j < len(d.Bounds) {
			for m < len(bounds) && bounds[m] < d.Bounds[j] {
				m++
			}
			counts[m] = satAdd(counts[m], c)
		} else {
			counts[len(bounds)] = satAdd(counts[len(bounds)], c)
		}
	}
	d.Bounds, d.Counts = slices.Clone(bounds), counts
}

// Downscale lowers an exponential distribution's scale by k (each bucket i
// becomes i >> k).
func (d *Dist) Downscale(k int32) {
	if k <= 0 || d.Kind != Exponential {
		return
	}
	if d.Scale-k < MinScale {
		k = d.Scale - MinScale
	}
	d.Scale -= k
	if len(d.Counts) == 0 {
		d.Offset >>= k
		return
	}
	first := int64(d.Offset) >> k
	last := (int64(d.Offset) + int64(len(d.Counts)) - 1) >> k
	counts := make([]uint64, last-first+1)
	for j, c := range d.Counts {
		i := ((int64(d.Offset) + int64(j)) >> k) - first
		counts[i] = satAdd(counts[i], c)
	}
	d.Offset, d.Counts = int32(first), counts
}

// Fit downscales an exponential distribution until at most maxBuckets
// buckets hold it; it reports whether it had to.
func (d *Dist) Fit(maxBuckets int) bool {
	changed := false
	for len(d.Counts) > maxBuckets && d.Scale > MinScale {
		d.Downscale(1)
		changed = true
	}
	return changed
}

// Trim drops empty buckets at both ends of an exponential distribution.
func (d *Dist) Trim() {
	if d.Kind != Exponential {
		return
	}
	lo, hi := 0, len(d.Counts)
	for lo < hi && d.Counts[lo] == 0 {
		lo++
	}
	for hi > lo && d.Counts[hi-1] == 0 {
		hi--
	}
	if lo == hi {
		d.Counts, d.Offset = d.Counts[:0], 0
		return
	}
	d.Offset += int32(lo)
	d.Counts = d.Counts[lo:hi]
}

func (d *Dist) mergeExpo(o *Dist, maxBuckets int) bool {
	coarsened := false
	oc := o
	if o.Scale != d.Scale {
		oc = o.Clone()
		if oc.Scale > d.Scale {
			oc.Downscale(oc.Scale - d.Scale)
		} else {
			d.Downscale(d.Scale - oc.Scale)
			coarsened = true
		}
	}
	if oc.ZeroThreshold > d.ZeroThreshold {
		d.ZeroThreshold = oc.ZeroThreshold
	}
	d.Zero = satAdd(d.Zero, oc.Zero)
	d.Trim()
	if oc == o {
		oc = o.Clone()
	}
	oc.Trim()
	if len(oc.Counts) == 0 {
		return coarsened
	}
	if len(d.Counts) == 0 {
		d.Offset, d.Counts = oc.Offset, slices.Clone(oc.Counts)
		if d.Fit(maxBuckets) {
			coarsened = true
		}
		return coarsened
	}
	// Downscale both until the union of their ranges fits.
	for {
		first := min(int64(d.Offset), int64(oc.Offset))
		last := max(int64(d.Offset)+int64(len(d.Counts)), int64(oc.Offset)+int64(len(oc.Counts))) - 1
		if last-first+1 <= int64(maxBuckets) || d.Scale <= MinScale {
			counts := make([]uint64, last-first+1)
			for j, c := range d.Counts {
				i := int64(d.Offset) + int64(j) - first
				counts[i] = satAdd(counts[i], c)
			}
			for j, c := range oc.Counts {
				i := int64(oc.Offset) + int64(j) - first
				counts[i] = satAdd(counts[i], c)
			}
			d.Offset, d.Counts = int32(first), counts
			return coarsened
		}
		d.Downscale(1)
		oc.Downscale(1)
		coarsened = true
	}
}
