package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// GatewayRow is one gateway request row as a reader found it (the gateway log
// receiver's mapping of a CSV row or JSON line). Each value is the raw value
// of the column or field the format names: a JSON value, or a CSV cell as
// text; nil when the row has none. Deriver.FromGatewayRow applies the rules to it.
type GatewayRow struct {
	// TTFT is a time to first token, in the format's TTFT unit; TTFTName is
	// the key it came from (ttft.source).
	TTFT     any
	TTFTName string
	// FirstToken is an absolute first-token time (the format's time
	// format); TTFT = FirstToken − Start when the row has no TTFT.
	FirstToken     any
	FirstTokenName string
	// Start and End are the request's absolute start and end.
	Start, End any
	// Duration is the request's duration, in the format's duration unit;
	// else End − Start.
	Duration any
	// Stream is the streamed flag: a bool, 1/0, or text.
	Stream any

	PromptTokens, CachedTokens, OutputTokens any

	// Attempts counts attempts including failovers; without it, attempts
	// are Retries + 1 (or the attempt Trail's length, a list or a JSON
	// string of one), plus FallbackIndex (providers tried before this one).
	Attempts, Retries, FallbackIndex, Trail any

	// Outcome is the row's status read through the format's status words:
	// one of the six outcomes, OutcomeTimeout, or "" (the format has no
	// status: a finished request).
	Outcome string
	// ErrorText is the row's error class, code or message.
	ErrorText string
	// ContentSeen: the row says content went out before it ended (a
	// non-empty answer in an error row); a timeout after it is an idle one.
	ContentSeen bool

	// ID is the row's request id; ParentID links a fallback attempt's row
	// to the row of the request it serves (Bifrost's parent_request_id).
	ID, ParentID string

	Provider, Model, Route string
}

// OutcomeTimeout is a status that says the request timed out without
// saying which limit: first-token when no first token was seen, else idle.
const OutcomeTimeout = "timeout"

// Why a row is skipped (the receiver's rows_skipped reasons for values).
const (
	GatewayBadTTFT    = "bad_ttft"       // TTFT not a finite number
	GatewayAbsurdTTFT = "absurd_ttft"    // TTFT above derive::max_ttft_seconds
	GatewayNegative   = "negative_value" // negative TTFT, duration or count
	GatewayBadNumber  = "bad_number"     // another numeric value not a number
	GatewayBadTime    = "bad_timestamp"  // an absolute time that does not parse
)

// A value of a row no real request has, refused by the bounds every input
// obeys (docs/architecture.md §10); the row still becomes a record without
// it (the receiver's values_rejected reasons).
const (
	GatewayDurationAboveMax      = "duration_above_max"       // longer than derive::max_duration_seconds
	GatewayAttemptsAboveMax      = "attempts_above_max"       // more attempts than record.MaxAttempts
	GatewayRetriesAboveMax       = "retries_above_max"        // retries or an attempt trail past record.MaxAttempts
	GatewayFallbackIndexAboveMax = "fallback_index_above_max" // a fallback index past record.MaxAttempts
)

// gatewayRefusals is the set of values refused on one row, one bit each.
type gatewayRefusals uint8

const (
	refusedDuration gatewayRefusals = 1 << iota
	refusedAttempts
	refusedRetries
	refusedFallbackIndex
)

var gatewayRefusalNames = [...]string{
	GatewayDurationAboveMax, GatewayAttemptsAboveMax, GatewayRetriesAboveMax, GatewayFallbackIndexAboveMax,
}

// RefusedValues calls yield with the reason of each value refused on the
// row (GatewayDurationAboveMax, …), in a fixed order.
func (r *GatewayRecord) RefusedValues(yield func(reason string)) {
	for i, name := range gatewayRefusalNames {
		if r.refused&(1<<i) != 0 {
			yield(name)
		}
	}
}

// Why a row's TTFT was not kept (the row still becomes a record).
const (
	GatewayTTFTNotStreamed     = "not_streamed"        // the request did not stream
	GatewayTTFTIsDuration      = "duration_as_ttft"    // equal to the duration on a call not known to stream
	GatewayTTFTAfterEnd        = "after_end"           // longer than the request
	GatewayTTFTStampedAtEnd    = "first_token_at_end"  // first-token time equal to the end time (LiteLLM's fallback)
	GatewayTTFTFirstTokenUnmet = "timeout_first_token" // a first-content export says no first token came
)

