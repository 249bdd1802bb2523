// Package expohist is a base-2 exponential histogram of non-negative values
// for the connector's exported histograms: bucket for bucket the histogram
// github.com/lightstep/go-expohisto/structure builds (scale from 20 down,
// at most MaxSize buckets, the same index rule and downscaling), without its
// per-observation logarithm, which was the connector's largest cost.
package expohist // import "github.com/otelcol-ttft/otelcol-ttft/internal/expohist"

import (
	"math"
	"slices"

	"github.com/lightstep/go-expohisto/mapping"
	"github.com/lightstep/go-expohisto/mapping/logarithm"

	"github.com/otelcol-ttft/otelcol-ttft/internal/logindex"
)

const (
	// MaxScale is where an empty histogram starts (go-expohisto's).
	MaxScale int32 = 20
	// MinScale is the lowest scale downscaling reaches.
	MinScale int32 = -10
)

// fine holds go-expohisto's own mappings for scales finer than logindex's.
var fine [MaxScale + 1]mapping.Mapping

func init() {
	for s := int32(logindex.Scale + 1); s <= MaxScale; s++ {
		m, err := logarithm.NewMapping(s)
		if err != nil {
			panic(err)
		}
		fine[s] = m
	}
}

// Histogram holds positive values in buckets (base^i, base^(i+1)] with
// base = 2^(2^-scale), zeros in a zero count. The zero value is unusable:
// call Init.
//
// The dense run of buckets is kept in 16-bit counters until one would pass
// 65,535, then in 64-bit ones (go-expohisto's counters widen the same way,
// from 8 bits). A record adds to a bucket that other records of its batch
// seldom touch, so each update loads the bucket's cache line: narrow
// counters put four times as many buckets in a line, and more of a series'
// buckets stay in the cache between batches (README, "Measured
// performance").
type Histogram struct {
	maxSize  int32
	scale    int32
	count    uint64
	zero     uint64
	sum      float64
	min, max float64
	start    int32 // bucket index of the run's first counter
	// wide says the run is in c64; else it is in c16. Either is empty when
	// no positive value was seen.
	wide bool
	c16  []uint16
	c64  []uint64
}

// Init empties h and sets its bucket limit.
func (h *Histogram) Init(maxSize int32) {
	h.maxSize = maxSize
	h.Clear()
}

// Clear empties h, keeping its memory (and its counters' width).
func (h *Histogram) Clear() {
	h.scale, h.count, h.zero, h.sum, h.min, h.max, h.start = MaxScale, 0, 0, 0, 0, 0, 0
	h.c16, h.c64 = h.c16[:0], h.c64[:0]
}

// Update adds one value. Negative, NaN and infinite values are ignored:
// request times are validated before they get here.
func (h *Histogram) Update(v float64) {
	k, ok := logindex.Ceil(v)
	h.UpdateCeil(v, k, ok)
}

// UpdateCeil is Update with logindex.Ceil(v) already computed, for a
// caller that indexes the same value elsewhere too.
func (h *Histogram) UpdateCeil(v float64, k int, kok bool) {
	if !(v >= 0) || math.IsInf(v, 1) {
		return
	}
	if h.count == 0 {
		h.min, h.max = v, v
	} else if v < h.min {
		h.min = v
	} else if v > h.max {
		h.max = v
	}
	h.count++
	if v == 0 {
		h.zero++
		return
	}
	h.sum += v
	if kok && h.scale <= logindex.Scale {
		// The usual case, inline: a bucket within the run held.
		sh := logindex.Scale - h.scale
		j := int32((k+(1<<sh)-1)>>sh-1) - h.start
		if !h.wide {
			if j >= 0 && j < int32(len(h.c16)) && h.c16[j] < math.MaxUint16 {
				h.c16[j]++
				return
			}
		} else if j >= 0 && j < int32(len(h.c64)) {
			h.c64[j]++
			return
		}
	}
	i := index(v, h.scale, k, kok)
	if !h.increment(i) {
		h.downscale(i)
		h.increment(index(v, h.scale, k, kok))
	}
}

// index is the bucket of v > 0 at scale s: ⌈log2(v)·2^s⌉ − 1, from
// k, kok = logindex.Ceil(v) (⌈128·log2 v⌉) where the scale allows.
func index(v float64, s int32, k int, kok bool) int32 {
	if s > logindex.Scale {
		return fine[s].MapToIndex(v)
	}
	if !kok {
		// Subnormal: below any TTFT; let the library place it.
		m, _ := logarithm.NewMapping(logindex.Scale)
		return m.MapToIndex(v) >> (logindex.Scale - s)
	}
	sh := logindex.Scale - s
	return int32((k+(1<<sh)-1)>>sh - 1)
}

// widen moves the run into 64-bit counters.
func (h *Histogram) widen() {
	c64 := make([]uint64, len(h.c16), max(cap(h.c16), 1))
	for i, c := range h.c16 {
		c64[i] = uint64(c)
	}
	h.c16, h.c64, h.wide = nil, c64, true
}

