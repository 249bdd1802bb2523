// Package logindex maps a value to its logarithmic bucket without computing
// a logarithm: both the window sketch and the exported histograms do this
// for every observation.
package logindex // import "github.com/otelcol-ttft/otelcol-ttft/internal/logindex"

import "math"

const (
	// PerOctave is the resolution of Ceil: 2^Scale buckets per power of two.
	PerOctave = 1 << Scale
	// Scale is the exponential-histogram scale of Ceil's buckets.
	Scale = 7
	// sliceBits mantissa bits split an octave into slices of log2-width at
	// most log2(1+2^-10) ≈ 0.0014, below a bucket's 1/128, so a slice
	// straddles at most one bucket edge.
	sliceBits = 10
)

var (
	// edge[j] = 2^(j/PerOctave): the upper edge of bucket j within an octave.
	edge [PerOctave + 1]float64
	// slice[t] is ⌈PerOctave·log2 m⌉ at the low end m = 1+t/2^sliceBits.
	slice [1 << sliceBits]uint8
)

func init() {
	for j := range edge {
		edge[j] = math.Exp2(float64(j) / PerOctave)
	}
	for t := range slice {
		m := 1 + float64(t)/(1<<sliceBits)
		j := 0
		for m > edge[j] {
			j++
		}
		slice[t] = uint8(j)
	}
}

// Ceil returns ⌈PerOctave·log2 v⌉: the exponent gives the octave, the top
// mantissa bits a slice of it, and one comparison with the next bucket edge
// settles the rest. ok is false for zero, subnormal, infinite and NaN
// values, which callers handle (or place) themselves.
func Ceil(v float64) (k int, ok bool) {
	bits := math.Float64bits(v)
	exp := int(bits>>52&0x7ff) - 1023
	if exp == -1023 || exp == 1024 {
		return 0, false
	}
	mbits := bits&(1<<52-1) | 1023<<52
	j := int(slice[mbits>>(52-sliceBits)&(1<<sliceBits-1)])
	if math.Float64frombits(mbits) > edge[j] {
		j++
	}
	return exp*PerOctave + j, true
}
