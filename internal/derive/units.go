package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// unit is the unit a producer or an export writes a duration in. One table
// serves span attributes, content_exact_producers and gateway rows.
type unit uint8

const (
	unitSeconds unit = iota
	unitMillis
	unitNanos
	unitMicros
	// unitNanosOrMillis: nanoseconds, but a value too small to be
	// nanoseconds of a network round trip (< 10 µs) was written in
	// milliseconds by an older release, and one below 1, neither
	// nanoseconds nor milliseconds of a TTFT, in seconds (the deprecated
	// semconv key's unit).
	unitNanosOrMillis
)

// unitNames are the unit spellings of exports and producers.
var unitNames = map[string]unit{"s": unitSeconds, "ms": unitMillis, "us": unitMicros, "ns": unitNanos}

// parseUnit reads a producer row's unit name; empty means seconds.
func parseUnit(s string) (unit, bool) {
	switch s {
	case "":
		return unitSeconds, true
	case "ns_or_ms":
		return unitNanosOrMillis, true
	}
	u, ok := unitNames[s]
	return u, ok
}

func (u unit) seconds(v float64) float64 {
	switch u {
	case unitMillis:
		return v / 1e3
	case unitMicros:
		return v / 1e6
	case unitNanos:
		return v / 1e9
	case unitNanosOrMillis:
		switch {
		case v > 0 && v < 1:
			return v
		case v > 0 && v < 1e4:
			return v / 1e3
		}
		return v / 1e9
	}
	return v
}

// maxNumberText bounds the numeric text that is parsed at all: no real
// number is longer, and a huge string is not scanned per value.
const maxNumberText = 64

// numberText reads a number written as text. Empty text, "null", SQL's \N
// and the placeholders exports write for a missing number ("-", "NaN",
// "None", "N/A": pandas, Python's str of None, spreadsheets) are no value
// (present false), so the row keeps its outcome and duration; other text
// that is not a number is refused (ok false).
func numberText(s string) (f float64, present, ok bool) {
	s = strings.TrimSpace(s)
	if noNumber(s) {
		return 0, false, true
	}
	if len(s) > maxNumberText {
		return 0, true, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, true, false
	}
	return f, true, true
}

// noNumber reports whether s is how an export writes a missing number.
func noNumber(s string) bool {
	switch len(s) {
	case 0:
		return true
	case 1:
		return s == "-"
	case 2:
		return s == `\N`
	case 3:
		return strings.EqualFold(s, "nan") || strings.EqualFold(s, "n/a")
	case 4:
		return strings.EqualFold(s, "null") || strings.EqualFold(s, "none")
	}
	return false
}

// number reads a numeric attribute. Numeric strings are accepted (some
// exporters stringify); anything else is not a number.
func number(v pcommon.Value) (float64, bool) {
	if v.Type() == pcommon.ValueTypeStr {
		f, present, ok := numberText(v.Str())
		return f, present && ok
	}
	return record.Number(v)
}

// rawNumber reads a number from a parsed row: a JSON value (float64,
// json.Number, nil) or a CSV cell (text). present is false for no value.
func rawNumber(v any) (f float64, present, ok bool) {
	switch t := v.(type) {
	case nil:
		return 0, false, true
	case float64:
		return t, true, true
	case float32:
		return float64(t), true, true
	case int:
		return float64(t), true, true
	case int64:
		return float64(t), true, true
	case json.Number:
		return numberText(string(t))
	case string:
		return numberText(t)
	}
	return 0, true, false
}

// maxCount is above any real token or attempt count; larger values are
// refused rather than trusted.
const maxCount = 1 << 40

// count reads a token count; ok is false for non-numbers, NaN, negatives
// and values no real request reaches.
func count(v pcommon.Value) (int64, bool) {
	// A positive int, what producers write, with one type assertion
	// (Value.Int is 0 for any other type).
	if n := v.Int(); n > 0 && n < maxCount {
		return n, true
	}
	if v.Type() == pcommon.ValueTypeInt {
		n := v.Int()
		return n, n >= 0 && n < maxCount
	}
	f, ok := number(v)
	if !ok || math.IsNaN(f) || f < 0 || f >= maxCount {
		return 0, false
	}
	return int64(f), true
}

// boolish reads a streaming flag written as bool, "true"/"false" or 0/1.
func boolish(v pcommon.Value) (val, ok bool) {
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return v.Bool(), true
	case pcommon.ValueTypeStr:
		s := v.Str()
		if strings.EqualFold(s, "true") {
			return true, true
		}
		if strings.EqualFold(s, "false") {
			return false, true
		}
	case pcommon.ValueTypeInt:
		switch v.Int() {
		case 0:
			return false, true
		case 1:
			return true, true
		}
	}
	return false, false
}

