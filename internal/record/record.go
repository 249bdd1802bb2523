// Package record defines the request record of docs/architecture.md §5: one per streamed
// LLM request, written as ttft.* attributes by the processor and the receiver
// and read back by the connector.
package record // import "github.com/otelcol-ttft/otelcol-ttft/internal/record"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Attribute keys of the request record. They are a contract with other tools:
// never rename them.
const (
	KeyTimeToFirstContent = "ttft.time_to_first_content"
	KeyTimeToFirstChunk   = "ttft.time_to_first_chunk"
	KeyTimeToHeaders      = "ttft.time_to_headers"
	KeyMaxChunkGap        = "ttft.max_chunk_gap"
	KeyDuration           = "ttft.duration"
	KeyContentChunks      = "ttft.content_chunks"
	KeyOutcome            = "ttft.outcome"
	KeyPromptBand         = "ttft.prompt_band"
	KeyAttempts           = "ttft.attempts"
	KeyMeasuredAt         = "ttft.measured_at"
	KeyObserver           = "ttft.observer"
	KeyRoute              = "ttft.route"

	// Added after the first keys; docs/architecture.md §5 lists them too (added, never renamed).
	KeyPromptTokens = "ttft.prompt_tokens"
	KeyCachedTokens = "ttft.cached_tokens"
	KeyOutputTokens = "ttft.output_tokens"
	KeyStreamed     = "ttft.streamed"
	KeySource       = "ttft.source"
	// KeyFailedOver says whether another target was tried before the one
	// that answered (a retry of the same target is an attempt, not a
	// failover). Absent when the source cannot tell.
	KeyFailedOver = "ttft.failed_over"
	// KeyNestedIn marks a span whose evidence was folded into an enclosing
	// span's record (value: that span's id), so nothing counts it twice.
	KeyNestedIn = "ttft.nested_in"

	// Target keys, normalised from the producer's own attribute names.
	KeyProvider = "gen_ai.provider.name"
	KeyModel    = "gen_ai.request.model"
)

// Outcomes (docs/architecture.md §1): exactly one per request.
const (
	OutcomeComplete          = "complete"
	OutcomeError             = "error"
	OutcomeClosed            = "closed"
	OutcomeTimeoutFirstToken = "timeout_first_token"
	OutcomeTimeoutIdle       = "timeout_idle"
	OutcomeTimeoutDeadline   = "timeout_deadline"
)

// ValidOutcome reports whether s is one of the six outcomes.
func ValidOutcome(s string) bool {
	switch s {
	case OutcomeComplete, OutcomeError, OutcomeClosed,
		OutcomeTimeoutFirstToken, OutcomeTimeoutIdle, OutcomeTimeoutDeadline:
		return true
	}
	return false
}

// Where the TTFT clock stopped.
const (
	MeasuredAtFirstContent = "first_content"
	MeasuredAtFirstChunk   = "first_chunk"
)

// SourceChunkEvent is the ttft.source of a time read from the stream
// instrumentation's ttft.chunk events (derive.EventChunk). They tell content
// from a role-only or framing chunk, so a first_chunk time from them means
// the chunks before it carried none: the first content had not come.
const SourceChunkEvent = "ttft.chunk"

// Where the clock ran.
const (
	ObserverClient  = "client"
	ObserverGateway = "gateway"
	ObserverServer  = "server"
)

// Record is one streamed request. Durations are seconds; a Has* flag is
// false when the source offered no such value (never substitute another).
type Record struct {
	TimeToFirstContent    float64
	HasTimeToFirstContent bool
	TimeToFirstChunk      float64
	HasTimeToFirstChunk   bool
	TimeToHeaders         float64
	HasTimeToHeaders      bool
	MaxChunkGap           float64
	HasMaxChunkGap        bool
	Duration              float64
	HasDuration           bool

	ContentChunks    int64
	HasContentChunks bool
	PromptTokens     int64
	HasPromptTokens  bool
	CachedTokens     int64
	HasCachedTokens  bool
	OutputTokens     int64
	HasOutputTokens  bool

	// Streamed is meaningful only when StreamedKnown.
	Streamed      bool
	StreamedKnown bool
	// FailedOver is meaningful only when FailedOverKnown; otherwise more
	// than one attempt is read as a failover.
	FailedOver      bool
	FailedOverKnown bool

	Outcome    string
	PromptBand string
	Attempts   int64 // ≥1
	MeasuredAt string
	Observer   string
	Route      string
	Provider   string
	Model      string
	// Source names the evidence the TTFT came from (attribute or event name).
	Source string
	// StaleKeys: the attributes Write stamps hold record keys the
	// derivation did not read (a sender's, without ttft.outcome): Write
	// removes every record key first, so none survives beside the
	// derived record. Not itself written.
	StaleKeys bool
}

