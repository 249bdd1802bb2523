package bucketed

import (
	"math"

	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/window"
)

// Reasons a Result carries no recommendation.
const (
	ReasonTooFewSamples = recommend.ReasonTooFewSamples
	ReasonInvalidPolicy = recommend.ReasonInvalidPolicy
	// ReasonBeyondBuckets: the quantile lies in the open-ended last bucket,
	// so the data can only say "above the largest bound".
	ReasonBeyondBuckets = "beyond_buckets"
)

// Result is one policy's recommendation from a bucketed window.
type Result struct {
	Seconds  float64 // valid when OK
	OK       bool
	Reason   string
	Interval Interval // where the policy's quantile lies
	Samples  uint64
	CutRatio float64 // upper bound on the share Seconds would cut; valid when OK
}

// Evaluate applies the minimum-volume gate to the bucket counts, locates the
// policy's quantile as an interval and recommends from its upper bound ×
// headroom, rounded up and clamped like an exact recommendation. The result
// therefore cuts at most 1−q of the window's requests (unless the policy's
// own max clamps it lower). Censoring is not claimed: a histogram counts
// only requests that reached their first token, so requests a timeout cut
// are simply absent from it.
//
// limit is the longest time the distribution's bounds may state, in
// seconds (derive::max_ttft_seconds): a quantile whose bucket ends past it
// is beyond the buckets, as one in the open-ended last bucket is.
func Evaluate(p recommend.Policy, d *Dist, minSamples int, limit float64) Result {
	r := Result{Samples: d.Total()}
	if !(p.Quantile > 0 && p.Quantile < 1) || !(p.Headroom > 0) || math.IsInf(p.Headroom, 0) {
		r.Reason = ReasonInvalidPolicy
		return r
	}
	if r.Samples < window.MinSamples(p.Quantile, minSamples) {
		r.Reason = ReasonTooFewSamples
		return r
	}
	iv, ok := d.Quantile(p.Quantile)
	if !ok {
		r.Reason = ReasonTooFewSamples
		return r
	}
	iv = iv.Capped(limit)
	r.Interval = iv
	if math.IsInf(iv.Upper, 1) {
		r.Reason = ReasonBeyondBuckets
		return r
	}
	r.Seconds = recommend.Round(iv.Upper*p.Headroom, p.RoundTo, p.Min, p.Max)
	r.CutRatio = d.CutRatio(r.Seconds)
	r.OK = true
	return r
}
