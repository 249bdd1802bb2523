package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

// ttftVerdict is what a request's duration says about one TTFT candidate.
type ttftVerdict uint8

const (
	ttftAccepted ttftVerdict = iota
	// ttftAfterEnd: a first token after the request ended is from another
	// clock.
	ttftAfterEnd
	// ttftIsDuration: a "TTFT" as long as the whole request (±1 ms), on a
	// call not known to stream, is the duration in disguise (OpenLIT and
	// others report the duration as TTFT for non-streamed calls).
	ttftIsDuration
)

// durationSlack is the clock resolution the duration checks allow (1 ms).
const durationSlack = 1e-3

// checkTTFT applies the duration rules to a TTFT v against the request's
// duration (both seconds). streamed is whether the call is known to
// stream; a clock that only stops on a streamed delta (per-chunk events, a
// first-content export) may equal the duration of a one-chunk answer, and
// says so with perChunk.
func checkTTFT(v, duration float64, streamed, perChunk bool) ttftVerdict {
	if v > duration+durationSlack {
		return ttftAfterEnd
	}
	if !streamed && !perChunk && v >= duration-durationSlack {
		return ttftIsDuration
	}
	return ttftAccepted
}
