package expohist

import "testing"

func TestCountersWidenOnTheInlinePath(t *testing.T) {
	// 1 ms and 1000 s first bring the scale down to where Update takes its
	// inline path; then one bucket passes 65,535 there, not in increment.
	values := []float64{1e-3, 1e3}
	for range 70_000 {
		values = append(values, 1.5)
	}
	var h Histogram
	h.Init(160)
	for _, v := range values {
		h.Update(v)
	}
	if h.Scale() > 7 {
		t.Fatalf("scale %d: the values must bring it to the inline path's (≤ 7)", h.Scale())
	}
	requireSame(t, "inline overflow", &h, reference(160, values))
	if !h.wide {
		t.Error("a bucket holds 70,000 but the counters are still 16-bit")
	}
}

func TestScaleIsZeroWithOnlyZeros(t *testing.T) {
	values := []float64{0, 0, 0}
	var h Histogram
	h.Init(160)
	for _, v := range values {
		h.Update(v)
	}
	if h.Scale() != 0 {
		t.Errorf("Scale() = %d with only zeros, want 0 as go-expohisto reports", h.Scale())
	}
	requireSame(t, "only zeros", &h, reference(160, values))
}
