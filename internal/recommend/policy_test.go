package recommend

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/window"
)

func TestDefaultPoliciesMatchDesign(t *testing.T) {
	ps := DefaultPolicies()
	want := []struct {
		name, signal string
		q, headroom  float64
	}{
		{"first_token", SignalTimeToFirstToken, 0.999, 1.25},
		{"gateway_cutoff", SignalTimeToFirstToken, 0.99, 1.25},
		{"idle", SignalMaxChunkGap, 0.999, 1.5},
	}
	if len(ps) != len(want) {
		t.Fatalf("%d default policies, want %d", len(ps), len(want))
	}
	for i, w := range want {
		p := ps[i]
		if p.Name != w.name || p.Signal != w.signal || p.Quantile != w.q || p.Headroom != w.headroom || p.RoundTo != 100*time.Millisecond {
			t.Errorf("policy %d = %+v, want %+v with round_to 100ms", i, p, w)
		}
		if !p.Accepts("first_content") || p.Accepts("first_chunk") {
			t.Errorf("%s: default must accept first_content only", p.Name)
		}
	}
	if err := ValidatePolicies(ps); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestValidateNamesTheKeyAndTheFix(t *testing.T) {
	base := DefaultPolicies()[0]
	cases := []struct {
		name   string
		mutate func(*Policy)
		want   []string
	}{
		{"quantile of 1 is rejected", func(p *Policy) { p.Quantile = 1 }, []string{"policies[0]::quantile", "between 0 and 1"}},
		{"quantile of 0 is rejected", func(p *Policy) { p.Quantile = 0 }, []string{"policies[0]::quantile"}},
		{"NaN quantile is rejected", func(p *Policy) { p.Quantile = math.NaN() }, []string{"policies[0]::quantile"}},
		{"headroom below 1 is rejected", func(p *Policy) { p.Headroom = 0.9 }, []string{"policies[0]::headroom", ">= 1"}},
		{"infinite headroom is rejected", func(p *Policy) { p.Headroom = math.Inf(1) }, []string{"policies[0]::headroom"}},
		{"unknown signal is rejected", func(p *Policy) { p.Signal = "ttft" }, []string{"policies[0]::signal", "time_to_first_token"}},
		{"empty name is rejected", func(p *Policy) { p.Name = "" }, []string{"policies[0]::name"}},
		{"negative round_to is rejected", func(p *Policy) { p.RoundTo = -time.Second }, []string{"policies[0]::round_to"}},
		{"negative min is rejected", func(p *Policy) { p.Min = -time.Second }, []string{"policies[0]::min"}},
		{"max below min is rejected", func(p *Policy) { p.Min, p.Max = 10*time.Second, 5*time.Second }, []string{"policies[0]::max", "below min"}},
		{"unknown measured_at is rejected", func(p *Policy) { p.MeasuredAt = []string{"first_content", "headers"} }, []string{"policies[0]::measured_at[1]", "first_chunk"}},
		{"several errors are all reported", func(p *Policy) { p.Quantile, p.Headroom = 2, 0 }, []string{"policies[0]::quantile", "policies[0]::headroom"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base
			p.MeasuredAt = nil
			c.mutate(&p)
			err := ValidatePolicies([]Policy{p})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if p.Check() == nil {
				t.Error("Policy.Validate accepted it")
			}
		})
	}
	t.Run("duplicate names are rejected with both indexes", func(t *testing.T) {
		ps := DefaultPolicies()
		ps = append(ps, ps[1])
		err := ValidatePolicies(ps)
		if err == nil || !strings.Contains(err.Error(), "policies[3]::name") || !strings.Contains(err.Error(), "policies[1]") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a valid custom policy passes", func(t *testing.T) {
		p := Policy{Name: "chunk_cutoff", Signal: SignalTimeToFirstChunk, Quantile: 0.99, Headroom: 1, Max: time.Minute, MeasuredAt: []string{"first_chunk"}}
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	})
}

func TestPolicyNeverUsesTheWrongClock(t *testing.T) {
	cases := []struct {
		name       string
		accepted   []string
		measuredAt string
		want       bool
	}{
		{"default accepts first_content", nil, "first_content", true},
		{"default treats unset as first_content", nil, "", true},
		{"default refuses first_chunk", nil, "first_chunk", false},
		{"opting in accepts first_chunk", []string{"first_chunk"}, "first_chunk", true},
		{"opting into first_chunk alone refuses first_content", []string{"first_chunk"}, "first_content", false},
		{"both may be accepted", []string{"first_content", "first_chunk"}, "first_chunk", true},
		{"unknown values are refused", []string{"first_content"}, "headers", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Policy{MeasuredAt: c.accepted}
			if got := p.Accepts(c.measuredAt); got != c.want {
				t.Errorf("Accepts(%q) = %v", c.measuredAt, got)
			}
		})
	}
}

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// constant builds a window of n successes all equal to v (so the quantile is exactly v).
func constant(v float64, n int) *window.Snapshot {
	w := window.New(24*time.Hour, 24, t0)
	for range n {
		w.Observe(v, t0)
	}
	return w.Snapshot(t0)
}

