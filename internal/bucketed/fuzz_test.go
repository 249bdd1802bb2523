package bucketed

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// FuzzMerge: any two distributions of a kind merge without panic, keep
// every sample, stay within maxBuckets (exponential), and give intervals
// that are ordered and hold a rank's sample count.
func FuzzMerge(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 10, 11}, int8(3), int8(0), uint16(7))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, []byte{255, 255}, int8(20), int8(-10), uint16(1))
	f.Add([]byte{}, []byte{1}, int8(8), int8(8), uint16(1000))
	f.Add([]byte{0, 0, 5, 0x86, 3}, []byte{0, 0, 9, 9, 9}, int8(2), int8(2), uint16(160))
	f.Fuzz(func(t *testing.T, a, b []byte, sa, sb int8, maxBuckets uint16) {
		mb := int(maxBuckets%2048) + 2
		for _, kind := range []Kind{Explicit, Exponential} {
			da, db := fuzzDist(kind, a, int32(sa)), fuzzDist(kind, b, int32(sb))
			if da == nil || db == nil {
				continue
			}
			total := da.Total() + db.Total()
			if total < da.Total() { // overflow: counts from the fuzzer, not a real window
				continue
			}
			now := time.Unix(1_800_000_000, 0)
			w := NewWindow(kind, time.Hour, 3, mb, now)
			w.Add(da, now)
			w.Add(db, now.Add(20*time.Minute))
			snap := w.Snapshot(now.Add(30 * time.Minute))
			if snap.Total() != total {
				t.Fatalf("%v: %d samples after merge, want %d", kind, snap.Total(), total)
			}
			if kind == Exponential && len(snap.Counts) > mb && snap.Scale > MinScale {
				t.Fatalf("%d buckets > max %d at scale %d", len(snap.Counts), mb, snap.Scale)
			}
			for _, q := range []float64{0.01, 0.5, 0.99, 0.999} {
				iv, ok := snap.Quantile(q)
				if total == 0 {
					if ok {
						t.Fatal("interval from an empty distribution")
					}
					continue
				}
				if !ok || math.IsNaN(iv.Lower) || !(iv.Lower <= iv.Upper) {
					t.Fatalf("q=%v: interval %+v", q, iv)
				}
				if r := snap.CutRatio(iv.Upper); !math.IsInf(iv.Upper, 1) && r > 1-q+1e-9 {
					t.Fatalf("q=%v: cutting at the upper bound %v cuts %v > 1−q", q, iv.Upper, r)
				}
			}
		}
	})
}

// fuzzDist builds a distribution from bytes: explicit bounds from
// accumulated positive steps, counts from bytes; nil when unusable.
func fuzzDist(kind Kind, raw []byte, scale int32) *Dist {
	if kind == Explicit {
		n := len(raw) / 2
		d := &Dist{Kind: Explicit}
		v := 0.0
		for i := 0; i < n; i++ {
			v += float64(raw[2*i]%16+1) * 0.01
			d.Bounds = append(d.Bounds, v)
		}
		for i := 0; i <= n; i++ {
			c := uint64(0)
			if 2*i+1 < len(raw) {
				c = uint64(raw[2*i+1])
			}
			d.Counts = append(d.Counts, c)
		}
		return d
	}
	if scale < MinScale || scale > MaxScale {
		return nil
	}
	d := &Dist{Kind: Exponential, Scale: scale}
	if len(raw) >= 2 {
		d.Offset = int32(int16(binary.LittleEndian.Uint16(raw))) // keeps bounds finite at every scale
		raw = raw[2:]
	}
	for _, b := range raw {
		d.Counts = append(d.Counts, uint64(b))
	}
	if len(raw) > 0 {
		d.Zero = uint64(raw[0] % 3)
	}
	if len(raw) > 1 && raw[1]&0x80 != 0 {
		// A zero threshold at one of the first buckets' bounds, or past
		// them: merged, the window keeps the wider of two.
		d.ZeroThreshold = expoBound(int64(d.Offset)+int64(raw[1]&7), scale)
	}
	return d
}
