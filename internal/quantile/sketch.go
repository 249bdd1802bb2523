// Package quantile is a mergeable, bounded-memory log-bucket sketch over positive
// float64 seconds (docs/architecture.md §6: in-collector quantiles within 1% of exact nearest-rank).
//
// Bucket i holds values in (γ^(i-1), γ^i] with γ = 2^(1/128), and reports the value
// 2γ^i/(1+γ), so any quantile is within (γ-1)/(γ+1) ≈ 0.27% of a value in the
// bucket that holds the exact nearest-rank sample. Buckets are one dense run of
// counters that start as uint8 and widen on overflow; the run is capped at
// MaxBuckets and, like DDSketch's collapsing-lowest store, folds the lowest
// buckets into one when a wider range arrives: the tail (which timeouts are made
// from) stays exact. Values below MinValue (including 0) go to a zero bucket.
// Memory depends on the value range, never on the sample count.
//
// Not safe for concurrent use: the caller locks.
package quantile // import "github.com/otelcol-ttft/otelcol-ttft/internal/quantile"

import (
	"math"
	"unsafe"

	"github.com/otelcol-ttft/otelcol-ttft/internal/logindex"
)

const (
	// BucketsPerOctave sets the resolution: γ = 2^(1/BucketsPerOctave).
	BucketsPerOctave = logindex.PerOctave // 128: index uses logindex.Ceil
	// MaxBuckets caps the dense run: 32 octaves, e.g. 1 µs to over an hour at full resolution.
	MaxBuckets = 4096
	// MinValue is the smallest value given its own bucket; smaller ones count as zero.
	MinValue = 1e-9
)

var (
	gamma = math.Exp2(1.0 / BucketsPerOctave)
	// RelativeAccuracy is the worst relative error of a bucket's reported value.
	RelativeAccuracy = (gamma - 1) / (gamma + 1)
	midFactor        = 2 / (1 + gamma)
)

// Sketch counts values in logarithmic buckets. The zero value is not usable; call NewSketch.
type Sketch struct {
	st        store
	count     uint64 // valid values, zero bucket included
	zero      uint64 // values below MinValue
	invalid   uint64 // NaN, ±Inf, negative: ignored but counted
	min, max  float64
	collapsed uint64 // values folded into the lowest bucket by the cap
}

// NewSketch returns an empty sketch.
func NewSketch() *Sketch {
	s := &Sketch{}
	s.Reset()
	return s
}

// index is ⌈BucketsPerOctave·log2 v⌉, without a logarithm on the usual path.
func index(v float64) int {
	if k, ok := logindex.Ceil(v); ok {
		return k
	}
	return int(math.Ceil(math.Log2(v) * BucketsPerOctave))
}

// bucketValue is the value reported for bucket i.
func bucketValue(i int) float64 {
	return math.Exp2(float64(i)/BucketsPerOctave) * midFactor
}

// Add records one value.
func (s *Sketch) Add(v float64) { s.AddN(v, 1) }

// AddN records n copies of v. NaN, ±Inf and negative values are ignored and counted in Invalid.
func (s *Sketch) AddN(v float64, n uint64) {
	if n == 0 {
		return
	}
	s.addN(v, n)
}

// AddCounted is Add that returns how many values lost their own bucket:
// 1 when v is below MinValue, plus the values the cap folded into the
// lowest bucket (the growth of ZeroCount and Collapsed).
func (s *Sketch) AddCounted(v float64) uint64 {
	k, ok := logindex.Ceil(v)
	return s.AddCountedCeil(v, k, ok)
}

// AddCountedCeil is AddCounted with logindex.Ceil(v) already computed, for
// a caller that indexes the same value elsewhere too.
func (s *Sketch) AddCountedCeil(v float64, k int, kok bool) uint64 {
	if !kok {
		return s.addN(v, 1) // zero, subnormal, infinite or NaN
	}
	if v < 0 {
		s.invalid++
		return 0
	}
	s.count++
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	if v < MinValue {
		s.zero++
		return 1
	}
	folded := s.st.add(k, 1)
	s.collapsed += folded
	return folded
}

func (s *Sketch) addN(v float64, n uint64) (unresolved uint64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		s.invalid += n
		return 0
	}
	s.count += n
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	if v < MinValue {
		s.zero += n
		return n
	}
	folded := s.st.add(index(v), n)
	s.collapsed += folded
	return folded
}

