package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Reasons a row is skipped; the values label the rows_skipped counter.
const (
	reasonColumnCount   = "column_count"    // CSV row with more or fewer fields than its header
	reasonMalformedCSV  = "malformed_csv"   // CSV row that does not parse (bad quoting)
	reasonMissingHeader = "missing_header"  // CSV file whose first line does not name the ttft column
	reasonHeaderTooLong = "header_too_long" // CSV file whose header line is over maxHeaderBytes
	reasonMalformedJSON = "malformed_json"  // truncated or invalid JSON line
	reasonNotObject     = "not_an_object"   // JSON value that is not an object
	reasonBadTTFT       = "bad_ttft"        // TTFT not a finite number
	reasonAbsurdTTFT    = "absurd_ttft"     // TTFT above derive::max_ttft_seconds
	reasonNegative      = "negative_value"  // negative TTFT, duration or token count
	reasonBadNumber     = "bad_number"      // other numeric field not a number
	reasonBadTime       = "bad_timestamp"   // start/first-token/end time unparsable
	reasonUnknownStatus = "unknown_status"  // status value not in status_values
	reasonMissingStatus = "missing_status"  // status column mapped but empty
	reasonNotFinished   = "not_finished"    // status in status_values.skip (e.g. processing)
)

var errNotNumber = errors.New("not a number")

// mapper turns parsed rows into request records.
type mapper struct {
	spec    *spec
	bands   *band.Bands
	maxTTFT float64 // seconds
	source  string
}

// mapped is one row's request record and its request time.
type mapped struct {
	rec     record.Record
	at      time.Time
	hasTime bool
}

// mapRow maps one parsed row. A non-empty reason means the row is skipped.
func (m *mapper) mapRow(row map[string]any) (out mapped, reason string) {
	s := m.spec
	r := &out.rec
	r.Observer = record.ObserverGateway
	r.MeasuredAt = s.measuredAt
	r.Model = str(s.model, row)
	r.Provider = str(s.provider, row)
	r.Route = str(s.route, row)

	// Outcome from the status word; "timeout" is resolved once TTFT is known.
	outcome := record.OutcomeComplete
	if s.status.set() {
		v, _, ok := s.status.get(row)
		word := ""
		if ok {
			word = strings.ToLower(strings.TrimSpace(scalarString(v)))
		}
		if word == "" {
			return out, reasonMissingStatus
		}
		o, known := s.statuses[word]
		switch {
		case !known:
			return out, reasonUnknownStatus
		case o == statusSkip:
			return out, reasonNotFinished
		}
		outcome = o
	}
	if outcome == record.OutcomeError {
		if k := timeoutKind(str(s.errorType, row)); k != "" {
			outcome = k
		}
	}

	var start, first, end time.Time
	var hasStart, hasFirst, hasEnd bool
	var reason2 string
	if start, hasStart, reason2 = m.time(s.start, row); reason2 != "" {
		return out, reason2
	}
	if first, hasFirst, reason2 = m.time(s.firstToken, row); reason2 != "" {
		return out, reason2
	}
	if end, hasEnd, reason2 = m.time(s.end, row); reason2 != "" {
		return out, reason2
	}
	out.at, out.hasTime = start, hasStart
	// LiteLLM and others stamp the first-token time with the end time when no
	// chunk ever came; on a failed request that is not a first token.
	if hasFirst && hasEnd && outcome != record.OutcomeComplete && absDuration(first.Sub(end)) <= time.Millisecond {
		hasFirst = false
	}

	// Streaming flag, when the export has one.
	if v, _, ok := s.stream.get(row); ok {
		if b, ok := toBool(v); ok {
			r.Streamed, r.StreamedKnown = b, true
		}
	}

	// Time to first token: a duration field, else first-token − start.
	ttft, hasTTFT := 0.0, false
	ttftName := ""
	if v, name, ok := s.ttft.get(row); ok {
		f, present, err := toFloat(v)
		switch {
		case err != nil || (present && (math.IsNaN(f) || math.IsInf(f, 0))):
			return out, reasonBadTTFT
		case present && f < 0:
			return out, reasonNegative
		case present:
			ttft, hasTTFT, ttftName = f*s.ttftScale, true, name
		}
	}
	if !hasTTFT && hasFirst && hasStart {
		d := first.Sub(start).Seconds()
		if d < 0 {
			return out, reasonNegative
		}
		ttft, hasTTFT, ttftName = d, true, s.firstToken.names[0]
	}
	if hasTTFT && ttft > m.maxTTFT {
		return out, reasonAbsurdTTFT
	}

	// Duration: a duration field, else end − start.
	if v, _, ok := s.duration.get(row); ok {
		f, present, err := toFloat(v)
		switch {
		case err != nil || (present && (math.IsNaN(f) || math.IsInf(f, 0))):
			return out, reasonBadNumber
		case present && f < 0:
			return out, reasonNegative
		case present:
			r.Duration, r.HasDuration = f*s.durationScale, true
		}
	}
	if !r.HasDuration && hasEnd && hasStart {
		d := end.Sub(start).Seconds()
		if d < 0 {
			return out, reasonNegative
		}
		r.Duration, r.HasDuration = d, true
	}

	// A first-content clock only stops on a streamed delta, so such a TTFT
	// says the request streamed (rows without one stay unknown).
	if hasTTFT && !r.StreamedKnown && s.measuredAt == record.MeasuredAtFirstContent {
		r.Streamed, r.StreamedKnown = true, true
	}
	// Non-streamed calls have no TTFT; a "TTFT" equal to the whole duration on
	// a call not known to stream is the duration in disguise (DESIGN §4).
	if hasTTFT && r.StreamedKnown && !r.Streamed {
		hasTTFT = false
	}
	if hasTTFT && !r.StreamedKnown && r.HasDuration && math.Abs(ttft-r.Duration) <= 0.001 {
		hasTTFT = false
	}

	var ok bool
	if r.PromptTokens, r.HasPromptTokens, reason2 = count(s.prompt, row); reason2 != "" {
		return out, reason2
	}
	if r.CachedTokens, r.HasCachedTokens, reason2 = count(s.cached, row); reason2 != "" {
		return out, reason2
	}
	if r.OutputTokens, r.HasOutputTokens, reason2 = count(s.completion, row); reason2 != "" {
		return out, reason2
	}
	r.PromptBand = m.bands.Label(r.PromptTokens, r.HasPromptTokens)

	// Attempts: explicit, else retries + 1 (or the trail's length), plus the
	// fallback index (each fallback is another provider tried first).
	r.Attempts = 1
	var n int64
	if n, ok, reason2 = count(s.attempts, row); reason2 != "" {
		return out, reason2
	} else if ok && n >= 1 {
		r.Attempts = n
	} else {
		if n, ok, reason2 = count(s.retries, row); reason2 != "" {
			return out, reason2
		} else if ok {
			r.Attempts = n + 1
		}
		if v, _, found := s.trail.get(row); found {
			if l := trailLen(v); l > r.Attempts {
				r.Attempts = l
			}
		}
		if n, ok, reason2 = count(s.fallbackIndex, row); reason2 != "" {
			return out, reason2
		} else if ok {
			r.Attempts += n
		}
	}

	if outcome == statusTimeout {
		outcome = record.OutcomeTimeoutFirstToken
		if hasTTFT {
			outcome = record.OutcomeTimeoutIdle
		}
	}
	// A first-content export that says no first token came cannot also have one.
	if outcome == record.OutcomeTimeoutFirstToken && s.measuredAt == record.MeasuredAtFirstContent {
		hasTTFT = false
	}
	r.Outcome = outcome

	if hasTTFT {
		if s.measuredAt == record.MeasuredAtFirstContent {
			r.TimeToFirstContent, r.HasTimeToFirstContent = ttft, true
		} else {
			r.TimeToFirstChunk, r.HasTimeToFirstChunk = ttft, true
		}
		r.Source = m.source + ttftName
	}
	return out, ""
}

