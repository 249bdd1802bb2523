// Package quantiletest holds the test distributions of issue 3 and an exact
// nearest-rank reference, shared by the tests of quantile, window and recommend.
package quantiletest // import "github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Dist draws one sample in seconds.
type Dist struct {
	Name string
	Draw func(r *rand.Rand) float64
}

// Lognormal has the given median and σ of the log.
func Lognormal(median, sigma float64) Dist {
	return Dist{Name: "lognormal", Draw: func(r *rand.Rand) float64 {
		return median * math.Exp(sigma*r.NormFloat64())
	}}
}

// Bimodal is 90% around 0.3 s and 10% around 6 s (each lognormal, σ 0.25).
func Bimodal() Dist {
	return Dist{Name: "bimodal", Draw: func(r *rand.Rand) float64 {
		m := 0.3
		if r.Float64() < 0.1 {
			m = 6
		}
		return m * math.Exp(0.25*r.NormFloat64())
	}}
}

// Pareto has tail index alpha from xmin.
func Pareto(alpha, xmin float64) Dist {
	return Dist{Name: "pareto", Draw: func(r *rand.Rand) float64 {
		return xmin / math.Pow(1-r.Float64(), 1/alpha) // 1−U is in (0,1]
	}}
}

// Issue3 are the three distributions the accuracy tests must pass.
func Issue3() []Dist {
	return []Dist{Lognormal(0.8, 0.6), Bimodal(), Pareto(1.5, 0.2)}
}

// Rand is a deterministic generator for a test seed.
func Rand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// Sample draws n values.
func Sample(d Dist, r *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.Draw(r)
	}
	return xs
}

// NearestRank is the exact nearest-rank q-quantile: the k-th smallest value,
// k = ⌈q·n⌉ (1-based). It sorts a copy.
func NearestRank(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return NearestRankSorted(s, q)
}

// NearestRankSorted is NearestRank on sorted values.
func NearestRankSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[ExactRank(q, len(sorted))-1]
}

// ExactRank is ⌈q·n⌉ clamped to [1, n] in exact rational arithmetic on q's shortest
// decimal form (0.999 means 999/1000), independent of the float tricks in quantile.Rank.
func ExactRank(q float64, n int) int {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(q, 'g', -1, 64))
	if !ok {
		return 1
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(n)))
	k := new(big.Int).Quo(r.Num(), r.Denom()) // floor for positive r
	if new(big.Rat).SetInt(k).Cmp(r) < 0 {
		k.Add(k, big.NewInt(1))
	}
	return min(max(int(k.Int64()), 1), n)
}

// RelErr is |got−want|/want.
func RelErr(got, want float64) float64 { return math.Abs(got-want) / want }
