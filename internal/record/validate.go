package record

import "math"

// Invalid says why a record read back from ttft.* attributes cannot be
// aggregated as is (docs/architecture.md, "Trust"): a read-back record obeys
// the bounds and closed sets of a derived one, or it is derived afresh.
type Invalid uint8

const (
	// Valid: the record may be aggregated as is.
	Valid Invalid = iota
	// InvalidValue: a time or count of the wrong type, NaN, infinite or negative.
	InvalidValue
	// InvalidOutcome: ttft.outcome is not one of the six outcomes.
	InvalidOutcome
	// InvalidMeasuredAt: ttft.measured_at is not first_content or first_chunk,
	// or does not match the times the record carries.
	InvalidMeasuredAt
	// InvalidObserver: ttft.observer is not client, gateway or server.
	InvalidObserver
	// InvalidPromptBand: ttft.prompt_band is not one of the configured bands.
	InvalidPromptBand
	// InvalidAttempts: ttft.attempts outside [1, MaxAttempts].
	InvalidAttempts
	// InvalidTTFTBound: a time to first content, chunk or headers above max_ttft_seconds.
	InvalidTTFTBound
	// InvalidDurationBound: ttft.duration above max_duration_seconds.
	InvalidDurationBound
	// InvalidGapBound: ttft.max_chunk_gap above max_chunk_gap_seconds or the duration.
	InvalidGapBound
	// InvalidTTFTAfterEnd: a first content, chunk or headers time after the duration.
	InvalidTTFTAfterEnd
	// InvalidChunkAfterContent: the first chunk after the first content.
	InvalidChunkAfterContent

	// NumInvalid is the number of values (for arrays indexed by Invalid).
	NumInvalid
)

var invalidNames = [NumInvalid]string{
	"valid", "bad_value", "outcome", "measured_at", "observer", "prompt_band", "attempts",
	"ttft_above_max", "duration_above_max", "gap_above_max", "ttft_after_end", "chunk_after_content",
}

// String is the reason as own telemetry names it (invalid_record{reason}).
func (r Invalid) String() string {
	if r < NumInvalid {
		return invalidNames[r]
	}
	return "unknown"
}

// MaxAttempts is the most attempts a request record may claim: no gateway
// retries or fails over a hundred times before it streams.
const MaxAttempts = 100

// timeSlack is the tolerance for times compared across clocks (the
// derivation's own: a first token up to 1 ms after the end is accepted).
const timeSlack = 1e-3

// Limits are the bounds a derived record obeys, so a read-back one must too.
type Limits struct {
	MaxTTFT     float64 // derive::max_ttft_seconds
	MaxDuration float64 // derive::max_duration_seconds
	MaxChunkGap float64 // derive::max_chunk_gap_seconds
	// Bands are the configured prompt band labels (unknown included).
	Bands []string
}

// Validate checks a record read back by Inspect against the bounds and
// closed sets of a derived record and returns the first reason it fails, or
// Valid. It is pure and allocates nothing.
func Validate(r *Record, lim *Limits) Invalid {
	if !ValidOutcome(r.Outcome) {
		return InvalidOutcome
	}
	if r.Outcome == OutcomeTimeoutFirstToken && r.HasTimeToFirstContent {
		// Cut before its first token, yet a first-content time: one of
		// the two is false (docs/architecture.md §4, outcome rules).
		return InvalidOutcome
	}
	if badTime(r.TimeToFirstContent, r.HasTimeToFirstContent) || badTime(r.TimeToFirstChunk, r.HasTimeToFirstChunk) ||
		badTime(r.TimeToHeaders, r.HasTimeToHeaders) || badTime(r.MaxChunkGap, r.HasMaxChunkGap) ||
		badTime(r.Duration, r.HasDuration) {
		return InvalidValue
	}
	if (r.HasContentChunks && r.ContentChunks < 0) || (r.HasPromptTokens && r.PromptTokens < 0) ||
		(r.HasCachedTokens && r.CachedTokens < 0) || (r.HasOutputTokens && r.OutputTokens < 0) {
		return InvalidValue
	}
	// The clock a record names must be the one its times come from.
	switch r.MeasuredAt {
	case MeasuredAtFirstContent:
		// Without a content time (a request cut before content) it names
		// the clock the cut counts against; TTFT() then offers no value.
	case MeasuredAtFirstChunk:
		if r.HasTimeToFirstContent || !r.HasTimeToFirstChunk {
			return InvalidMeasuredAt
		}
	case "":
		if r.HasTimeToFirstContent || r.HasTimeToFirstChunk {
			return InvalidMeasuredAt
		}
	default:
		return InvalidMeasuredAt
	}
	switch r.Observer {
	case ObserverClient, ObserverGateway, ObserverServer:
	default:
		return InvalidObserver
	}
	if !bandIn(r.PromptBand, lim.Bands) {
		return InvalidPromptBand
	}
	if r.Attempts < 1 || r.Attempts > MaxAttempts {
		return InvalidAttempts
	}
	if (r.HasTimeToFirstContent && r.TimeToFirstContent > lim.MaxTTFT) ||
		(r.HasTimeToFirstChunk && r.TimeToFirstChunk > lim.MaxTTFT) ||
		(r.HasTimeToHeaders && r.TimeToHeaders > lim.MaxTTFT) {
		return InvalidTTFTBound
	}
	if r.HasDuration && r.Duration > lim.MaxDuration {
		return InvalidDurationBound
	}
	if r.HasMaxChunkGap && (r.MaxChunkGap > lim.MaxChunkGap || (r.HasDuration && r.MaxChunkGap > r.Duration+timeSlack)) {
		return InvalidGapBound
	}
	if r.HasDuration {
		end := r.Duration + timeSlack
		if (r.HasTimeToFirstContent && r.TimeToFirstContent > end) ||
			(r.HasTimeToFirstChunk && r.TimeToFirstChunk > end) ||
			(r.HasTimeToHeaders && r.TimeToHeaders > end) {
			return InvalidTTFTAfterEnd
		}
	}
	if r.HasTimeToFirstContent && r.HasTimeToFirstChunk && r.TimeToFirstChunk > r.TimeToFirstContent {
		return InvalidChunkAfterContent
	}
	return Valid
}

// badTime reports a time that is present and negative, NaN or infinite.
func badTime(v float64, has bool) bool { return has && !(v >= 0 && !math.IsInf(v, 0)) }

// bandIn reports whether band is one of the configured labels (a derived
// record always has one, unknown when no prompt size is known).
func bandIn(band string, bands []string) bool {
	for _, b := range bands {
		if b == band {
			return true
		}
	}
	return false
}
