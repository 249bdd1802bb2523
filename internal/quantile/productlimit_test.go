package quantile

import (
	"math"
	"testing"

	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile/quantiletest"
)

func sketchOf(vs ...float64) *Sketch {
	s := NewSketch()
	for _, v := range vs {
		s.Add(v)
	}
	return s
}

func TestProductLimitTextbookExample(t *testing.T) {
	// Events 1, 3, 4, 6; censored 2, 5. S: 1→5/6, 3→5/6·3/4=0.625, 4→0.625·2/3≈0.417, 6→0.
	ev, ce := sketchOf(1, 3, 4, 6), sketchOf(2, 5)
	cases := []struct {
		name string
		q    float64
		want float64
	}{
		{"before any censoring F(1)=1/6 covers q=0.1", 0.1, 1},
		{"F(3)=0.375 covers q=0.3", 0.3, 3},
		{"F(4)=0.583 covers the median", 0.5, 4},
		{"only the last event reaches q=0.6", 0.6, 6},
		{"q=0.99 is the last event", 0.99, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st := ProductLimit(ev, ce, c.q)
			if st != PLOK || quantiletest.RelErr(got, c.want) > RelativeAccuracy {
				t.Errorf("q=%v: %v (%v), want %v", c.q, got, st, c.want)
			}
		})
	}
}

func TestProductLimitBeyondCensorGivesTheCutoff(t *testing.T) {
	ev := sketchOf(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	ce := sketchOf(4, 4, 4, 4, 5)
	// 10 of 15 succeeded: F never exceeds 2/3, so p90 lies beyond the cut times.
	got, st := ProductLimit(ev, ce, 0.9)
	if st != PLBeyondCensor || got != 5 {
		t.Errorf("got %v %v, want 5 beyond censor", got, st)
	}
	if got, st := ProductLimit(ev, ce, 0.6); st != PLOK || got != 1 {
		t.Errorf("p60 is covered: got %v %v", got, st)
	}
	if _, st := ProductLimit(NewSketch(), ce, 0.5); st != PLEmpty {
		t.Errorf("no events: %v", st)
	}
}

func TestProductLimitEqualsFullDataWhenCutsLieAboveTheQuantile(t *testing.T) {
	r := quantiletest.Rand(9)
	d := quantiletest.Lognormal(0.8, 0.6)
	full, ev, ce := NewSketch(), NewSketch(), NewSketch()
	const cut = 4.0 // about p99.5
	for range 100_000 {
		v := d.Draw(r)
		full.Add(v)
		if v > cut {
			ce.Add(cut)
		} else {
			ev.Add(v)
		}
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		want, _ := full.Quantile(q)
		got, st := ProductLimit(ev, ce, q)
		if st != PLOK || got != want {
			t.Errorf("p%v: product-limit %v (%v), full data %v", q*100, got, st, want)
		}
		naive, _ := ev.Quantile(q)
		t.Logf("p%v: full %.4f product-limit %.4f successes-only %.4f", q*100, want, got, naive)
	}
	if _, st := ProductLimit(ev, ce, 0.999); st != PLBeyondCensor {
		t.Errorf("p99.9 lies above the cut at p99.5 but status is %v", st)
	}
}

func TestProductLimitWithoutCensoringIsNearestRank(t *testing.T) {
	s := sketchOf(0, 0.5, 1, 2, 3)
	for _, q := range []float64{0, 0.2, 0.4, 0.5, 0.99, 1, math.NaN()} {
		want, wok := s.Quantile(q)
		got, st := ProductLimit(s, NewSketch(), q)
		if (st == PLOK) != wok || got != want {
			t.Errorf("q=%v: %v %v, want %v %v", q, got, st, want, wok)
		}
	}
}

func TestProductLimitInterleavedCensoringMatchesFloatKaplanMeier(t *testing.T) {
	// Random integer times so buckets are exact; compare with a direct KM on raw values.
	r := quantiletest.Rand(11)
	for trial := range 200 {
		ev, ce := NewSketch(), NewSketch()
		type obs struct {
			t   float64
			cen bool
		}
		var all []obs
		for range 1 + r.IntN(60) {
			o := obs{float64(1 + r.IntN(20)), r.IntN(3) == 0}
			all = append(all, o)
			if o.cen {
				ce.Add(o.t)
			} else {
				ev.Add(o.t)
			}
		}
		q := []float64{0.1, 0.5, 0.9, 0.99}[trial%4]
		// Reference KM over distinct times 1..20.
		want, wantBeyond := 0.0, true
		atRisk, s := float64(len(all)), 1.0
		for tm := 1.0; tm <= 20; tm++ {
			var d, c float64
			for _, o := range all {
				if o.t == tm {
					if o.cen {
						c++
					} else {
						d++
					}
				}
			}
			if d > 0 {
				s *= 1 - d/atRisk
				if 1-s >= q-1e-12 {
					want, wantBeyond = tm, false
					break
				}
			}
			atRisk -= d + c
		}
		got, st := ProductLimit(ev, ce, q)
		switch {
		case ev.Count() == 0:
			if st != PLEmpty {
				t.Fatalf("trial %d: no events but %v", trial, st)
			}
		case wantBeyond:
			if mx, _ := ce.Max(); st != PLBeyondCensor || got != mx {
				t.Fatalf("trial %d q=%v: got %v %v, want beyond censor at %v", trial, q, got, st, mx)
			}
		default:
			if st != PLOK || quantiletest.RelErr(got, want) > RelativeAccuracy {
				t.Fatalf("trial %d q=%v: got %v %v, want %v", trial, q, got, st, want)
			}
		}
	}
}