// GatewayFormat is what an export's format says about all its rows.
type GatewayFormat struct {
	ttftUnit, durationUnit unit
	times                  TimeFormat
	measuredAt             string
	source                 string
	// sources remembers source+key for the few keys a format's TTFT comes
	// from, so a row's ttft.source is not a new string each time.
	sources  atomic.Pointer[[]sourceName]
	sourceMu sync.Mutex
}

type sourceName struct{ key, full string }

// maxSourceNames bounds the remembered ttft.source values; keys past it
// (a format has a handful) are joined per row.
const maxSourceNames = 16

// sourceOf is "llm_gateway_log/<name>:<key>".
func (f *GatewayFormat) sourceOf(key string) string {
	if l := f.sources.Load(); l != nil {
		for _, s := range *l {
			if s.key == key {
				return s.full
			}
		}
	}
	full := f.source + key
	f.sourceMu.Lock()
	defer f.sourceMu.Unlock()
	var l []sourceName
	if old := f.sources.Load(); old != nil {
		l = *old
	}
	if len(l) < maxSourceNames {
		l = append(slices.Clip(l), sourceName{key: key, full: full})
		f.sources.Store(&l)
	}
	return full
}

// GatewayFormatConfig names a format's units and clock.
type GatewayFormatConfig struct {
	// Name labels ttft.source: "llm_gateway_log/<name>:<key>".
	Name string
	// TTFTUnit and DurationUnit are s, ms, us or ns (empty: ms).
	TTFTUnit, DurationUnit string
	// TimeFormat is how absolute times are written (see ParseTimeFormat).
	TimeFormat string
	// MeasuredAt is where the export's TTFT clock stops: first_content or
	// first_chunk.
	MeasuredAt string
}

// NewGatewayFormat checks c; errors name the field.
func NewGatewayFormat(c GatewayFormatConfig) (*GatewayFormat, error) {
	f := &GatewayFormat{measuredAt: c.MeasuredAt, source: "llm_gateway_log/" + c.Name + ":"}
	var errs []error
	var ok bool
	for _, u := range []struct {
		key, name string
		dst       *unit
	}{{"ttft_unit", c.TTFTUnit, &f.ttftUnit}, {"duration_unit", c.DurationUnit, &f.durationUnit}} {
		name := u.name
		if name == "" {
			name = "ms"
		}
		if *u.dst, ok = unitNames[name]; !ok {
			errs = append(errs, fmt.Errorf("%s: %q is not a unit, use ms, s, us or ns", u.key, u.name))
		}
	}
	var err error
	if f.times, err = ParseTimeFormat(c.TimeFormat); err != nil {
		errs = append(errs, fmt.Errorf("start_time_format: %w", err))
	}
	switch c.MeasuredAt {
	case record.MeasuredAtFirstContent, record.MeasuredAtFirstChunk:
	default:
		errs = append(errs, fmt.Errorf("measured_at: %q is invalid, use first_content (the export stops at the first content or tool-call delta) or first_chunk", c.MeasuredAt))
	}
	return f, errors.Join(errs...)
}

// GatewayRecord is one row after the rules: its record, its request start,
// and how it links to the other rows of the same client request.
type GatewayRecord struct {
	Record   record.Record
	Start    time.Time
	HasStart bool
	// Rejected says why the row's TTFT was not kept ("" when kept or none).
	Rejected string
	// refused: the row's values refused by the bounds (RefusedValues).
	refused gatewayRefusals

	ID, ParentID  string
	FallbackIndex int64
	own           int64 // attempts this row made itself
}

