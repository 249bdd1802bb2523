package window

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

type modelObs struct {
	num      int64
	v        float64
	censored bool
}

// FuzzWindow drives a window with observations, censored observations, clock jumps
// (forward and back), snapshots and releases, and checks it against a plain list
// model of which samples are live: counts agree, Empty agrees, quantiles are gated,
// monotone in q and inside the live values' range, with and without censoring.
func FuzzWindow(f *testing.F) {
	op := func(kind byte, dt int16, v float64) []byte {
		b := []byte{kind}
		b = binary.LittleEndian.AppendUint16(b, uint16(dt))
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	join := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	f.Add(byte(24), byte(59), join(op(0, 0, 0.8), op(0, 8, 1.2), op(1, 8, 6.4), op(2, 0, 0)))
	f.Add(byte(3), byte(0), join(op(0, 0, 1), op(0, 100, 2), op(2, -50, 0), op(0, -200, 3), op(2, 0, 0)))
	f.Add(byte(1), byte(9), join(op(1, 0, 5), op(0, 0, 1), op(2, 0, 0), op(3, 32000, 0), op(2, 0, 0)))
	f.Add(byte(7), byte(255), join(op(0, 1, math.NaN()), op(1, 1, -1), op(0, 1, 0), op(2, 1, 0)))
	f.Fuzz(func(t *testing.T, slices, secs byte, data []byte) {
		n := int(slices%30) + 1
		sl := time.Duration(int(secs)+1) * time.Second
		w := New(sl*time.Duration(n), n, t0)
		now := t0
		num := func(at time.Time) int64 { return at.UnixNano() / int64(sl) } // t0 is after 1970
		head := num(now)
		var obs []modelObs
		valid := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }
		for len(data) >= 11 {
			kind := data[0] % 4
			dt := int16(binary.LittleEndian.Uint16(data[1:3]))
			v := math.Float64frombits(binary.LittleEndian.Uint64(data[3:11]))
			data = data[11:]
			now = now.Add(time.Duration(dt) * sl / 8)
			if now.Before(t0) {
				now = t0
			}
			head = max(head, num(now))
			switch kind {
			case 0:
				w.Observe(v, now)
				if valid(v) {
					obs = append(obs, modelObs{head, v, false})
				}
			case 1:
				w.ObserveCensored(v, now)
				if valid(v) {
					obs = append(obs, modelObs{head, v, true})
				}
			case 2:
				checkWindow(t, w, now, head, int64(n), obs)
			case 3:
				w.Release(now)
			}
		}
		checkWindow(t, w, now, head, int64(n), obs)
	})
}

func checkWindow(t *testing.T, w *Window, now time.Time, head, n int64, obs []modelObs) {
	t.Helper()
	var ok, cens uint64
	lo, hi, hiCut := math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, o := range obs {
		if head-o.num >= n {
			continue
		}
		if o.censored {
			cens++
			hiCut = math.Max(hiCut, o.v)
		} else {
			ok++
			lo, hi = math.Min(lo, o.v), math.Max(hi, o.v)
		}
	}
	if w.Empty(now) != (ok+cens == 0) {
		t.Fatalf("Empty %v with %d+%d live", w.Empty(now), ok, cens)
	}
	snap := w.Snapshot(now)
	if snap.Samples() != ok || snap.Censored() != cens {
		t.Fatalf("snapshot %d+%d, model %d+%d", snap.Samples(), snap.Censored(), ok, cens)
	}
	for _, censoring := range []bool{false, true} {
		prev := math.Inf(-1)
		for i := 1; i < 1000; i++ {
			q := float64(i) / 1000
			v, st := snap.QuantileMin(q, 0, censoring)
			if (st == TooFew) != (ok < MinSamples(q, 0)) {
				t.Fatalf("q=%v censoring=%v: status %v with %d samples", q, censoring, st, ok)
			}
			if st == TooFew {
				continue
			}
			if v < prev {
				t.Fatalf("q=%v censoring=%v: %v after %v, not monotone", q, censoring, v, prev)
			}
			prev = v
			top := hi
			if censoring {
				top = math.Max(hi, hiCut)
			}
			if v < lo || v > top {
				t.Fatalf("q=%v censoring=%v: %v outside [%v, %v]", q, censoring, v, lo, top)
			}
			if st == BeyondCensor && v != hiCut {
				t.Fatalf("q=%v: beyond censor at %v, want the largest cut %v", q, v, hiCut)
			}
			if !censoring && st != OK {
				t.Fatalf("q=%v: status %v without censoring", q, st)
			}
		}
		if r := snap.CutRatio(lo); r < 0 || r > 1 || math.IsNaN(r) {
			t.Fatalf("cut ratio %v", r)
		}
	}
}
