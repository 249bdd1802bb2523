package quantile

import "math"

// PLStatus says what ProductLimit could estimate.
type PLStatus int

const (
	// PLOK means the estimate is a quantile of the distribution.
	PLOK PLStatus = iota
	// PLEmpty means there are no events to estimate from.
	PLEmpty
	// PLBeyondCensor means more than 1−q of the population was censored before the
	// estimate reached q: the quantile lies beyond the censoring times.
	PLBeyondCensor
)

// ProductLimit estimates the q-quantile of a distribution from observed events
// (exact values) and right-censored observations ("at least this long") with the
// Kaplan–Meier product-limit estimator: S(t) = Π (1 − dⱼ/nⱼ) over event buckets,
// where nⱼ counts everyone (events and censored) still at risk. Censored values in
// the same bucket as events are taken to outlast them, as is conventional.
//
// While no censored observation has been passed the estimate is the exact nearest-rank
// of the whole population (k = ⌈q·(events+censored)⌉), so with censoring only above
// the quantile it equals what full, uncensored data would give.
//
// With PLBeyondCensor the value is the largest censoring time, a lower bound.
func ProductLimit(events, censored *Sketch, q float64) (float64, PLStatus) {
	if events == nil || events.count == 0 || math.IsNaN(q) {
		return 0, PLEmpty
	}
	if censored == nil || censored.count == 0 {
		v, _ := events.Quantile(q)
		return v, PLOK
	}
	total := events.count + censored.count
	k := Rank(q, total)
	// Fast path: the k-th observation is an event at or below the lowest censoring
	// bucket, so no censoring has been passed and the answer is the plain rank.
	if k <= events.zero {
		return events.min, PLOK
	}
	if censored.zero == 0 {
		if i, ok := events.st.rankIndex(k, events.zero); ok && (censored.st.empty() || i <= censored.st.lo) {
			return events.clamp(bucketValue(i)), PLOK
		}
	}
	// Zero bucket first: a zero event precedes everything, a zero censoring is at risk with it.
	var removed uint64
	surv := 1.0
	exact := true // no censoring passed yet: use integer ranks
	step := func(d, c uint64) bool {
		if d > 0 {
			if exact {
				if removed+d >= k {
					return true
				}
				surv = float64(total-removed-d) / float64(total)
			} else {
				surv *= 1 - float64(d)/float64(total-removed)
			}
			if !exact && surv <= (1-q)*(1+1e-12) {
				return true
			}
		}
		removed += d + c
		if c > 0 {
			exact = false
		}
		return false
	}
	if step(events.zero, censored.zero) {
		return events.min, PLOK
	}
	lo, hi := rangeOf(events, censored)
	for i := lo; i <= hi; i++ {
		d, c := events.st.get(i), censored.st.get(i)
		if d == 0 && c == 0 {
			continue
		}
		if step(d, c) {
			return events.clamp(bucketValue(i)), PLOK
		}
	}
	return censored.max, PLBeyondCensor
}

func rangeOf(a, b *Sketch) (lo, hi int) {
	switch {
	case a.st.empty() && b.st.empty():
		return 1, 0
	case a.st.empty():
		return b.st.lo, b.st.hi
	case b.st.empty():
		return a.st.lo, a.st.hi
	}
	return min(a.st.lo, b.st.lo), max(a.st.hi, b.st.hi)
}
