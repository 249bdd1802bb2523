package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Reasons a row is skipped; the values label the rows_skipped counter. The
// reasons about values come from the derivation's rules.
const (
	reasonColumnCount   = "column_count"    // CSV row with more or fewer fields than its header
	reasonMalformedCSV  = "malformed_csv"   // CSV row that does not parse (bad quoting)
	reasonMissingHeader = "missing_header"  // CSV file whose first line does not name the ttft column
	reasonHeaderTooLong = "header_too_long" // CSV file whose header line is over maxHeaderBytes
	reasonMalformedJSON = "malformed_json"  // truncated or invalid JSON line
	reasonNotObject     = "not_an_object"   // JSON value that is not an object
	reasonUnknownStatus = "unknown_status"  // status value not in status_values
	reasonMissingStatus = "missing_status"  // status column mapped but empty
	reasonNotFinished   = "not_finished"    // status in status_values.skip (e.g. processing)

	reasonBadTTFT    = derive.GatewayBadTTFT    // TTFT not a finite number
	reasonAbsurdTTFT = derive.GatewayAbsurdTTFT // TTFT above derive::max_ttft_seconds
	reasonNegative   = derive.GatewayNegative   // negative TTFT, duration or token count
	reasonBadNumber  = derive.GatewayBadNumber  // other numeric field not a number
	reasonBadTime    = derive.GatewayBadTime    // start/first-token/end time unparsable
)

// mapper reads parsed rows into the derivation's row observation and lets
// it make the request record.
type mapper struct {
	spec   *spec
	derive *derive.Deriver
}

func newMapper(s *spec, cfg derive.Config) (*mapper, error) {
	d, err := derive.New(cfg)
	if err != nil {
		return nil, err
	}
	return &mapper{spec: s, derive: d}, nil
}

// mapped is one row's request record and its request time.
type mapped struct {
	rec     record.Record
	at      time.Time
	hasTime bool
	row     derive.GatewayRecord
}

// mapRow maps one parsed row. A non-empty reason means the row is skipped.
func (m *mapper) mapRow(row map[string]any) (out mapped, reason string) {
	v := rowView{row: row}
	if reason = m.mapView(&v, &out.row); reason != "" {
		return out, reason
	}
	out.rec, out.at, out.hasTime = out.row.Record, out.row.Start, out.row.HasStart
	return out, ""
}

// mapView maps one row, a parsed object or a CSV line's fields, into out.
// A non-empty reason means the row is skipped.
func (m *mapper) mapView(v *rowView, out *derive.GatewayRecord) (reason string) {
	s := m.spec
	in := derive.GatewayRow{
		Provider: v.str(&s.provider), Model: v.str(&s.model), Route: v.str(&s.route),
	}
	if s.status.set() {
		word := strings.ToLower(v.str(&s.status))
		if word == "" {
			return reasonMissingStatus
		}
		o, known := s.statuses[word]
		if !known && httpStatus(word) {
			o, known = s.statuses[word[:1]+"xx"]
		}
		switch {
		case !known:
			return reasonUnknownStatus
		case o == statusSkip:
			return reasonNotFinished
		}
		in.Outcome = o
	}
	if in.Outcome == record.OutcomeError {
		in.ErrorText = v.texts(&s.errorType)
		in.ContentSeen = v.carries(&s.output)
	}
	in.TTFT, in.TTFTName, _ = v.get(&s.ttft)
	if in.FirstToken, _, _ = v.get(&s.firstToken); in.FirstToken != nil {
		in.FirstTokenName = s.firstToken.names[0]
	}
	in.Start, _, _ = v.get(&s.start)
	in.End, _, _ = v.get(&s.end)
	in.Duration, _, _ = v.get(&s.duration)
	in.Stream, _, _ = v.get(&s.stream)
	in.PromptTokens, _, _ = v.get(&s.prompt)
	in.CachedTokens, _, _ = v.get(&s.cached)
	in.OutputTokens, _, _ = v.get(&s.completion)
	in.Attempts, _, _ = v.get(&s.attempts)
	in.Retries, _, _ = v.get(&s.retries)
	in.Trail, _, _ = v.get(&s.trail)
	in.FallbackIndex, _, _ = v.get(&s.fallbackIndex)
	if s.parent.set() {
		in.ID, in.ParentID = v.str(&s.id), v.str(&s.parent)
	}
	return m.derive.FromGatewayRow(s.rows, &in, out)
}