// FromGatewayRow turns one gateway row into a record with the rules every
// input obeys (streaming inference, TTFT choice and measured_at,
// duration-as-TTFT, outcome and timeout kind, attempts and failover, band,
// units, time parsing, bounds).
// A non-empty reason means the row is skipped; out is then meaningless.
func (d *Deriver) FromGatewayRow(f *GatewayFormat, in *GatewayRow, out *GatewayRecord) (reason string) {
	*out = GatewayRecord{ID: in.ID, ParentID: in.ParentID}
	r := &out.Record
	r.Observer = record.ObserverGateway
	r.Provider, r.Model, r.Route = in.Provider, in.Model, in.Route

	outcome, kind := in.Outcome, timeoutNone
	switch outcome {
	case "":
		outcome = record.OutcomeComplete
	case OutcomeTimeout:
		kind = timeoutGeneric
	case record.OutcomeError:
		kind = textTimeout(in.ErrorText)
	}

	start, hasStart, err := f.times.parse(in.Start)
	if err != nil {
		return GatewayBadTime
	}
	first, hasFirst, err := f.times.parse(in.FirstToken)
	if err != nil {
		return GatewayBadTime
	}
	end, hasEnd, err := f.times.parse(in.End)
	if err != nil {
		return GatewayBadTime
	}
	out.Start, out.HasStart = start, hasStart
	// LiteLLM stamps completionStartTime with the end time when it saw no
	// chunk (some streamed endpoints too): that is no first token.
	stampedAtEnd := hasFirst && hasEnd && first.Sub(end).Abs() <= time.Millisecond
	hasFirst = hasFirst && !stampedAtEnd

	stream := triUnknown
	if b, ok := rawBool(in.Stream); ok {
		stream = triFalse
		if b {
			stream = triTrue
		}
	}

	ttft, hasTTFT, reason := gatewayDuration(in.TTFT, f.ttftUnit, GatewayBadTTFT)
	if reason != "" {
		return reason
	}
	src := ""
	if hasTTFT {
		src = in.TTFTName
	}
	if !hasTTFT && hasFirst && hasStart {
		v := first.Sub(start).Seconds()
		if v < 0 {
			return GatewayNegative
		}
		ttft, hasTTFT, src = v, true, in.FirstTokenName
	}
	if hasTTFT && ttft > d.cfg.MaxTTFTSeconds {
		return GatewayAbsurdTTFT
	}
	if !hasTTFT && stampedAtEnd {
		out.Rejected = GatewayTTFTStampedAtEnd
	}

	if r.Duration, r.HasDuration, reason = gatewayDuration(in.Duration, f.durationUnit, GatewayBadNumber); reason != "" {
		return reason
	}
	if !r.HasDuration && hasEnd && hasStart {
		v := end.Sub(start).Seconds()
		if v < 0 {
			return GatewayNegative
		}
		r.Duration, r.HasDuration = v, true
	}
	if r.HasDuration && r.Duration > d.cfg.MaxDurationSeconds {
		// As a log record's duration attribute: unknown, the TTFT kept (it
		// has a bound of its own). A 55-hour request is a broken end time
		// or a clock that jumped, not a request to size a deadline by.
		r.Duration, r.HasDuration = 0, false
		out.refused |= refusedDuration
	}

	firstContent := f.measuredAt == record.MeasuredAtFirstContent
	// A first-content clock only stops on a streamed delta: such a TTFT
	// says the request streamed.
	if hasTTFT && stream == triUnknown && firstContent {
		stream = triTrue
	}
	switch {
	case !hasTTFT:
	case stream == triFalse:
		hasTTFT, out.Rejected = false, GatewayTTFTNotStreamed
	case r.HasDuration:
		switch checkTTFT(ttft, r.Duration, stream == triTrue, false) {
		case ttftAfterEnd:
			hasTTFT, out.Rejected = false, GatewayTTFTAfterEnd
		case ttftIsDuration:
			hasTTFT, out.Rejected = false, GatewayTTFTIsDuration
		}
	}
	if hasTTFT && stream == triUnknown {
		stream = triTrue // TTFT evidence is streaming evidence
	}
	if stream != triUnknown {
		r.Streamed, r.StreamedKnown = stream == triTrue, true
	}

	if reason = gatewayCount(in.PromptTokens, &r.PromptTokens, &r.HasPromptTokens); reason != "" {
		return reason
	}
	if reason = gatewayCount(in.CachedTokens, &r.CachedTokens, &r.HasCachedTokens); reason != "" {
		return reason
	}
	if reason = gatewayCount(in.OutputTokens, &r.OutputTokens, &r.HasOutputTokens); reason != "" {
		return reason
	}
	if reason = gatewayAttempts(in, out); reason != "" {
		return reason
	}

	// Content was seen where a first-content clock stopped, or where the
	// row kept a non-empty answer; a first chunk may have been role-only,
	// as on spans (contentSeen).
	if o, ok := timeoutOutcome(kind, (hasTTFT && firstContent) || in.ContentSeen); ok {
		outcome = o
	}
	// A first-content export that says no first token came cannot also have one.
	if hasTTFT && outcome == record.OutcomeTimeoutFirstToken && firstContent {
		hasTTFT, out.Rejected = false, GatewayTTFTFirstTokenUnmet
	}
	r.Outcome = outcome
	if hasTTFT {
		if firstContent {
			r.TimeToFirstContent, r.HasTimeToFirstContent = ttft, true
		} else {
			r.TimeToFirstChunk, r.HasTimeToFirstChunk = ttft, true
		}
		// Only a record with a TTFT says where its clock stopped.
		r.MeasuredAt, r.Source = f.measuredAt, f.sourceOf(src)
	}
	d.finishRecord(r)
	return ""
}

