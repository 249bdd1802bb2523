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
	s := m.spec
	in := derive.GatewayRow{
		Provider: str(s.provider, row), Model: str(s.model, row), Route: str(s.route, row),
	}
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
		in.Outcome = o
	}
	if in.Outcome == record.OutcomeError {
		in.ErrorText = str(s.errorType, row)
	}
	in.TTFT, in.TTFTName, _ = s.ttft.get(row)
	if in.FirstToken, _, _ = s.firstToken.get(row); in.FirstToken != nil {
		in.FirstTokenName = s.firstToken.names[0]
	}
	in.Start, _, _ = s.start.get(row)
	in.End, _, _ = s.end.get(row)
	in.Duration, _, _ = s.duration.get(row)
	in.Stream, _, _ = s.stream.get(row)
	in.PromptTokens, _, _ = s.prompt.get(row)
	in.CachedTokens, _, _ = s.cached.get(row)
	in.OutputTokens, _, _ = s.completion.get(row)
	in.Attempts, _, _ = s.attempts.get(row)
	in.Retries, _, _ = s.retries.get(row)
	in.Trail, _, _ = s.trail.get(row)
	in.FallbackIndex, _, _ = s.fallbackIndex.get(row)
	if s.parent.set() {
		in.ID, in.ParentID = str(s.id, row), str(s.parent, row)
	}
	if reason = m.derive.FromGatewayRow(s.rows, &in, &out.row); reason != "" {
		return out, reason
	}
	out.rec, out.at, out.hasTime = out.row.Record, out.row.Start, out.row.HasStart
	return out, ""
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
