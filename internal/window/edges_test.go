package window

import (
	"testing"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
)

func TestSliceBoundaryInsideOneSecondIsSeen(t *testing.T) {
	// 500 ms slices: t0 and t0+600 ms share a Unix second but not a slice, so
	// the per-batch slice number cache must not key on the second alone.
	w := New(time.Second, 2, t0)
	w.Observe(1, t0)
	w.Observe(2, t0.Add(600*time.Millisecond))
	// At t0+1.1 s the first slice is two behind the head and gone; the second lives.
	snap := w.Snapshot(t0.Add(1100 * time.Millisecond))
	if v, _ := snap.Successes().Min(); snap.Samples() != 1 || v != 2 {
		t.Fatalf("at t0+1.1s: %d samples, min %v; want only the sample of t0+600ms", snap.Samples(), v)
	}
}

func TestTakeOutOfRangeCountsBothSketchesOnce(t *testing.T) {
	w := New(day, 24, t0)
	tiny := quantile.MinValue / 1000 // a normal float64, below the sketch's range
	w.Observe(tiny, t0)
	w.Observe(1, t0)
	w.ObserveCensored(tiny, t0)
	w.ObserveCensored(5, t0)
	if n := w.TakeOutOfRange(); n != 2 {
		t.Errorf("TakeOutOfRange = %d, want 2 (one success, one censored below MinValue)", n)
	}
	if n := w.TakeOutOfRange(); n != 0 {
		t.Errorf("second TakeOutOfRange = %d, want 0: the count is taken, not peeked", n)
	}
}

func TestSizeBytesCountsCensoredSketches(t *testing.T) {
	w := New(day, 24, t0)
	w.Observe(1, t0)
	before := w.SizeBytes()
	w.ObserveCensored(5, t0)
	cs := w.ring[w.headPos].censored
	if cs == nil {
		t.Fatal("no censored sketch in the head slice")
	}
	if got, want := w.SizeBytes(), before+cs.SizeBytes(); got != want {
		t.Errorf("SizeBytes after a censored sample = %d, want %d (%d + the censored sketch's %d)", got, want, before, cs.SizeBytes())
	}
}

func TestTimesBefore1970(t *testing.T) {
	// Slice numbers are negative here; −1 and −25 both sit at the ring's last position.
	w := New(day, 24, time.Unix(-25*3600, 0))
	w.Observe(1, time.Unix(-25*3600, 0))
	w.Observe(2, time.Unix(-1, 0))
	snap := w.Snapshot(time.Unix(-1, 0))
	if v, _ := snap.Successes().Min(); snap.Samples() != 1 || v != 2 {
		t.Fatalf("at 1969-12-31T23:59:59: %d samples, min %v; want only the second", snap.Samples(), v)
	}
	if w.Snapshot(time.Unix(23*3600, 0)).Samples() != 0 {
		t.Error("the sample of 1969's last slice outlived the window")
	}
}
