package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Pseudo-outcomes of status_values beside the six real ones.
const (
	statusTimeout = derive.OutcomeTimeout // first-token or idle, by whether a first token was seen
	statusSkip    = "skip"                // rows that are not finished requests (e.g. in progress)
)

var statusKeys = map[string]struct{}{
	record.OutcomeComplete: {}, record.OutcomeError: {}, record.OutcomeClosed: {},
	record.OutcomeTimeoutFirstToken: {}, record.OutcomeTimeoutIdle: {}, record.OutcomeTimeoutDeadline: {},
	statusTimeout: {}, statusSkip: {},
}

// preset is a named format: the mapping a user would otherwise write.
// Fields list candidate names, first present wins.
type preset struct {
	ttft, ttftUnit           []string
	start                    []string
	startFormat              string
	firstToken, end          []string
	duration                 []string
	durationUnit             string
	model, provider, route   []string
	prompt, cached, complete []string
	attempts, retries        []string
	fallbackIndex, trail     []string
	stream, errorType        []string
	// output: where a row keeps what the request answered (Bifrost's
	// output_message): a non-empty one says content went out.
	output       []string
	id, parent   []string
	status       []string
	statusValues map[string][]string
	measuredAt   string
	csv          bool
}

// The status words below are the ones each source writes; lower-cased on read.
// A three-digit HTTP status not listed itself is read by its class: "2xx",
// "4xx", "5xx" (statusWord).
var commonStatusValues = map[string][]string{
	record.OutcomeComplete:          {"ok", "success", "succeeded", "completed", "complete", "200", "2xx"},
	record.OutcomeError:             {"error", "failed", "failure", "errored", "4xx", "5xx"},
	record.OutcomeClosed:            {"closed", "cancelled", "canceled", "client_closed", "aborted", "abandoned", "499"},
	record.OutcomeTimeoutFirstToken: {"timeout_first_token", "first_token_timeout", "ttft_timeout"},
	record.OutcomeTimeoutIdle:       {"timeout_idle", "idle_timeout", "chunk_timeout"},
	record.OutcomeTimeoutDeadline:   {"timeout_deadline", "deadline_exceeded", "deadline_timeout", "total_timeout"},
	statusTimeout:                   {"timeout", "timed_out", "408", "504"},
	statusSkip:                      {"processing", "pending", "in_progress", "running"},
}

