// Package recommend turns a window of samples into timeout recommendations
// (docs/architecture.md §2, §8): quantile × headroom, rounded up, clamped, behind the
// minimum-volume gate.
//
// Censoring: requests ended by timeout_first_token are right-censored samples and
// enter the quantile through the product-limit estimate, so an enforced timeout does
// not truncate the tail it is computed from. When more than 1−q of the window was cut
// the data can only say "the quantile is at least the cutoff"; the recommendation is
// then cutoff × headroom (rounded, clamped) and flagged BeyondCensor. Recommending the
// bare lower bound would freeze the timeout at the cutoff forever; multiplying it by
// the headroom lets the timeout grow back window by window until fewer than 1−q are
// cut, instead of ratcheting down.
//
// Never from the wrong clock: a policy consumes only windows whose ttft.measured_at it
// accepts (default first_content); first_chunk data must be opted into.
package recommend // import "github.com/otelcol-ttft/otelcol-ttft/internal/recommend"

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Signals a policy can be computed from (the histogram names of docs/architecture.md §6 without "ttft.").
const (
	SignalTimeToFirstToken = "time_to_first_token"
	SignalTimeToFirstChunk = "time_to_first_chunk"
	SignalMaxChunkGap      = "max_chunk_gap"
	SignalDuration         = "duration"
)

// Signals lists the valid signal names.
var Signals = []string{SignalTimeToFirstToken, SignalTimeToFirstChunk, SignalMaxChunkGap, SignalDuration}

// MeasuredAtValues lists the valid ttft.measured_at values.
var MeasuredAtValues = []string{record.MeasuredAtFirstContent, record.MeasuredAtFirstChunk}

// Policy is one configured timeout recommendation.
type Policy struct {
	Name       string        `mapstructure:"name"`
	Signal     string        `mapstructure:"signal"` // time_to_first_token | time_to_first_chunk | max_chunk_gap | duration
	Quantile   float64       `mapstructure:"quantile"`
	Headroom   float64       `mapstructure:"headroom"`
	RoundTo    time.Duration `mapstructure:"round_to"`
	Min        time.Duration `mapstructure:"min"`
	Max        time.Duration `mapstructure:"max"`         // 0: no upper clamp
	MeasuredAt []string      `mapstructure:"measured_at"` // accepted ttft.measured_at values; default [first_content]
}

// DefaultPolicies are the policies of docs/architecture.md §2.
func DefaultPolicies() []Policy {
	return []Policy{
		{Name: "first_token", Signal: SignalTimeToFirstToken, Quantile: 0.999, Headroom: 1.25, RoundTo: 100 * time.Millisecond},
		{Name: "gateway_cutoff", Signal: SignalTimeToFirstToken, Quantile: 0.99, Headroom: 1.25, RoundTo: 100 * time.Millisecond},
		{Name: "idle", Signal: SignalMaxChunkGap, Quantile: 0.999, Headroom: 1.5, RoundTo: 100 * time.Millisecond},
	}
}

// Accepts reports whether the policy may use data measured at measuredAt.
// An empty list accepts first_content only; an empty measuredAt is first_content
// (the record's default).
func (p *Policy) Accepts(measuredAt string) bool {
	if measuredAt == "" {
		measuredAt = record.MeasuredAtFirstContent
	}
	if len(p.MeasuredAt) == 0 {
		return measuredAt == record.MeasuredAtFirstContent
	}
	return slices.Contains(p.MeasuredAt, measuredAt)
}

// Check checks one policy; errors name the key and say how to fix it
// (ValidatePolicies prefixes the index). Not named Validate: the collector
// would call it again for every list element and report each error twice.
func (p *Policy) Check() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("name: must not be empty; it labels ttft.policy"))
	}
	if !slices.Contains(Signals, p.Signal) {
		errs = append(errs, fmt.Errorf("signal: %q is not one of %v", p.Signal, Signals))
	}
	if !(p.Quantile > 0 && p.Quantile < 1) {
		errs = append(errs, fmt.Errorf("quantile: %v must be strictly between 0 and 1, e.g. 0.999", p.Quantile))
	}
	if !(p.Headroom >= 1) || math.IsInf(p.Headroom, 0) {
		errs = append(errs, fmt.Errorf("headroom: %v must be a finite factor >= 1, e.g. 1.25", p.Headroom))
	}
	if p.RoundTo < 0 {
		errs = append(errs, fmt.Errorf("round_to: %v must not be negative; use 0 to disable rounding", p.RoundTo))
	}
	if p.Min < 0 {
		errs = append(errs, fmt.Errorf("min: %v must not be negative", p.Min))
	}
	if p.Max < 0 {
		errs = append(errs, fmt.Errorf("max: %v must not be negative; use 0 for no upper clamp", p.Max))
	}
	if p.Max > 0 && p.Max < p.Min {
		errs = append(errs, fmt.Errorf("max: %v is below min %v; raise max or lower min", p.Max, p.Min))
	}
	for i, m := range p.MeasuredAt {
		if !slices.Contains(MeasuredAtValues, m) {
			errs = append(errs, fmt.Errorf("measured_at[%d]: %q is not one of %v", i, m, MeasuredAtValues))
		}
	}
	return errors.Join(errs...)
}

// ValidatePolicies validates a list and prefixes each error with policies[i]::,
// also rejecting duplicate names (they would collide in ttft.policy).
func ValidatePolicies(ps []Policy) error {
	var errs []error
	seen := map[string]int{}
	for i := range ps {
		if err := ps[i].Check(); err != nil {
			for _, e := range unjoin(err) {
				errs = append(errs, fmt.Errorf("policies[%d]::%w", i, e))
			}
		}
		if j, dup := seen[ps[i].Name]; dup && ps[i].Name != "" {
			errs = append(errs, fmt.Errorf("policies[%d]::name: %q already used by policies[%d]; names must be unique", i, ps[i].Name, j))
		} else {
			seen[ps[i].Name] = i
		}
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
