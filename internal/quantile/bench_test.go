package quantile

import (
	"testing"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

func BenchmarkSketchAdd(b *testing.B) {
	vals := quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), quantiletest.Rand(1), 1<<16)
	s := NewSketch()
	for _, v := range vals {
		s.Add(v)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(vals[i&(1<<16-1)])
	}
}

func BenchmarkSketchQuantile(b *testing.B) {
	s := NewSketch()
	for _, v := range quantiletest.Sample(quantiletest.Lognormal(0.8, 0.6), quantiletest.Rand(2), 1_000_000) {
		s.Add(v)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Quantile(0.999)
	}
}