var presets = map[string]preset{
	// INFRO-style gateway request export: one CSV row per request; ttft_ms
	// stops at the first content or tool-call delta.
	FormatInfroCSV: {
		csv:  true,
		ttft: []string{"ttft_ms"}, ttftUnit: []string{"ms"},
		start: []string{"created_at", "request_time", "timestamp"}, startFormat: "rfc3339",
		duration: []string{"latency_ms", "duration_ms", "total_ms"}, durationUnit: "ms",
		model: []string{"model"}, provider: []string{"provider"},
		route:    []string{"route_slug", "route"},
		prompt:   []string{"prompt_tokens", "input_tokens"},
		cached:   []string{"cached_tokens", "cache_read_tokens"},
		complete: []string{"completion_tokens", "output_tokens"},
		attempts: []string{"attempts"}, stream: []string{"stream"},
		errorType:    []string{"error_type", "error_code"},
		status:       []string{"status"},
		statusValues: commonStatusValues,
		measuredAt:   record.MeasuredAtFirstContent,
	},
	// Bifrost request log (the logs API's row by id, or its SQLite log store
	// row, one JSON object per line). It has no TTFT field; a fallback
	// attempt is a row of its own linked by parent_request_id.
	FormatBifrost: {
		start: []string{"timestamp", "created_at"}, startFormat: "rfc3339",
		duration: []string{"latency"}, durationUnit: "ms",
		model: []string{"model"}, provider: []string{"provider"},
		route:  []string{"routing_rule_name", "alias", "virtual_key_name"},
		prompt: []string{"token_usage.prompt_tokens", "prompt_tokens"},
		cached: []string{
			"token_usage.prompt_tokens_details.cached_read_tokens",
			"token_usage.prompt_tokens_details.cached_tokens", "cached_read_tokens",
		},
		complete:      []string{"token_usage.completion_tokens", "completion_tokens"},
		retries:       []string{"number_of_retries"},
		fallbackIndex: []string{"fallback_index"},
		trail:         []string{"attempt_trail"},
		stream:        []string{"stream"},
		errorType:     []string{"error_details.error.type", "error_details.type", "error_details.error.message"},
		// The detail log's output_message holds the answer streamed so
		// far: a mid-stream error keeps its "Partial" content, a stall its
		// role only (testdata/fixtures/bifrost-gateway). The SQLite store
		// has none.
		output:       []string{"output_message.content", "output_message.tool_calls"},
		id:           []string{"id"},
		parent:       []string{"parent_request_id"},
		status:       []string{"status"},
		statusValues: commonStatusValues,
		measuredAt:   record.MeasuredAtFirstChunk,
	},
	// LiteLLM StandardLoggingPayload, one JSON object per line (e.g. written
	// by a custom callback): startTime/completionStartTime/endTime are unix
	// seconds; completionStartTime is the first chunk of a streamed call.
	FormatLiteLLM: {
		start: []string{"startTime"}, startFormat: "unix_s",
		firstToken: []string{"completionStartTime"},
		end:        []string{"endTime"},
		model:      []string{"model"}, provider: []string{"custom_llm_provider", "error_information.llm_provider"},
		route:     []string{"model_group"},
		prompt:    []string{"prompt_tokens"},
		complete:  []string{"completion_tokens"},
		stream:    []string{"stream"},
		errorType: []string{"error_information.error_class", "error_information.error_code", "error_str"},
		status:    []string{"status"},
		statusValues: map[string][]string{
			record.OutcomeComplete: {"success"},
			record.OutcomeError:    {"failure"},
		},
		measuredAt: record.MeasuredAtFirstChunk,
	},
	FormatCSV:  {csv: true, startFormat: "rfc3339", durationUnit: "ms", statusValues: commonStatusValues, measuredAt: record.MeasuredAtFirstChunk},
	FormatJSON: {startFormat: "rfc3339", durationUnit: "ms", statusValues: commonStatusValues, measuredAt: record.MeasuredAtFirstChunk},
}

// field is one resolved source of a value: candidate names, each also split
// on dots for nested JSON objects.
type field struct {
	// id numbers the spec's fields (csvColumns.fields is indexed by it).
	id    int
	names []string
	paths [][]string
}

func newField(names ...string) field {
	f := field{}
	for _, n := range names {
		if n == "" {
			continue
		}
		f.names = append(f.names, n)
		f.paths = append(f.paths, strings.Split(n, "."))
	}
	return f
}

func (f field) set() bool { return len(f.names) > 0 }

// get returns the first candidate present in row: by exact key first (CSV
// column names may contain dots), then by walking nested objects.
func (f *field) get(row map[string]any) (any, string, bool) {
	for i, name := range f.names {
		if v, ok := row[name]; ok && v != nil {
			return v, name, true
		}
		if len(f.paths[i]) < 2 {
			continue
		}
		if v, ok := walk(row, f.paths[i]); ok {
			return v, name, true
		}
	}
	return nil, "", false
}

// at returns f's i-th candidate if row has it, as get looks it up (get
// keeps the lookups written out: it runs for every field of every row, and
// at is no inline call).
func (f *field) at(row map[string]any, i int) (any, bool) {
	if v, ok := row[f.names[i]]; ok && v != nil {
		return v, true
	}
	if len(f.paths[i]) < 2 {
		return nil, false
	}
	return walk(row, f.paths[i])
}

// maxNestedJSON bounds the JSON text walk parses for one step.
const maxNestedJSON = 64 << 10

// walk follows path through nested objects. An object kept as JSON text
// (Bifrost's SQLite log store writes token_usage and error_details so) is
// parsed on the way.
func walk(cur any, path []string) (any, bool) {
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			s, isStr := cur.(string)
			if !isStr || len(s) > maxNestedJSON || !strings.HasPrefix(strings.TrimSpace(s), "{") {
				return nil, false
			}
			if json.Unmarshal([]byte(s), &m) != nil {
				return nil, false
			}
		}
		if cur, ok = m[p]; !ok || cur == nil {
			return nil, false
		}
	}
	return cur, true
}