// rawBool reads a flag from a parsed row: a JSON bool or number (SQLite
// writes 1/0), or text strconv.ParseBool accepts.
func rawBool(v any) (val, ok bool) {
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

// Layouts of RFC 3339-like text that producers and exports write besides
// RFC 3339 itself: no zone (taken as UTC), and a space for the T.
const (
	layoutNoZone      = "2006-01-02T15:04:05.999999999"
	layoutSpace       = "2006-01-02 15:04:05.999999999Z07:00"
	layoutSpaceNoZone = "2006-01-02 15:04:05.999999999"
)

// rfc3339Text parses RFC 3339 text, else the same without a zone (UTC);
// with space also the forms with a space for the T.
func rfc3339Text(s string, space bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if space {
		if t, err := time.Parse(layoutSpace, s); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse(layoutNoZone, s); err == nil {
		return t, true
	}
	if space {
		if t, err := time.Parse(layoutSpaceNoZone, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// absTime reads an absolute timestamp: RFC 3339 text (optionally JSON
// quoted) or a Unix epoch number in s, ms, µs or ns judged by magnitude.
func absTime(v pcommon.Value) (uint64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := strings.Trim(strings.TrimSpace(v.Str()), `"`)
		if s == "" || len(s) > 64 {
			return 0, false
		}
		t, ok := rfc3339Text(s, false)
		if !ok || t.UnixNano() <= 0 {
			return 0, false
		}
		return uint64(t.UnixNano()), true
	case pcommon.ValueTypeInt, pcommon.ValueTypeDouble:
		f, _ := number(v)
		if math.IsNaN(f) || f <= 0 || math.IsInf(f, 0) {
			return 0, false
		}
		switch {
		case f < 1e11: // seconds
			f *= 1e9
		case f < 1e14: // milliseconds
			f *= 1e6
		case f < 1e17: // microseconds
			f *= 1e3
		}
		if f >= math.MaxUint64/2 {
			return 0, false
		}
		return uint64(f), true
	}
	return 0, false
}

// TimeFormat is how an export writes absolute times: RFC 3339 text (also
// with a space for the T, or no zone = UTC), a Unix epoch in a declared
// unit, or a Go layout. Unlike span attributes, an export declares its
// format, so epochs are never judged by magnitude.
type TimeFormat struct {
	layout string  // Go layout; empty for numeric epochs
	scale  float64 // seconds per unit for numeric epochs
	// abbrevOnly: the layout's zone is an abbreviation (MST) and no
	// numeric offset. Go reads an abbreviation the collector's local zone
	// does not define (PST on a UTC host) as offset zero, silently: such a
	// time is refused (bad_timestamp), not read hours off.
	abbrevOnly bool
}

// ParseTimeFormat reads a time format name: rfc3339 (also the default for
// ""), unix_s, unix_ms, unix_us, unix_ns, or a Go layout.
func ParseTimeFormat(format string) (TimeFormat, error) {
	switch format {
	case "", "rfc3339":
		return TimeFormat{layout: time.RFC3339Nano}, nil
	case "unix_s":
		return TimeFormat{scale: 1}, nil
	case "unix_ms":
		return TimeFormat{scale: 1e-3}, nil
	case "unix_us":
		return TimeFormat{scale: 1e-6}, nil
	case "unix_ns":
		return TimeFormat{scale: 1e-9}, nil
	}
	if !strings.ContainsAny(format, "0123456789") {
		return TimeFormat{}, fmt.Errorf("%q is not rfc3339, unix_s, unix_ms, unix_us, unix_ns or a Go layout such as 2006-01-02 15:04:05", format)
	}
	// A layout is written with Go's reference time, 2006-01-02 15:04:05. One
	// written another way (YYYY-MM-DD HH:mm:ss.000, or an example date such
	// as 2024-01-15 10:30:00) has no year, month or day of its own: every
	// row would be bad_timestamp. The reference time must read back through
	// it, date included.
	ref := time.Date(2006, time.January, 2, 15, 4, 5, 0, time.UTC)
	if t, err := time.Parse(format, ref.Format(format)); err != nil || t.Year() != ref.Year() || t.YearDay() != ref.YearDay() {
		return TimeFormat{}, fmt.Errorf("%q is not a Go layout with a date: write the reference time 2006-01-02 15:04:05 in the export's shape, e.g. 2006-01-02 15:04:05 or 02/01/2006 15:04; or use rfc3339, unix_s, unix_ms, unix_us or unix_ns", format)
	}
	numeric := false
	for _, z := range []string{"-07", "Z07"} {
		numeric = numeric || strings.Contains(format, z)
	}
	return TimeFormat{layout: format, abbrevOnly: strings.Contains(format, "MST") && !numeric}, nil
}

// knownOffset reports whether t's zone, read from an abbreviation, has an
// offset Go knows: UTC, GMT (±hours), or a zone of the local location.
func knownOffset(t time.Time) bool {
	loc := t.Location()
	if loc == time.UTC || loc == time.Local {
		return true
	}
	name := loc.String()
	return name == "UTC" || name == "GMT" || strings.HasPrefix(name, "GMT+") || strings.HasPrefix(name, "GMT-")
}

var errBadTime = errors.New("bad time")

// parse reads one time from a parsed row. Blank text is no value.
func (p TimeFormat) parse(v any) (t time.Time, present bool, err error) {
	if v == nil {
		return time.Time{}, false, nil
	}
	if s, isStr := v.(string); isStr && strings.TrimSpace(s) == "" {
		return time.Time{}, false, nil
	}
	if p.layout == "" {
		f, present, ok := rawNumber(v)
		if !ok || !present || f < 0 || f*p.scale > 1e11 {
			return time.Time{}, true, errBadTime
		}
		// Microseconds: float epochs carry no more, and rounding keeps
		// differences such as 0.4125 s exact.
		return time.UnixMicro(int64(math.Round(f * p.scale * 1e6))).UTC(), true, nil
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, true, errBadTime
	}
	s = strings.TrimSpace(s)
	if p.layout == time.RFC3339Nano {
		t, ok := rfc3339Text(s, true)
		if !ok {
			return time.Time{}, true, errBadTime
		}
		return t.UTC(), true, nil
	}
	t, err = time.Parse(p.layout, s)
	if err != nil || (p.abbrevOnly && !knownOffset(t)) {
		return time.Time{}, true, errBadTime
	}
	return t.UTC(), true, nil
}

// containsFold reports whether s contains substr, ASCII case-insensitively,
// without allocating.
func containsFold(s, substr string) bool {
	n := len(substr)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], substr) {
			return true
		}
	}
	return false
}

// hasPrefixFold is strings.HasPrefix, ASCII case-insensitively.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