// rowView is one row as the mapping reads it: a parsed object (JSON
// formats, tests), or the fields of a CSV line under its file's columns,
// read without building an object from them.
type rowView struct {
	row    map[string]any
	cols   *csvColumns
	fields []string
}

// get returns the first of f's candidates present in the row, as
// field.get does on the object the row's columns would make.
func (v *rowView) get(f *field) (any, string, bool) {
	if v.cols == nil {
		return f.get(v.row)
	}
	for i, c := range v.cols.fields[f.id] {
		if c.exact >= 0 {
			return v.fields[c.exact], f.names[i], true
		}
		if c.head < 0 {
			continue
		}
		if val, ok := walk(v.fields[c.head], f.paths[i][1:]); ok {
			return val, f.names[i], true
		}
	}
	return nil, "", false
}

// at returns f's i-th candidate if the row has it: a CSV column by its
// name, or a path into a column of JSON text; a key or path of an object.
// As get looks it up; get keeps its lookups written out for the per-row
// path (at is no inline call: +208 instructions a row, BenchmarkPipeline).
func (v *rowView) at(f *field, i int) (any, bool) {
	if v.cols == nil {
		return f.at(v.row, i)
	}
	switch c := v.cols.fields[f.id][i]; {
	case c.exact >= 0:
		return v.fields[c.exact], true
	case c.head >= 0:
		return walk(v.fields[c.head], f.paths[i][1:])
	}
	return nil, false
}

// each calls fn with each of f's candidates the row has, in order.
func (v *rowView) each(f *field, fn func(val any)) {
	n := len(f.names)
	if v.cols != nil {
		n = len(v.cols.fields[f.id])
	}
	for i := 0; i < n; i++ {
		if val, ok := v.at(f, i); ok {
			fn(val)
		}
	}
}

// str is f's value as trimmed text ("" when absent or not a scalar).
func (v *rowView) str(f *field) string {
	if v.cols != nil {
		if cs := v.cols.fields[f.id]; len(cs) > 0 && cs[0].exact >= 0 {
			return strings.TrimSpace(v.fields[cs[0].exact]) // a CSV field is text
		}
	}
	val, _, ok := v.get(f)
	if !ok {
		return ""
	}
	return strings.TrimSpace(scalarString(val))
}

// texts is the text of every candidate of f the row has, trimmed and
// joined by "; ": of the error fields (class, code, message) only one may
// name a timeout (LiteLLM: APIConnectionError, 500, "Request timed out").
func (v *rowView) texts(f *field) string {
	var b strings.Builder
	v.each(f, func(val any) {
		if t := strings.TrimSpace(scalarString(val)); t != "" {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t)
		}
	})
	return b.String()
}

// carries reports whether some candidate of f the row has is a non-empty
// string, array or object.
func (v *rowView) carries(f *field) bool {
	carries := false
	v.each(f, func(val any) {
		switch t := val.(type) {
		case string:
			carries = carries || strings.TrimSpace(t) != ""
		case []any:
			carries = carries || len(t) > 0
		case map[string]any:
			carries = carries || len(t) > 0
		}
	})
	return carries
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

// httpStatus reports whether a status word is a three-digit HTTP status
// code (100–599).
func httpStatus(w string) bool {
	return len(w) == 3 && w[0] >= '1' && w[0] <= '5' && w[1] >= '0' && w[1] <= '9' && w[2] >= '0' && w[2] <= '9'
}