// TTFT returns the best time to first token the record offers: first content
// where known, else first chunk when that is what the source measured.
func (r *Record) TTFT() (float64, bool) {
	if r.HasTimeToFirstContent {
		return r.TimeToFirstContent, true
	}
	if r.HasTimeToFirstChunk && r.MeasuredAt == MeasuredAtFirstChunk {
		return r.TimeToFirstChunk, true
	}
	return 0, false
}

// DidFailOver reports whether another target was tried before the one that
// answered: as the source said, else whether there was more than one attempt.
func (r *Record) DidFailOver() bool {
	if r.FailedOverKnown {
		return r.FailedOver
	}
	return r.Attempts > 1
}

// FirstContentSeen reports whether the request is known to have produced content.
func (r *Record) FirstContentSeen() bool {
	if r.HasTimeToFirstContent || (r.HasContentChunks && r.ContentChunks > 0) {
		return true
	}
	// A first-chunk source cannot tell; an outcome that needed content can.
	return r.Outcome == OutcomeComplete || r.Outcome == OutcomeTimeoutIdle
}

// Write stamps the record on attrs, overwriting earlier ttft.* values. The
// target keys are written only when absent, so producers' values win.
//
// Over a record already stamped (one that failed validation and was derived
// afresh), the old record's keys are removed first, so none of its forged
// values outlives it on the span.
func (r *Record) Write(attrs pcommon.Map) {
	if _, stamped := attrs.Get(KeyOutcome); stamped || r.StaleKeys {
		attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return IsRecordKey(k) })
	}
	attrs.EnsureCapacity(attrs.Len() + maxKeys)
	// ttft.outcome first: Carries, which stops at it, then passes over
	// no other record key.
	putStr(attrs, KeyOutcome, r.Outcome)
	putDouble(attrs, KeyTimeToFirstContent, r.TimeToFirstContent, r.HasTimeToFirstContent)
	putDouble(attrs, KeyTimeToFirstChunk, r.TimeToFirstChunk, r.HasTimeToFirstChunk)
	putDouble(attrs, KeyTimeToHeaders, r.TimeToHeaders, r.HasTimeToHeaders)
	putDouble(attrs, KeyMaxChunkGap, r.MaxChunkGap, r.HasMaxChunkGap)
	putDouble(attrs, KeyDuration, r.Duration, r.HasDuration)
	putInt(attrs, KeyContentChunks, r.ContentChunks, r.HasContentChunks)
	putInt(attrs, KeyPromptTokens, r.PromptTokens, r.HasPromptTokens)
	putInt(attrs, KeyCachedTokens, r.CachedTokens, r.HasCachedTokens)
	putInt(attrs, KeyOutputTokens, r.OutputTokens, r.HasOutputTokens)
	if r.StreamedKnown {
		attrs.PutBool(KeyStreamed, r.Streamed)
	}
	if r.FailedOverKnown {
		attrs.PutBool(KeyFailedOver, r.FailedOver)
	}
	putStr(attrs, KeyPromptBand, r.PromptBand)
	attempts := r.Attempts
	if attempts < 1 {
		attempts = 1
	}
	attrs.PutInt(KeyAttempts, attempts)
	putStr(attrs, KeyMeasuredAt, r.MeasuredAt)
	putStr(attrs, KeyObserver, r.Observer)
	putStr(attrs, KeyRoute, r.Route)
	putStr(attrs, KeySource, r.Source)
	putTarget(attrs, KeyProvider, r.Provider)
	putTarget(attrs, KeyModel, r.Model)
}

// putTarget writes a target key the producer left without a usable value:
// absent, empty or not a string (Inspect reads the target back as a
// string, so a record derived from another key would otherwise lose its
// provider or model on the way to the connector). A producer's own
// non-empty value is kept.
func putTarget(attrs pcommon.Map, key, v string) {
	if v == "" {
		return
	}
	if cur, ok := attrs.Get(key); ok && cur.Type() == pcommon.ValueTypeStr && cur.Str() != "" {
		return
	}
	attrs.PutStr(key, v)
}

// maxKeys is the most attributes Write adds: the 18 ttft.* keys (the route
// among them) and the two target keys. Reserving them all costs one size class of array at
// most; a guess of 14 made a record with more (cached tokens, headers, a
// failover, a producer without a model) grow the array a second time, and
// counting the keys present costs more instructions than the slack does.
const maxKeys = 20

