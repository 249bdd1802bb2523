package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

type unit uint8

const (
	unitSeconds unit = iota
	unitMillis
	unitNanos
	unitMicros
	// unitNanosOrMillis: nanoseconds, but a value too small to be
	// nanoseconds of a network round trip (< 10 µs) was written in
	// milliseconds by an older release.
	unitNanosOrMillis
)

func parseUnit(s string) (unit, bool) {
	switch s {
	case "", "s":
		return unitSeconds, true
	case "ms":
		return unitMillis, true
	case "ns":
		return unitNanos, true
	case "us":
		return unitMicros, true
	case "ns_or_ms":
		return unitNanosOrMillis, true
	}
	return unitSeconds, false
}

func (u unit) seconds(v float64) float64 {
	switch u {
	case unitMillis:
		return v / 1e3
	case unitNanos:
		return v / 1e9
	case unitMicros:
		return v / 1e6
	case unitNanosOrMillis:
		if v > 0 && v < 1e4 {
			return v / 1e3
		}
		return v / 1e9
	}
	return v
}

// number reads a numeric attribute. Numeric strings are accepted (some
// exporters stringify); anything else is not a number.
func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		if s == "" || len(s) > 64 {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// count reads a token count; ok is false for non-numbers, NaN, negatives
// and values no real request reaches.
func count(v pcommon.Value) (int64, bool) {
	if v.Type() == pcommon.ValueTypeInt {
		n := v.Int()
		return n, n >= 0 && n < 1<<40
	}
	f, ok := number(v)
	if !ok || math.IsNaN(f) || f < 0 || f >= 1<<40 {
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

// absTime reads an absolute timestamp: RFC 3339 text (optionally JSON
// quoted) or a Unix epoch number in s, ms, µs or ns judged by magnitude.
func absTime(v pcommon.Value) (uint64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := strings.Trim(strings.TrimSpace(v.Str()), `"`)
		if s == "" || len(s) > 64 {
			return 0, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			// Some producers omit the zone; they write UTC.
			t, err = time.Parse("2006-01-02T15:04:05.999999999", s)
			if err != nil {
				return 0, false
			}
		}
		if t.UnixNano() <= 0 {
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
