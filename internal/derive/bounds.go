package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"math"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// bound refuses the times and counts no real request has, before anything is
// derived from them (docs/architecture.md, "Trust"): a span from 1970 to 2300
// is no 10-billion-second request, and a 10^15 s gap sizes no idle timeout.
func (d *Deriver) bound(e *evidence) {
	if e.timingValid && e.duration != math.MaxFloat64 && e.duration > d.cfg.MaxDurationSeconds {
		e.rejected++
		if e.end == 0 {
			e.duration = math.MaxFloat64 // a log record's duration attribute: unknown
		} else {
			e.timingValid = false // a span's clock: none of its times can be trusted
		}
	}
	if e.hasGap && e.maxGap > d.cfg.MaxChunkGapSeconds {
		e.hasGap, e.maxGap = false, 0
		e.rejected++
	}
	if e.hasAttempts && e.attempts > record.MaxAttempts {
		e.hasAttempts = false
		e.rejected++
	}
	if e.hasFallback && (e.fallbackIndex < 0 || e.fallbackIndex >= record.MaxAttempts) {
		e.hasFallback, e.fallbackIndex = false, 0
		e.rejected++
	}
	if e.hasRetries && (e.retries < 0 || e.retries >= record.MaxAttempts) {
		e.hasRetries, e.retries = false, 0
		e.rejected++
	}
}

// readBackLimits are the bounds a read-back record must obey.
func (d *Deriver) readBackLimits() record.Limits {
	return record.Limits{
		MaxTTFT:     d.cfg.MaxTTFTSeconds,
		MaxDuration: d.cfg.MaxDurationSeconds,
		MaxChunkGap: d.cfg.MaxChunkGapSeconds,
		Bands:       d.bands.Labels(),
	}
}