// IsRecordKey reports whether k is written by Write from the record alone
// (not the route or target, which may be the producer's own attributes,
// nor ttft.nested_in).
func IsRecordKey(k string) bool {
	switch k {
	case KeyTimeToFirstContent, KeyTimeToFirstChunk, KeyTimeToHeaders, KeyMaxChunkGap, KeyDuration,
		KeyContentChunks, KeyOutcome, KeyPromptBand, KeyAttempts, KeyMeasuredAt, KeyObserver,
		KeyPromptTokens, KeyCachedTokens, KeyOutputTokens, KeyStreamed, KeySource, KeyFailedOver:
		return true
	}
	return false
}

// State is what Inspect found on a span or log record.
type State uint8

const (
	// StateNone: no request record (r holds whatever ttft.* keys were there).
	StateNone State = iota
	// StateStamped: a usable record, now in r.
	StateStamped
	// StateInvalid: a record whose values are unusable; skip it.
	StateInvalid
	// StateNested: a span folded into an enclosing span's record; skip it.
	StateNested
)

// Inspect reads attrs in one pass and says whether they carry a record, an
// unusable one (and why), a nested marker, or nothing. A span carries dozens of
// attributes: one lookup per record key would scan them all ~20 times.
//
// The loop body is small enough for the compiler to inline, so a key that
// is neither ttft.* nor as long as the target keys (most of a span's
// attributes, all of them on a span the processor has yet to stamp) costs
// a length test and a word compare, no call.
func Inspect(attrs pcommon.Map, r *Record) (State, Invalid) {
	*r = Record{Attempts: 1}
	in := inspector{r: r}
	for k, v := range attrs.All() {
		if len(k) > len(ttftPrefix) && k[:len(ttftPrefix)] == ttftPrefix {
			// The keys a record has many of are read here, in the loop:
			// a call per key cost more than reading its value did. The
			// rest, one or none a record, go to key. The loop body is
			// near the size the compiler still inlines for a range body
			// (cost 785 of 800, go build -gcflags=-m): a case more may
			// put it out of line, a call for every attribute.
			var f *float64
			var n *int64
			var s *string
			var b, has *bool
			switch k {
			case KeyTimeToFirstContent:
				f, has = &r.TimeToFirstContent, &r.HasTimeToFirstContent
			case KeyTimeToFirstChunk:
				f, has = &r.TimeToFirstChunk, &r.HasTimeToFirstChunk
			case KeyTimeToHeaders:
				f, has = &r.TimeToHeaders, &r.HasTimeToHeaders
			case KeyMaxChunkGap:
				f, has = &r.MaxChunkGap, &r.HasMaxChunkGap
			case KeyDuration:
				f, has = &r.Duration, &r.HasDuration
			case KeyContentChunks:
				n, has = &r.ContentChunks, &r.HasContentChunks
			case KeyPromptTokens:
				n, has = &r.PromptTokens, &r.HasPromptTokens
			case KeyCachedTokens:
				n, has = &r.CachedTokens, &r.HasCachedTokens
			case KeyOutputTokens:
				n, has = &r.OutputTokens, &r.HasOutputTokens
			case KeyPromptBand:
				s = &r.PromptBand
			case KeyObserver:
				s = &r.Observer
			case KeyRoute:
				s = &r.Route
			case KeySource:
				s = &r.Source
			case KeyStreamed:
				b, has = &r.Streamed, &r.StreamedKnown
			case KeyFailedOver:
				b, has = &r.FailedOver, &r.FailedOverKnown
			default:
				in.key(k, v)
				continue
			}
			switch {
			case f != nil:
				// What Write puts, a positive finite double, with one type
				// assertion (Value.Double is 0 for any other type); anything
				// else through readTime, with the same result.
				if x := v.Double(); x > 0 && x <= math.MaxFloat64 {
					*f, *has = x, true
				} else if !readTime(v, f, has) {
					in.fail(InvalidValue)
				}
			case n != nil:
				// A positive int up to 2^53, what Write puts (float64 holds
				// it exactly, so readCount's result is the same).
				if x := v.Int(); x > 0 && x <= 1<<53 {
					*n, *has = x, true
				} else if !readCount(v, n, has) {
					in.fail(InvalidValue)
				}
			case s != nil:
				*s = strValue(v)
			case v.Type() == pcommon.ValueTypeBool:
				*b, *has = v.Bool(), true
			default:
				in.fail(InvalidValue) // a flag that is no bool ("false")
			}
		} else if len(k) == len(KeyProvider) {
			// The target keys, compared here with the constants (word
			// compares, no call).
			switch k {
			case KeyProvider:
				r.Provider = strValue(v)
			case KeyModel:
				r.Model = strValue(v)
			}
		}
	}
	return in.state()
}

