// Package band labels requests by prompt size (docs/architecture.md §1).
package band // import "github.com/otelcol-ttft/otelcol-ttft/internal/band"

import (
	"errors"
	"fmt"
	"strconv"
)

// Unknown is the band of a request whose prompt size is not known.
const Unknown = "unknown"

// DefaultBoundaries are the default band edges in input tokens.
var DefaultBoundaries = []int64{2000, 16000, 64000}

// Bands maps a prompt token count to a label such as "2k-16k".
type Bands struct {
	bounds []int64
	labels []string // len(bounds)+1
}

// New builds the bands for strictly increasing, positive boundaries.
func New(bounds []int64) (*Bands, error) {
	if err := Validate(bounds); err != nil {
		return nil, err
	}
	b := &Bands{bounds: append([]int64(nil), bounds...)}
	for i := 0; i <= len(bounds); i++ {
		switch {
		case len(bounds) == 0:
			b.labels = append(b.labels, "all")
		case i == 0:
			b.labels = append(b.labels, "<"+Format(bounds[0]))
		case i == len(bounds):
			b.labels = append(b.labels, ">="+Format(bounds[i-1]))
		default:
			b.labels = append(b.labels, Format(bounds[i-1])+"-"+Format(bounds[i]))
		}
	}
	return b, nil
}

// Validate checks boundaries: positive and strictly increasing.
func Validate(bounds []int64) error {
	for i, v := range bounds {
		if v <= 0 {
			return fmt.Errorf("prompt_bands[%d] = %d: boundaries must be positive token counts", i, v)
		}
		if i > 0 && v <= bounds[i-1] {
			return errors.New("prompt_bands must be strictly increasing, e.g. [2000, 16000, 64000]")
		}
	}
	return nil
}

// Label returns the band of a prompt of tokens input tokens. A count of zero
// or less is treated as unknown: no real prompt is empty, and producers
// write 0 when they did not count.
func (b *Bands) Label(tokens int64, known bool) string {
	if !known || tokens <= 0 {
		return Unknown
	}
	for i, edge := range b.bounds {
		if tokens < edge {
			return b.labels[i]
		}
	}
	return b.labels[len(b.bounds)]
}

// Labels returns every label in order, then Unknown.
func (b *Bands) Labels() []string {
	return append(append([]string(nil), b.labels...), Unknown)
}

// Format writes a token count the way band labels do: 2000 → "2k", 1500 → "1.5k".
func Format(v int64) string {
	if v >= 1000 && v%100 == 0 {
		return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(v, 10)
}