// spec is a format with the user's mapping applied.
type spec struct {
	format                                  string
	csv                                     bool
	ttft                                    field
	start, firstToken, end                  field
	duration                                field
	model, provider, route                  field
	prompt, cached, completion              field
	attempts, retries, fallbackIndex, trail field
	stream, errorType, status               field
	output                                  field
	id, parent                              field
	statuses                                map[string]string
	rows                                    *derive.GatewayFormat
}

// fields lists the spec's fields, in id order.
func (s *spec) fields() []*field {
	return []*field{
		&s.ttft, &s.start, &s.firstToken, &s.end, &s.duration,
		&s.model, &s.provider, &s.route, &s.prompt, &s.cached, &s.completion,
		&s.attempts, &s.retries, &s.fallbackIndex, &s.trail,
		&s.stream, &s.errorType, &s.status, &s.output, &s.id, &s.parent,
	}
}

func pick(user string, def []string) field {
	if user != "" {
		return newField(user)
	}
	return newField(def...)
}

func newSpec(format string, m MappingConfig) (*spec, error) {
	p, ok := presets[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q", format)
	}
	s := &spec{
		format: format, csv: p.csv,
		ttft:  pick(m.TTFT, p.ttft),
		start: pick(m.StartTime, p.start), firstToken: pick(m.FirstTokenTime, p.firstToken),
		end: pick(m.EndTime, p.end), duration: pick(m.Duration, p.duration),
		model: pick(m.Model, p.model), provider: pick(m.Provider, p.provider), route: pick(m.Route, p.route),
		prompt: pick(m.PromptTokens, p.prompt), cached: pick(m.CachedTokens, p.cached),
		completion: pick(m.CompletionTokens, p.complete),
		attempts:   pick(m.Attempts, p.attempts), retries: pick(m.Retries, p.retries),
		fallbackIndex: pick(m.FallbackIndex, p.fallbackIndex), trail: pick(m.AttemptTrail, p.trail),
		stream: pick(m.Stream, p.stream), errorType: pick(m.ErrorType, p.errorType),
		id: pick(m.RequestID, p.id), parent: pick(m.ParentRequestID, p.parent),
		status: pick(m.Status, p.status), output: newField(p.output...),
	}
	for i, f := range s.fields() {
		f.id = i
	}
	if s.parent.set() && !s.id.set() {
		return nil, errors.New("mapping::request_id: needed with mapping::parent_request_id (a fallback row names its parent row's request id)")
	}
	rc := derive.GatewayFormatConfig{
		Name: format, TTFTUnit: m.TTFTUnit, DurationUnit: m.DurationUnit,
		TimeFormat: p.startFormat, MeasuredAt: p.measuredAt,
	}
	if rc.TTFTUnit == "" && len(p.ttftUnit) > 0 {
		rc.TTFTUnit = p.ttftUnit[0]
	}
	if rc.DurationUnit == "" {
		rc.DurationUnit = p.durationUnit
	}
	if m.StartTimeFormat != "" {
		rc.TimeFormat = m.StartTimeFormat
	}
	if m.MeasuredAt != "" {
		rc.MeasuredAt = m.MeasuredAt
	}
	rows, err := derive.NewGatewayFormat(rc)
	if err != nil {
		return nil, prefixed("mapping::", err)
	}
	s.rows = rows
	s.statuses = map[string]string{}
	for outcome, words := range p.statusValues {
		for _, w := range words {
			s.statuses[strings.ToLower(w)] = outcome
		}
	}
	// User values replace the preset's words for that outcome and win on clashes.
	for outcome, words := range m.StatusValues {
		for w, o := range s.statuses {
			if o == outcome {
				delete(s.statuses, w)
			}
		}
		for _, w := range words {
			s.statuses[statusWord(w)] = outcome
		}
	}
	return s, nil
}

// statusWord is a mapping::status_values word as rows are matched against
// it: trimmed and lower-cased.
func statusWord(w string) string { return strings.ToLower(strings.TrimSpace(w)) }

// prefixed puts prefix before each of err's joined errors.
func prefixed(prefix string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, fmt.Errorf("%s%w", prefix, e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("%s%w", prefix, err)
}