// Merge adds every value of o into s. o is not changed.
func (s *Sketch) Merge(o *Sketch) {
	if o == nil || o == s {
		if o == s && o != nil {
			s.double()
		}
		return
	}
	s.invalid += o.invalid
	if o.count == 0 {
		return
	}
	s.count += o.count
	s.zero += o.zero
	s.collapsed += o.collapsed
	s.min = math.Min(s.min, o.min)
	s.max = math.Max(s.max, o.max)
	if o.st.empty() {
		return
	}
	if !o.st.dense {
		for _, p := range o.st.pairs {
			s.collapsed += s.st.add(int(p.idx), uint64(p.n))
		}
		return
	}
	s.st.densify()
	lo, hi := o.st.lo, o.st.hi
	// Extend to o's range first (top, then bottom, so the cap folds the lows).
	s.collapsed += s.st.add(hi, 0)
	s.collapsed += s.st.add(lo, 0)
	if lo < s.st.lo {
		folded := o.st.sum(lo, s.st.lo-1)
		s.st.inc(s.st.lo-s.st.off, folded)
		s.collapsed += folded
		lo = s.st.lo
	}
	s.st.mergeFrom(&o.st, lo, hi)
}

// double merges s with itself.
func (s *Sketch) double() {
	s.invalid *= 2
	if s.count == 0 {
		return
	}
	s.count *= 2
	s.zero *= 2
	s.collapsed *= 2
	if s.st.empty() {
		return
	}
	s.st.densify()
	for i := s.st.lo; i <= s.st.hi; i++ {
		if c := s.st.get(i); c > 0 {
			s.collapsed += s.st.add(i, c)
		}
	}
}

// Count is the number of valid values recorded.
func (s *Sketch) Count() uint64 { return s.count }

// Invalid is the number of NaN, infinite or negative values that were ignored.
func (s *Sketch) Invalid() uint64 { return s.invalid }

// ZeroCount is the number of values below MinValue.
func (s *Sketch) ZeroCount() uint64 { return s.zero }

// Collapsed is the number of values the bucket cap folded into the lowest bucket
// (an upper bound after merges: a folded value may be counted again when merged).
func (s *Sketch) Collapsed() uint64 { return s.collapsed }

// Min is the exact smallest value recorded (false when empty).
func (s *Sketch) Min() (float64, bool) { return s.min, s.count > 0 }

// Max is the exact largest value recorded (false when empty).
func (s *Sketch) Max() (float64, bool) { return s.max, s.count > 0 }

// Quantile returns the nearest-rank q-quantile: the value of rank k = ⌈q·n⌉ (1-based)
// of the sorted values, within RelativeAccuracy, clamped to the exact [min, max].
// False when the sketch is empty or q is NaN.
func (s *Sketch) Quantile(q float64) (float64, bool) {
	if s.count == 0 || math.IsNaN(q) {
		return 0, false
	}
	return s.atRank(Rank(q, s.count)), true
}

// atRank returns the value of rank k (1 ≤ k ≤ count).
// The extremes are exact: rank 1 is the minimum and rank n the maximum.
func (s *Sketch) atRank(k uint64) float64 {
	if k >= s.count {
		return s.max
	}
	if k <= s.zero || k <= 1 {
		return s.min
	}
	if i, ok := s.st.rankIndex(k, s.zero); ok {
		return s.clamp(bucketValue(i))
	}
	return s.max
}

func (s *Sketch) clamp(v float64) float64 {
	return math.Min(math.Max(v, s.min), s.max)
}

// CountAbove returns how many values are greater than v. Values sharing v's bucket
// are counted as not above (an error of at most one bucket width, 0.54%).
func (s *Sketch) CountAbove(v float64) uint64 {
	if s.count == 0 || math.IsNaN(v) || v >= s.max {
		return 0
	}
	if v < s.min {
		return s.count
	}
	if v < MinValue {
		return s.count - s.zero
	}
	return s.st.sum(index(v)+1, s.st.hi)
}

// Reset empties the sketch and keeps its buffer for reuse.
func (s *Sketch) Reset() {
	s.st.reset()
	s.count, s.zero, s.invalid, s.collapsed = 0, 0, 0, 0
	s.min, s.max = math.Inf(1), math.Inf(-1)
}

// Release empties the sketch and drops its buffer.
func (s *Sketch) Release() {
	s.Reset()
	s.st = store{}
}

// SizeBytes is the memory held by the sketch, struct and buffer.
func (s *Sketch) SizeBytes() int {
	return int(unsafe.Sizeof(*s)) + s.st.sizeBytes()
}

// Rank is the 1-based nearest rank ⌈q·n⌉ clamped to [1, n] (0 when n is 0).
// q·n is snapped to an integer it misses only by float error, so 0.7·10 is 7, not 8.
func Rank(q float64, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	if !(q > 0) {
		return 1
	}
	if q >= 1 {
		return n
	}
	k := CeilTol(q * float64(n))
	if k < 1 {
		return 1
	}
	if k >= float64(n) {
		return n
	}
	return uint64(k)
}

// CeilTol is ⌈x⌉ except that x within float error of an integer gives that integer
// (1/(1−0.999) = 1000.0000000000009 gives 1000).
func CeilTol(x float64) float64 {
	r := math.Round(x)
	if math.Abs(x-r) <= math.Min(1e-9*math.Max(1, math.Abs(x)), 1e-7) {
		return r
	}
	return math.Ceil(x)
}
