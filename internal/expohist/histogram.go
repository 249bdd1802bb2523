// Package expohist is a base-2 exponential histogram of non-negative values
// for the connector's exported histograms: bucket for bucket the histogram
// github.com/lightstep/go-expohisto/structure builds (scale from 20 down,
// at most MaxSize buckets, the same index rule and downscaling), without its
// per-observation logarithm, which was the connector's largest cost.
package expohist // import "github.com/otelcol-ttft/otelcol-ttft/internal/expohist"

import (
	"math"

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
type Histogram struct {
	maxSize  int32
	scale    int32
	count    uint64
	zero     uint64
	sum      float64
	min, max float64
	start    int32    // bucket index of counts[0]
	counts   []uint64 // dense run of buckets; empty when no positive value was seen
}

// Init empties h and sets its bucket limit.
func (h *Histogram) Init(maxSize int32) {
	h.maxSize = maxSize
	h.Clear()
}

// Clear empties h, keeping its memory.
func (h *Histogram) Clear() {
	h.scale, h.count, h.zero, h.sum, h.min, h.max, h.start = MaxScale, 0, 0, 0, 0, 0, 0
	h.counts = h.counts[:0]
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
		if j := int32((k+(1<<sh)-1)>>sh-1) - h.start; j >= 0 && j < int32(len(h.counts)) {
			h.counts[j]++
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

// increment adds one to bucket i when it fits within maxSize buckets.
func (h *Histogram) increment(i int32) bool {
	n := int32(len(h.counts))
	switch {
	case n == 0:
		h.start = i
		h.counts = append(h.counts, 1)
		return true
	case i >= h.start && i < h.start+n:
		h.counts[i-h.start]++
		return true
	case i >= h.start+n:
		if i-h.start >= h.maxSize {
			return false
		}
		for int32(len(h.counts)) < i-h.start {
			h.counts = append(h.counts, 0)
		}
		h.counts = append(h.counts, 1)
		return true
	default: // i < h.start
		end := h.start + n - 1
		if end-i >= h.maxSize {
			return false
		}
		grow := int(h.start - i)
		h.counts = append(h.counts, make([]uint64, grow)...)
		copy(h.counts[grow:], h.counts[:n])
		clear(h.counts[:grow])
		h.counts[0] = 1
		h.start = i
		return true
	}
}

// downscale lowers the scale until the run of buckets and index i fit in
// maxSize buckets, merging neighbours (go-expohisto's changeScale rule).
func (h *Histogram) downscale(i int32) {
	low, high := min(h.start, i), max(h.start+int32(len(h.counts))-1, i)
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
	newStart := h.start >> change
	for k, c := range h.counts {
		if c == 0 && k > 0 {
			continue
		}
		j := (h.start+int32(k))>>change - newStart
		if int32(k) != j {
			h.counts[j] += c
			h.counts[k] = 0
		}
	}
	newLen := (h.start+int32(len(h.counts))-1)>>change - newStart + 1
	h.counts = h.counts[:newLen]
	h.start = newStart
	h.scale -= change
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

// BucketCounts are the positive buckets from Offset on; do not modify.
func (h *Histogram) BucketCounts() []uint64 { return h.counts }

// SizeBytes estimates the memory h holds.
func (h *Histogram) SizeBytes() int { return 64 + 8*cap(h.counts) }
