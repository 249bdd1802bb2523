// Package record defines the request record of DESIGN §5: one per streamed
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

	// Additions beyond DESIGN §5 (added, never renamed).
	KeyPromptTokens = "ttft.prompt_tokens"
	KeyCachedTokens = "ttft.cached_tokens"
	KeyOutputTokens = "ttft.output_tokens"
	KeyStreamed     = "ttft.streamed"
	KeySource       = "ttft.source"
	// KeyNestedIn marks a span whose evidence was folded into an enclosing
	// span's record (value: that span's id), so nothing counts it twice.
	KeyNestedIn = "ttft.nested_in"

	// Target keys, normalised from the producer's own attribute names.
	KeyProvider = "gen_ai.provider.name"
	KeyModel    = "gen_ai.request.model"
)

// Outcomes (DESIGN §1): exactly one per request.
const (
	OutcomeComplete          = "complete"
	OutcomeError             = "error"
	OutcomeClosed            = "closed"
	OutcomeTimeoutFirstToken = "timeout_first_token"
	OutcomeTimeoutIdle       = "timeout_idle"
	OutcomeTimeoutDeadline   = "timeout_deadline"
)

// Outcomes lists every valid outcome.
var Outcomes = []string{
	OutcomeComplete, OutcomeError, OutcomeClosed,
	OutcomeTimeoutFirstToken, OutcomeTimeoutIdle, OutcomeTimeoutDeadline,
}

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
func (r *Record) Write(attrs pcommon.Map) {
	attrs.EnsureCapacity(attrs.Len() + 14)
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
	putStr(attrs, KeyOutcome, r.Outcome)
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
	if r.Provider != "" {
		if _, ok := attrs.Get(KeyProvider); !ok {
			attrs.PutStr(KeyProvider, r.Provider)
		}
	}
	if r.Model != "" {
		if _, ok := attrs.Get(KeyModel); !ok {
			attrs.PutStr(KeyModel, r.Model)
		}
	}
}

// Stamped reports whether attrs already carry a request record.
func Stamped(attrs pcommon.Map) bool {
	_, ok := attrs.Get(KeyOutcome)
	return ok
}

// Nested reports whether attrs mark a span folded into another span's record.
func Nested(attrs pcommon.Map) bool {
	_, ok := attrs.Get(KeyNestedIn)
	return ok
}

// Read parses a stamped record back from attrs. ok is false when attrs carry
// no record or its values are unusable (wrong types, non-finite or negative
// times, unknown outcome); such a record must be skipped, not guessed.
func Read(attrs pcommon.Map) (r Record, ok bool) {
	out, found := attrs.Get(KeyOutcome)
	if !found || out.Type() != pcommon.ValueTypeStr || !ValidOutcome(out.Str()) {
		return r, false
	}
	r.Outcome = out.Str()
	valid := true
	readTime := func(key string, dst *float64, has *bool) {
		v, found := attrs.Get(key)
		if !found {
			return
		}
		f, good := number(v)
		if !good || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			valid = false
			return
		}
		*dst, *has = f, true
	}
	readInt := func(key string, dst *int64, has *bool) {
		v, found := attrs.Get(key)
		if !found {
			return
		}
		f, good := number(v)
		if !good || f < 0 || f > math.MaxInt64/2 {
			valid = false
			return
		}
		*dst, *has = int64(f), true
	}
	readTime(KeyTimeToFirstContent, &r.TimeToFirstContent, &r.HasTimeToFirstContent)
	readTime(KeyTimeToFirstChunk, &r.TimeToFirstChunk, &r.HasTimeToFirstChunk)
	readTime(KeyTimeToHeaders, &r.TimeToHeaders, &r.HasTimeToHeaders)
	readTime(KeyMaxChunkGap, &r.MaxChunkGap, &r.HasMaxChunkGap)
	readTime(KeyDuration, &r.Duration, &r.HasDuration)
	readInt(KeyContentChunks, &r.ContentChunks, &r.HasContentChunks)
	readInt(KeyPromptTokens, &r.PromptTokens, &r.HasPromptTokens)
	readInt(KeyCachedTokens, &r.CachedTokens, &r.HasCachedTokens)
	readInt(KeyOutputTokens, &r.OutputTokens, &r.HasOutputTokens)
	var attempts int64
	var hasAttempts bool
	readInt(KeyAttempts, &attempts, &hasAttempts)
	r.Attempts = 1
	if hasAttempts && attempts >= 1 {
		r.Attempts = attempts
	}
	if v, found := attrs.Get(KeyStreamed); found && v.Type() == pcommon.ValueTypeBool {
		r.Streamed, r.StreamedKnown = v.Bool(), true
	}
	r.PromptBand = str(attrs, KeyPromptBand)
	r.MeasuredAt = str(attrs, KeyMeasuredAt)
	switch r.MeasuredAt {
	case "", MeasuredAtFirstContent, MeasuredAtFirstChunk:
	default:
		valid = false
	}
	r.Observer = str(attrs, KeyObserver)
	r.Route = str(attrs, KeyRoute)
	r.Source = str(attrs, KeySource)
	r.Provider = str(attrs, KeyProvider)
	r.Model = str(attrs, KeyModel)
	return r, valid
}

func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}

func str(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
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