func (m *mapper) time(f field, row map[string]any) (time.Time, bool, string) {
	v, _, ok := f.get(row)
	if !ok {
		return time.Time{}, false, ""
	}
	if s, isStr := v.(string); isStr && strings.TrimSpace(s) == "" {
		return time.Time{}, false, ""
	}
	t, err := m.spec.startTime.parse(v)
	if err != nil {
		return time.Time{}, false, reasonBadTime
	}
	return t, true, ""
}

// count reads a non-negative integer; empty means unknown.
func count(f field, row map[string]any) (int64, bool, string) {
	v, _, ok := f.get(row)
	if !ok {
		return 0, false, ""
	}
	x, present, err := toFloat(v)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return 0, false, reasonBadNumber
	case !present:
		return 0, false, ""
	case x < 0:
		return 0, false, reasonNegative
	case x > 1e15:
		return 0, false, reasonBadNumber
	}
	return int64(x), true, ""
}

// toFloat reads a number from a CSV string or a JSON value. present is false
// for an empty cell or null.
func toFloat(v any) (f float64, present bool, err error) {
	switch t := v.(type) {
	case nil:
		return 0, false, nil
	case float64:
		return t, true, nil
	case float32:
		return float64(t), true, nil
	case int:
		return float64(t), true, nil
	case int64:
		return float64(t), true, nil
	case json.Number:
		f, err = t.Float64()
		return f, err == nil, err
	case string:
		s := strings.TrimSpace(t)
		if s == "" || strings.EqualFold(s, "null") || s == `\N` {
			return 0, false, nil
		}
		f, err = strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false, errNotNumber
		}
		return f, true, nil
	}
	return 0, false, errNotNumber
}

func toBool(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(t))
		return b, err == nil
	case float64:
		return t != 0, true
	}
	return false, false
}

func trailLen(v any) int64 {
	switch t := v.(type) {
	case []any:
		return int64(len(t))
	case string: // the log store keeps the trail as a JSON string
		var a []any
		if json.Unmarshal([]byte(t), &a) == nil {
			return int64(len(a))
		}
	}
	return 0
}

func str(f field, row map[string]any) string {
	v, _, ok := f.get(row)
	if !ok {
		return ""
	}
	return strings.TrimSpace(scalarString(v))
}

func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case json.Number:
		return t.String()
	}
	return ""
}

// timeoutKind reads an error class/message: a deadline, another timeout
// (first-token or idle, decided later), or not a timeout ("").
func timeoutKind(s string) string {
	if s == "" {
		return ""
	}
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "deadline"):
		return record.OutcomeTimeoutDeadline
	case strings.Contains(l, "timeout") || strings.Contains(l, "timed out") || l == "408" || l == "504":
		return statusTimeout
	}
	return ""
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
