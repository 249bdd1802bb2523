package logindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCeilMatchesTheLogarithm(t *testing.T) {
	// Equal to ⌈128·log2 v⌉ everywhere but within a rounding error of a
	// bucket edge, where either neighbour is right.
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 2_000_000; i++ {
		v := math.Exp2(rng.Float64()*60 - 30)
		want := math.Log2(v) * PerOctave
		got, ok := Ceil(v)
		if !ok || (float64(got) != math.Ceil(want) && math.Abs(float64(got)-want) > 1e-9 && math.Abs(float64(got)-1-want) > 1e-9) {
			t.Fatalf("Ceil(%v) = %d, %v, want %v", v, got, ok, math.Ceil(want))
		}
	}
	for _, v := range []float64{1, 2, 0.5, 1e-9, 3600, math.Exp2(1.0 / PerOctave), math.Nextafter(2, 0)} {
		if got, _ := Ceil(v); got != int(math.Ceil(math.Log2(v)*PerOctave)) {
			t.Errorf("Ceil(%v) = %d, want %v", v, got, math.Ceil(math.Log2(v)*PerOctave))
		}
	}
}

func TestCeilRefusesWhatIsNotANormalNumber(t *testing.T) {
	for _, v := range []float64{0, 0x1p-1074, math.Inf(1), math.NaN()} {
		if _, ok := Ceil(v); ok {
			t.Errorf("Ceil(%v) ok", v)
		}
	}
}

func BenchmarkCeil(b *testing.B) {
	vs := make([]float64, 1024)
	for i := range vs {
		vs[i] = 0.05 + float64(i)*0.037
	}
	sum := 0
	for i := 0; b.Loop(); i++ {
		k, _ := Ceil(vs[i&1023])
		sum += k
	}
	_ = sum
}

func BenchmarkLog2Ceil(b *testing.B) {
	vs := make([]float64, 1024)
	for i := range vs {
		vs[i] = 0.05 + float64(i)*0.037
	}
	sum := 0
	for i := 0; b.Loop(); i++ {
		sum += int(math.Ceil(math.Log2(vs[i&1023]) * PerOctave))
	}
	_ = sum
}