// gatewayDuration reads a duration in unit u as seconds; no value leaves
// it unknown, a value that is no finite number is skipped as bad.
func gatewayDuration(v any, u unit, bad string) (float64, bool, string) {
	if v == nil {
		return 0, false, ""
	}
	f, present, ok := rawNumber(v)
	switch {
	case !ok || (present && (math.IsNaN(f) || math.IsInf(f, 0))):
		return 0, false, bad
	case !present:
		return 0, false, ""
	case f < 0:
		return 0, false, GatewayNegative
	}
	return u.seconds(f), true, ""
}

// gatewayAttempts: an explicit attempt count, else retries + 1 (or the
// trail's length, whichever is more) plus the fallback index, each earlier
// provider being at least one more attempt.
func gatewayAttempts(in *GatewayRow, out *GatewayRecord) string {
	var n int64
	var has bool
	if reason := gatewayCount(in.Attempts, &n, &has); reason != "" {
		return reason
	}
	if has && n > record.MaxAttempts {
		// Refused as the span path refuses it; the retries and the
		// fallback index below may still count the attempts.
		out.refused |= refusedAttempts
	} else if has && n >= 1 {
		out.own, out.Record.Attempts = n, n
		return ""
	}
	out.own = 1
	if reason := gatewayCount(in.Retries, &n, &has); reason != "" {
		return reason
	} else if has && n >= record.MaxAttempts {
		out.refused |= refusedRetries
	} else if has {
		out.own = n + 1
	}
	if l := trailLen(in.Trail); l > record.MaxAttempts {
		out.refused |= refusedRetries
	} else if l > out.own {
		out.own = l
	}
	if reason := gatewayCount(in.FallbackIndex, &n, &has); reason != "" {
		return reason
	} else if has && n >= record.MaxAttempts {
		out.refused |= refusedFallbackIndex
	} else if has {
		// A fallback index says whether another target was tried; retries
		// alone are no failover.
		out.FallbackIndex = n
		out.Record.FailedOver, out.Record.FailedOverKnown = n > 0, true
	}
	out.Record.Attempts = out.own + out.FallbackIndex
	return ""
}

// gatewayCount reads a non-negative count; no value leaves it unknown.
func gatewayCount(v any, dst *int64, has *bool) string {
	*dst, *has = 0, false
	if v == nil {
		return ""
	}
	x, present, ok := rawNumber(v)
	switch {
	case !ok || math.IsNaN(x) || math.IsInf(x, 0):
		return GatewayBadNumber
	case !present:
		return ""
	case x < 0:
		return GatewayNegative
	case x >= maxCount:
		return GatewayBadNumber
	}
	*dst, *has = int64(x), true
	return ""
}

// maxTrailText bounds an attempt trail read from a JSON string.
const maxTrailText = 1 << 16

// trailLen counts an attempt trail: a list, or a JSON string of one (the
// log store keeps it as text). Bifrost numbers attempts from 0: the
// length, not the last number, is the count.
func trailLen(v any) int64 {
	switch t := v.(type) {
	case []any:
		return int64(len(t))
	case string:
		if len(t) > maxTrailText {
			return 0
		}
		var a []json.RawMessage
		if json.Unmarshal([]byte(t), &a) == nil {
			return int64(len(a))
		}
	}
	return 0
}

// AwaitsFallback reports a row that a fallback row may follow: the failed
// first attempt chain of a request (an id, no parent, fallback index 0).
// Bifrost logs a fallback as a row of its own whose ParentID is this
// row's ID; only the pair says what the client got.
func (r *GatewayRecord) AwaitsFallback() bool {
	return r.ID != "" && r.ParentID == "" && r.FallbackIndex == 0 && failedOutcome(r.Record.Outcome)
}

// Final reports a row after which the request tries no further provider:
// it did not fail.
func (r *GatewayRecord) Final() bool { return !failedOutcome(r.Record.Outcome) }

// Linked returns the id of the client request a row belongs to when other
// rows of that request may still come: a fallback row's parent, or a row
// that AwaitsFallback. ok is false for a row that is a request on its own.
func (r *GatewayRecord) Linked() (request string, ok bool) {
	switch {
	case r.ParentID != "":
		return r.ParentID, true
	case r.AwaitsFallback():
		return r.ID, true
	}
	return "", false
}

