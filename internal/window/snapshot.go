package window

import (
	"math"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
)

// Status says whether a quantile could be estimated.
type Status int

const (
	// OK: the value is an estimate of the quantile.
	OK Status = iota
	// TooFew: fewer successful samples than the gate max(min_samples, ⌈1/(1−q)⌉).
	TooFew
	// BeyondCensor: more than 1−q of the population was cut by a timeout, so the
	// quantile lies beyond the cutoff; the value is the largest cut time, a lower bound.
	BeyondCensor
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case TooFew:
		return "too_few_samples"
	case BeyondCensor:
		return "beyond_censor"
	}
	return "unknown"
}

// Snapshot is the merged view of a window's live slices at one instant.
type Snapshot struct {
	ok       *quantile.Sketch
	censored *quantile.Sketch
}

// Samples is the number of successful samples in the window.
func (s *Snapshot) Samples() uint64 {
	if s == nil || s.ok == nil {
		return 0
	}
	return s.ok.Count()
}

// Censored is the number of censored samples in the window.
func (s *Snapshot) Censored() uint64 {
	if s == nil || s.censored == nil {
		return 0
	}
	return s.censored.Count()
}

// Successes exposes the merged sketch of successful samples (read only).
func (s *Snapshot) Successes() *quantile.Sketch { return s.ok }

// CensoredSketch exposes the merged sketch of censoring times (read only).
func (s *Snapshot) CensoredSketch() *quantile.Sketch { return s.censored }

// MinSamples is the gate for quantile q: max(minSamples, ⌈1/(1−q)⌉), computed without
// the float error that would make 1/(1−0.999) need 1001 samples. q outside (0,1) gives
// an unreachable gate.
func MinSamples(q float64, minSamples int) uint64 {
	if !(q > 0 && q < 1) {
		return math.MaxUint64
	}
	g := quantile.CeilTol(1 / (1 - q))
	n := uint64(max(minSamples, 0))
	if g >= float64(math.MaxUint64) {
		return math.MaxUint64
	}
	return max(n, uint64(g))
}

// QuantileMin estimates the q-quantile when the window holds at least
// MinSamples(q, minSamples) successful samples, else returns TooFew.
// With censoring, censored samples enter as right-censored observations
// (product-limit); without, they are ignored as naive tools do, which biases the
// tail low once a timeout is enforced.
func (s *Snapshot) QuantileMin(q float64, minSamples int, censoring bool) (float64, Status) {
	if s == nil || s.ok == nil || s.Samples() < MinSamples(q, minSamples) {
		return 0, TooFew
	}
	if !censoring {
		v, _ := s.ok.Quantile(q)
		return v, OK
	}
	v, st := quantile.ProductLimit(s.ok, s.censored, q)
	switch st {
	case quantile.PLOK:
		return v, OK
	case quantile.PLBeyondCensor:
		return v, BeyondCensor
	}
	return 0, TooFew
}

// CutRatio is the share of the window's requests (successes + censored) that a
// timeout of the given seconds would cut: successes slower than it, plus every
// censored request. For a timeout above a request's cut time its fate is unknown,
// so the ratio is then an upper bound.
func (s *Snapshot) CutRatio(timeout float64) float64 {
	total := s.Samples() + s.Censored()
	if total == 0 || math.IsNaN(timeout) {
		return 0
	}
	return float64(s.ok.CountAbove(timeout)+s.Censored()) / float64(total)
}

// SizeBytes is the memory held by the snapshot.
func (s *Snapshot) SizeBytes() int {
	if s == nil || s.ok == nil {
		return 0
	}
	return s.ok.SizeBytes() + s.censored.SizeBytes()
}