// state is what the keys read say: a nested marker, no record, an unusable
// record (and why) or a record.
func (in *inspector) state() (State, Invalid) {
	switch {
	case in.nested:
		return StateNested, Valid
	case !in.hasOutcome:
		return StateNone, Valid
	case in.bad != Valid:
		return StateInvalid, in.bad
	}
	return StateStamped, Valid
}

// Carries says whether attrs hold ttft.outcome or ttft.nested_in, the keys
// without which Inspect finds neither a record nor a nested marker. It
// tests each key's length and compares bytes only at those two lengths,
// so a span of ordinary attributes costs a pass over their headers and
// none of their text.
//
// Map.Range with a literal compiles to a tighter loop than range over
// Map.All (no range-function state): ~19 instructions a key against ~23.
func Carries(attrs pcommon.Map) bool {
	found := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		found = (len(k) == len(KeyOutcome) && k == KeyOutcome) || (len(k) == len(KeyNestedIn) && k == KeyNestedIn)
		return !found
	})
	return found
}

// ttftPrefix starts every record key but the target keys.
const ttftPrefix = "ttft."

// The target keys are as long as each other: Inspect tests the length once.
var _ = [1]struct{}{}[len(KeyProvider)-len(KeyModel)]

// inspector is Inspect's state over one attribute map.
type inspector struct {
	r                  *Record
	bad                Invalid
	hasOutcome, nested bool
}

func (in *inspector) fail(why Invalid) {
	if in.bad == Valid {
		in.bad = why
	}
}

// key reads a ttft.* attribute Inspect's loop does not: the outcome, the
// clock, the attempts, the nested marker (one each a record, or none), and
// any other key under ttft., which is no record key and is ignored.
func (in *inspector) key(k string, v pcommon.Value) {
	r := in.r
	switch k {
	case KeyNestedIn:
		in.nested = true
	case KeyOutcome:
		in.hasOutcome = true
		if v.Type() != pcommon.ValueTypeStr || !ValidOutcome(v.Str()) {
			in.fail(InvalidOutcome)
			return
		}
		r.Outcome = v.Str()
	case KeyAttempts:
		var attempts int64
		var has bool
		if !readCount(v, &attempts, &has) {
			in.fail(InvalidValue)
		}
		if has {
			r.Attempts = attempts
		}
	case KeyMeasuredAt:
		r.MeasuredAt = strValue(v)
		switch r.MeasuredAt {
		case "", MeasuredAtFirstContent, MeasuredAtFirstChunk:
		default:
			in.fail(InvalidMeasuredAt)
		}
	}
}

// readTime reads a time in seconds: a double or an int, finite and ≥ 0.
// A positive finite double, what Write puts, is taken with one type
// assertion (Value.Double is 0 for any other type); anything else goes
// through Number's type switch, with the same result.
func readTime(v pcommon.Value, dst *float64, has *bool) bool {
	if f := v.Double(); f > 0 && f <= math.MaxFloat64 {
		*dst, *has = f, true
		return true
	}
	f, good := Number(v)
	if !good || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	*dst, *has = f, true
	return true
}

// readCount reads a count: an int or a double, ≥ 0 and at most
// MaxInt64/2 (NaN is none of these), kept as int64(float64(x)). A positive
// int up to 2^53, what Write puts, is taken with one type assertion
// (float64 holds it exactly, so the result is the same); anything else goes
// through Number.
func readCount(v pcommon.Value, dst *int64, has *bool) bool {
	if i := v.Int(); i > 0 && i <= 1<<53 {
		*dst, *has = i, true
		return true
	}
	f, good := Number(v)
	if !good || !(f >= 0 && f <= math.MaxInt64/2) {
		return false
	}
	*dst, *has = int64(f), true
	return true
}

// strValue is a string attribute's value, "" for any other type (what
// Value.Str returns for them, without a Type switch).
func strValue(v pcommon.Value) string { return v.Str() }

// Number reads a numeric attribute value: a double or an int. The
// derivation reads numeric text on top of it.
func Number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}

func putDouble(attrs pcommon.Map, key string, v float64, has bool) {
	if has {
		attrs.PutDouble(key, v)
	}
}

func putInt(attrs pcommon.Map, key string, v int64, has bool) {
	if has {
		attrs.PutInt(key, v)
	}
}

func putStr(attrs pcommon.Map, key, v string) {
	if v != "" {
		attrs.PutStr(key, v)
	}
}