// GatewayRowsComplete reports whether rows hold a whole request that failed over:
// its first attempt's row, a fallback after which no other is tried, and
// the row of every fallback before it (the rows may come in any order: a
// later fallback's row read first must not release the request without
// the earlier one's).
func GatewayRowsComplete(rows []*GatewayRecord) bool {
	if len(rows) < 2 {
		return false
	}
	primary, last := false, rows[0]
	var seen [record.MaxAttempts]bool
	for _, r := range rows {
		primary = primary || r.ParentID == ""
		if laterRow(r, last) {
			last = r
		}
		if r.FallbackIndex >= 0 && r.FallbackIndex < record.MaxAttempts {
			seen[r.FallbackIndex] = true
		}
	}
	if !primary || !last.Final() {
		return false
	}
	for i := int64(0); i < last.FallbackIndex; i++ {
		if !seen[i] {
			return false
		}
	}
	return true
}

// laterRow reports whether r is a later attempt of its request than
// last: a higher fallback index, or on the same one (a mapping without
// fallback_index gives every row 0) the later start. GatewayRowsComplete
// and FoldFallbacks take the same row as the one that served.
func laterRow(r, last *GatewayRecord) bool {
	if r.FallbackIndex != last.FallbackIndex {
		return r.FallbackIndex > last.FallbackIndex
	}
	return r.HasStart && last.HasStart && r.Start.After(last.Start)
}

// FoldFallbacks folds the rows of one client request — its first attempt
// chain, when seen, and its fallback rows — into one record in out (which
// must not be one of rows). The attempt that served decides the outcome,
// TTFT, tokens and target; attempts add up, and each earlier provider
// without a row counts one; the request starts with the first row.
func (d *Deriver) FoldFallbacks(rows []*GatewayRecord, out *GatewayRecord) {
	if len(rows) == 0 {
		*out = GatewayRecord{}
		return
	}
	var primary *GatewayRecord
	last := rows[0]
	seen := map[int64]bool{}
	var own int64
	for _, r := range rows {
		if r.ParentID == "" && primary == nil {
			primary = r
		}
		if laterRow(r, last) {
			last = r
		}
		seen[r.FallbackIndex] = true
		own += r.own
	}
	first := primary
	if first == nil {
		first = rows[0]
		for _, r := range rows {
			if r.HasStart && (!first.HasStart || r.Start.Before(first.Start)) {
				first = r
			}
		}
	}
	*out = *last
	out.own = own
	out.ID, out.ParentID, out.FallbackIndex = first.ID, "", 0
	if primary != nil {
		out.ID = primary.ID
	} else if last.ParentID != "" {
		out.ID = last.ParentID
	}
	out.Start, out.HasStart = first.Start, first.HasStart
	rec := &out.Record
	if missing := last.FallbackIndex + 1 - int64(len(seen)); missing > 0 {
		own += missing
	}
	rec.Attempts = own
	// Another target was tried when a fallback row is among them.
	rec.FailedOver, rec.FailedOverKnown = last.ParentID != "" || last.FallbackIndex > 0, true
	if first.Record.Route != "" {
		rec.Route = first.Record.Route // the route the client was sent by
	}
	if rec.Provider == "" && rec.Model == "" {
		rec.Provider, rec.Model = first.Record.Provider, first.Record.Model
	}
	if !rec.HasPromptTokens && first.Record.HasPromptTokens {
		rec.PromptTokens, rec.HasPromptTokens = first.Record.PromptTokens, true
	}
	if !rec.HasCachedTokens && first.Record.HasCachedTokens {
		rec.CachedTokens, rec.HasCachedTokens = first.Record.CachedTokens, true
	}
	for _, r := range rows {
		if r.Record.StreamedKnown && r.Record.Streamed {
			rec.Streamed, rec.StreamedKnown = true, true
		}
	}

	// The client's clock: from the first row's start to the latest end.
	rec.Duration, rec.HasDuration = foldDuration(rows, out.Start, out.HasStart)
	// Each row's refusals and rejected TTFT were its own, counted with it;
	// the fold's are of the client's clock: rows days apart make no
	// request to size a deadline by, and the connector refuses a record
	// past the bound.
	out.refused, out.Rejected = 0, ""
	if rec.HasDuration && rec.Duration > d.cfg.MaxDurationSeconds {
		rec.Duration, rec.HasDuration = 0, false
		out.refused |= refusedDuration
	}
	if _, has := rec.TTFT(); has {
		shift, ok := 0.0, last == first
		if !ok && last.HasStart && out.HasStart && !last.Start.Before(out.Start) {
			shift, ok = last.Start.Sub(out.Start).Seconds(), true
		}
		if ok && rec.HasTimeToFirstContent {
			rec.TimeToFirstContent += shift
			ok = rec.TimeToFirstContent <= d.cfg.MaxTTFTSeconds
		}
		if ok && rec.HasTimeToFirstChunk {
			rec.TimeToFirstChunk += shift
			ok = rec.TimeToFirstChunk <= d.cfg.MaxTTFTSeconds
		}
		if ok && rec.HasDuration {
			// On the client's clock the first token still comes before the
			// end (the duration may be a sum of attempts, without the gaps).
			end := rec.Duration + time.Millisecond.Seconds()
			ok = (!rec.HasTimeToFirstContent || rec.TimeToFirstContent <= end) &&
				(!rec.HasTimeToFirstChunk || rec.TimeToFirstChunk <= end)
		}
		if !ok {
			// The served attempt's TTFT cannot be put on the client's clock.
			rec.TimeToFirstContent, rec.HasTimeToFirstContent = 0, false
			rec.TimeToFirstChunk, rec.HasTimeToFirstChunk = 0, false
			rec.MeasuredAt, rec.Source = "", ""
			out.Rejected = GatewayTTFTAfterEnd
		}
	}
	d.finishRecord(rec)
}

