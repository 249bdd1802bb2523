package recommend

import (
	"math"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
	"github.com/otelcol-ttft/otelcol-ttft/internal/window"
)

// Reasons a Result carries no recommendation (or a flagged one).
const (
	ReasonTooFewSamples = "too_few_samples"
	ReasonInvalidPolicy = "invalid_policy"
	ReasonBeyondCensor  = "beyond_censor"
)

// Result is one policy's recommendation for one window.
type Result struct {
	Seconds      float64 // the recommended timeout; valid when OK
	OK           bool
	BeyondCensor bool   // the quantile lies beyond the cutoff; Seconds is cutoff × headroom
	Reason       string // why not OK (or "beyond_censor")
	Quantile     float64
	Samples      uint64
	Censored     uint64
}

// MinSamples is the minimum-volume gate for quantile q: max(minSamples, ⌈1/(1−q)⌉)
// successful samples (1/(1−0.999) gives 1000, not 1001).
func MinSamples(q float64, minSamples int) uint64 { return window.MinSamples(q, minSamples) }

// Evaluate applies the gate, takes the policy's quantile (censoring-aware when
// censoring is on), multiplies by the headroom, rounds up to RoundTo and clamps to
// [Min, Max].
func Evaluate(p Policy, snap *window.Snapshot, minSamples int, censoring bool) Result {
	r := Result{Samples: snap.Samples(), Censored: snap.Censored()}
	if !(p.Quantile > 0 && p.Quantile < 1) || !(p.Headroom > 0) || math.IsInf(p.Headroom, 0) {
		r.Reason = ReasonInvalidPolicy
		return r
	}
	v, st := snap.QuantileMin(p.Quantile, minSamples, censoring)
	switch st {
	case window.TooFew:
		r.Reason = ReasonTooFewSamples
		return r
	case window.BeyondCensor:
		r.BeyondCensor, r.Reason = true, ReasonBeyondCensor
	}
	r.Quantile = v
	r.Seconds = Round(v*p.Headroom, p.RoundTo, p.Min, p.Max)
	r.OK = true
	return r
}

// Round rounds seconds up to a multiple of roundTo (when > 0) and clamps it to
// [lo, hi] (hi 0: no upper clamp). A value a float error above a multiple stays on it.
func Round(seconds float64, roundTo, lo, hi time.Duration) float64 {
	if rt := roundTo.Seconds(); rt > 0 {
		// Via integer nanoseconds so 81 × 100ms is 8.1, not 8.100000000000001.
		if k := quantile.CeilTol(seconds / rt); k*float64(roundTo) < math.MaxInt64 {
			seconds = float64(time.Duration(k)*roundTo) / 1e9
		}
	}
	if l := lo.Seconds(); seconds < l {
		seconds = l
	}
	if h := hi.Seconds(); h > 0 && seconds > h {
		seconds = h
	}
	return seconds
}

// DeadlineMargin is what a total deadline leaves for a second attempt:
// deadline − first-token timeout − typical answer time (p50 of successful duration).
// Negative means failover cannot finish in time.
func DeadlineMargin(deadline, firstTokenTimeout, typicalAnswer float64) float64 {
	return deadline - firstTokenTimeout - typicalAnswer
}