func TestEvaluateGateAtTheBoundary(t *testing.T) {
	first := DefaultPolicies()[0]
	p50 := Policy{Name: "p50", Signal: SignalDuration, Quantile: 0.5, Headroom: 1}
	cases := []struct {
		name    string
		p       Policy
		samples int
		ok      bool
	}{
		{"999 samples: no first_token recommendation", first, 999, false},
		{"1000 samples: first_token recommended", first, 1000, true},
		{"199 samples: no p50 with min_samples 200", p50, 199, false},
		{"200 samples: p50 with min_samples 200", p50, 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Evaluate(c.p, constant(4, c.samples), 200, true)
			if r.OK != c.ok || r.Samples != uint64(c.samples) {
				t.Fatalf("%+v", r)
			}
			if !c.ok && (r.Reason != ReasonTooFewSamples || r.Seconds != 0) {
				t.Errorf("gated result %+v, want reason %s and no seconds", r, ReasonTooFewSamples)
			}
		})
	}
	if g := MinSamples(0.999, 200); g != 1000 {
		t.Errorf("MinSamples(0.999, 200) = %d", g)
	}
}

func TestEvaluateRoundsUpAndClamps(t *testing.T) {
	cases := []struct {
		name     string
		p50      float64
		headroom float64
		roundTo  time.Duration
		min      time.Duration
		max      time.Duration
		want     float64
	}{
		{"7.5 s × 1.25 rounds up to 9.4 s", 7.5, 1.25, 100 * time.Millisecond, 0, 0, 9.4},
		{"an exact multiple stays (5.12 × 1.25 = 6.4)", 5.12, 1.25, 100 * time.Millisecond, 0, 0, 6.4},
		{"8 s × 1.25 rounded to 1 s is 10 s", 8, 1.25, time.Second, 0, 0, 10},
		{"a sliver above rounds up a whole step", 8.0001, 1, time.Second, 0, 0, 9},
		{"round_to 0 leaves the value", 3.3, 1.5, 0, 0, 0, 3.3 * 1.5},
		{"min lifts a small value", 0.1, 1.25, 100 * time.Millisecond, time.Second, 0, 1},
		{"max caps a large value", 100, 1.25, 100 * time.Millisecond, 0, 30 * time.Second, 30},
		{"max 0 means no cap", 100, 1.25, 100 * time.Millisecond, 0, 0, 125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Policy{Name: "x", Signal: SignalTimeToFirstToken, Quantile: 0.5, Headroom: c.headroom, RoundTo: c.roundTo, Min: c.min, Max: c.max}
			r := Evaluate(p, constant(c.p50, 10), 0, true)
			if !r.OK || math.Abs(r.Seconds-c.want) > 1e-12 {
				t.Errorf("got %+v, want %v s", r, c.want)
			}
		})
	}
}

func TestEvaluateRefusesAnInvalidPolicy(t *testing.T) {
	for _, p := range []Policy{{Quantile: 1, Headroom: 1}, {Quantile: 0.5, Headroom: 0}, {Quantile: 0.5, Headroom: math.NaN()}} {
		if r := Evaluate(p, constant(1, 100), 0, true); r.OK || r.Reason != ReasonInvalidPolicy {
			t.Errorf("%+v: %+v", p, r)
		}
	}
}

func TestEvaluateBeyondCensorRecommendsCutoffTimesHeadroom(t *testing.T) {
	w := window.New(24*time.Hour, 24, t0)
	for i := range 1900 {
		w.Observe(0.5+float64(i)/1900, t0) // 0.5 .. 1.5 s
	}
	for range 100 { // 5% cut at 2 s: p99.9 and p99 lie beyond the cutoff
		w.ObserveCensored(2, t0)
	}
	snap := w.Snapshot(t0)
	for _, p := range DefaultPolicies()[:2] {
		r := Evaluate(p, snap, 200, true)
		if !r.OK || !r.BeyondCensor || r.Reason != ReasonBeyondCensor || r.Seconds != 2.5 || r.Quantile != 2 {
			t.Errorf("%s: %+v, want 2 s × 1.25 = 2.5 s flagged beyond censor", p.Name, r)
		}
		naive := Evaluate(p, snap, 200, false)
		if naive.BeyondCensor || naive.Seconds >= 2 {
			t.Errorf("%s without censoring: %+v, expected a value under the 1.5 s successes × 1.25", p.Name, naive)
		}
	}
}

func TestDeadlineMargin(t *testing.T) {
	cases := []struct {
		name                     string
		deadline, timeout, typ50 float64
		want                     float64
	}{
		{"room for a second attempt", 30, 10, 5, 15},
		{"exactly no room", 30, 20, 10, 0},
		{"failover cannot finish", 30, 25, 8, -3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DeadlineMargin(c.deadline, c.timeout, c.typ50); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