// foldDuration is the client's duration over the rows of one request, when
// every row has a duration: the latest end after the start when every row
// has a start; else the longer of the attempts' durations summed and the
// latest end of the rows with a start (a row without one hides the gaps
// between attempts, and the sum alone put a later attempt's first token
// after the request's end).
func foldDuration(rows []*GatewayRecord, start time.Time, hasStart bool) (float64, bool) {
	var latest time.Time
	timed, sum := hasStart, 0.0
	for _, r := range rows {
		if !r.Record.HasDuration {
			return 0, false
		}
		sum += r.Record.Duration
		if !r.HasStart {
			timed = false
			continue
		}
		if end := r.Start.Add(time.Duration(r.Record.Duration * float64(time.Second))); end.After(latest) {
			latest = end
		}
	}
	if !hasStart || latest.Before(start) {
		return sum, true
	}
	if timed {
		return latest.Sub(start).Seconds(), true
	}
	return max(sum, latest.Sub(start).Seconds()), true
}

// gatewayRecordJSON is a GatewayRecord as the gateway receiver saves a row
// it holds for its request's fallback rows across a graceful restart.
type gatewayRecordJSON struct {
	Record        record.Record `json:"record"`
	Start         time.Time     `json:"start"`
	HasStart      bool          `json:"has_start"`
	Rejected      string        `json:"rejected,omitempty"`
	Refused       uint8         `json:"refused,omitempty"`
	ID            string        `json:"id,omitempty"`
	ParentID      string        `json:"parent_id,omitempty"`
	FallbackIndex int64         `json:"fallback_index,omitempty"`
	Own           int64         `json:"own"`
}

// MarshalJSON saves every field, the unexported ones too.
func (r GatewayRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal(gatewayRecordJSON{Record: r.Record, Start: r.Start, HasStart: r.HasStart, Rejected: r.Rejected,
		Refused: uint8(r.refused), ID: r.ID, ParentID: r.ParentID, FallbackIndex: r.FallbackIndex, Own: r.own})
}

// UnmarshalJSON reads what MarshalJSON saved. The record it holds is
// stamped on a log record, which the connector validates as it validates
// every record read back (docs/architecture.md §10); the attempt counts the
// fold adds up are bounded here.
func (r *GatewayRecord) UnmarshalJSON(b []byte) error {
	var j gatewayRecordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Own < 0 || j.Own > record.MaxAttempts || j.FallbackIndex < 0 || j.FallbackIndex > record.MaxAttempts {
		return errors.New("saved gateway record: attempts out of bounds")
	}
	*r = GatewayRecord{Record: j.Record, Start: j.Start, HasStart: j.HasStart, Rejected: j.Rejected,
		refused: gatewayRefusals(j.Refused), ID: j.ID, ParentID: j.ParentID, FallbackIndex: j.FallbackIndex, own: j.Own}
	return nil
}