// increment adds one to bucket i when it fits within maxSize buckets.
func (h *Histogram) increment(i int32) bool {
	if !h.wide {
		if p := i - h.start; len(h.c16) > 0 && p >= 0 && p < int32(len(h.c16)) && h.c16[p] == math.MaxUint16 {
			h.widen()
		} else {
			return incrementRun(&h.c16, &h.start, h.maxSize, i)
		}
	}
	return incrementRun(&h.c64, &h.start, h.maxSize, i)
}

// incrementRun adds one to bucket i of the run c starting at bucket
// *start, growing the run when i is outside it and the run would still hold
// at most maxSize buckets. An existing counter of c has room for one more.
func incrementRun[C uint16 | uint64](c *[]C, start *int32, maxSize, i int32) bool {
	counts := *c
	n := int32(len(counts))
	switch {
	case n == 0:
		*start = i
		*c = append(counts, 1)
		return true
	case i >= *start && i < *start+n:
		counts[i-*start]++
		return true
	case i >= *start+n:
		if i-*start >= maxSize {
			return false
		}
		for int32(len(counts)) < i-*start {
			counts = append(counts, 0)
		}
		*c = append(counts, 1)
		return true
	default: // i < *start
		end := *start + n - 1
		if end-i >= maxSize {
			return false
		}
		grow := int(*start - i)
		counts = append(counts, make([]C, grow)...)
		copy(counts[grow:], counts[:n])
		clear(counts[:grow])
		counts[0] = 1
		*c, *start = counts, i
		return true
	}
}

// downscale lowers the scale until the run of buckets and index i fit in
// maxSize buckets, merging neighbours (go-expohisto's changeScale rule).
func (h *Histogram) downscale(i int32) {
	n := int32(len(h.c16))
	if h.wide {
		n = int32(len(h.c64))
	}
	low, high := min(h.start, i), max(h.start+n-1, i)
	var change int32
	for high-low >= h.maxSize {
		high >>= 1
		low >>= 1
		change++
	}
	if h.scale-change < MinScale {
		change = h.scale - MinScale
	}
	if change == 0 {
		return
	}
	if !h.wide && mergedOverflow(h.c16, h.start, change) {
		h.widen()
	}
	if h.wide {
		h.start = mergeRun(&h.c64, h.start, change)
	} else {
		h.start = mergeRun(&h.c16, h.start, change)
	}
	h.scale -= change
}

// mergedOverflow reports whether merging the 16-bit run c (from bucket
// start) down by change scales would sum some buckets past 65,535.
func mergedOverflow(c []uint16, start, change int32) bool {
	newStart := start >> change
	var j int32 = -1
	var sum uint64
	for k, n := range c {
		if jj := (start+int32(k))>>change - newStart; jj != j {
			j, sum = jj, 0
		}
		if sum += uint64(n); sum > math.MaxUint16 {
			return true
		}
	}
	return false
}

// mergeRun merges the run c (from bucket start) down by change scales and
// returns its new start.
func mergeRun[C uint16 | uint64](c *[]C, start, change int32) int32 {
	counts := *c
	newStart := start >> change
	for k, n := range counts {
		if n == 0 && k > 0 {
			continue
		}
		j := (start+int32(k))>>change - newStart
		if int32(k) != j {
			counts[j] += n
			counts[k] = 0
		}
	}
	newLen := (start+int32(len(counts))-1)>>change - newStart + 1
	*c = counts[:newLen]
	return newStart
}

// Count is the number of values, zeros included.
func (h *Histogram) Count() uint64 { return h.count }

// Sum is the sum of the values.
func (h *Histogram) Sum() float64 { return h.sum }

// Min is the smallest value (0 when empty).
func (h *Histogram) Min() float64 { return h.min }

// Max is the largest value (0 when empty).
func (h *Histogram) Max() float64 { return h.max }

// ZeroCount is the number of zero values.
func (h *Histogram) ZeroCount() uint64 { return h.zero }

// Scale is the current scale; 0 when no positive value was seen (as
// go-expohisto reports it: without buckets the scale means nothing).
func (h *Histogram) Scale() int32 {
	if h.count == h.zero {
		return 0
	}
	return h.scale
}

// Offset is the index of the first positive bucket.
func (h *Histogram) Offset() int32 { return h.start }

// BucketCounts returns the positive buckets from Offset on, in a new slice.
func (h *Histogram) BucketCounts() []uint64 {
	return h.AppendBucketCounts(nil)
}

// AppendBucketCounts appends the positive buckets from Offset on to dst.
func (h *Histogram) AppendBucketCounts(dst []uint64) []uint64 {
	if h.wide {
		return append(dst, h.c64...)
	}
	dst = slices.Grow(dst, len(h.c16))
	for _, c := range h.c16 {
		dst = append(dst, uint64(c))
	}
	return dst
}

// SizeBytes estimates the memory h holds.
func (h *Histogram) SizeBytes() int { return 64 + 2*cap(h.c16) + 8*cap(h.c64) }
