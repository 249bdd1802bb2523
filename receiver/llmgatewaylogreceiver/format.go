package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// unitScale converts a value in the unit to seconds.
var unitScale = map[string]float64{"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}

// Pseudo-outcomes of status_values beside the six real ones.
const (
	statusTimeout = "timeout" // first-token or idle, by whether a first token was seen
	statusSkip    = "skip"    // rows that are not finished requests (e.g. in progress)
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
	status                   []string
	statusValues             map[string][]string
	measuredAt               string
	csv                      bool
}

// The status words below are the ones each source writes; lower-cased on read.
var commonStatusValues = map[string][]string{
	record.OutcomeComplete:          {"ok", "success", "succeeded", "completed", "complete", "200"},
	record.OutcomeError:             {"error", "failed", "failure", "errored"},
	record.OutcomeClosed:            {"closed", "cancelled", "canceled", "client_closed", "aborted", "abandoned"},
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
	// Bifrost request log (the logs API / log store row, one JSON object per
	// line). Its TTFT is the latency of stream chunk index 0.
	FormatBifrost: {
		ttft: []string{"ttft_ms", "time_to_first_token_ms"}, ttftUnit: []string{"ms"},
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
		status:        []string{"status"},
		statusValues:  commonStatusValues,
		measuredAt:    record.MeasuredAtFirstChunk,
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
func (f field) get(row map[string]any) (any, string, bool) {
	for i, name := range f.names {
		if v, ok := row[name]; ok && v != nil {
			return v, name, true
		}
		if len(f.paths[i]) < 2 {
			continue
		}
		var cur any = row
		found := true
		for _, p := range f.paths[i] {
			m, ok := cur.(map[string]any)
			if !ok {
				found = false
				break
			}
			if cur, ok = m[p]; !ok || cur == nil {
				found = false
				break
			}
		}
		if found {
			return cur, name, true
		}
	}
	return nil, "", false
}

// spec is a format with the user's mapping applied.
type spec struct {
	format                                  string
	csv                                     bool
	ttft                                    field
	ttftScale                               float64
	start, firstToken, end                  field
	startTime                               timeParser
	duration                                field
	durationScale                           float64
	model, provider, route                  field
	prompt, cached, completion              field
	attempts, retries, fallbackIndex, trail field
	stream, errorType, status               field
	statuses                                map[string]string
	measuredAt                              string
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
		status:     pick(m.Status, p.status),
		measuredAt: p.measuredAt,
	}
	unit := "ms"
	if len(p.ttftUnit) > 0 {
		unit = p.ttftUnit[0]
	}
	if m.TTFTUnit != "" {
		unit = m.TTFTUnit
	}
	if s.ttftScale, ok = unitScale[unit]; !ok {
		return nil, fmt.Errorf("mapping::ttft_unit: unknown unit %q", unit)
	}
	unit = p.durationUnit
	if unit == "" {
		unit = "ms"
	}
	if m.DurationUnit != "" {
		unit = m.DurationUnit
	}
	if s.durationScale, ok = unitScale[unit]; !ok {
		return nil, fmt.Errorf("mapping::duration_unit: unknown unit %q", unit)
	}
	layout := p.startFormat
	if m.StartTimeFormat != "" {
		layout = m.StartTimeFormat
	}
	tp, err := newTimeParser(layout)
	if err != nil {
		return nil, err
	}
	s.startTime = tp
	if m.MeasuredAt != "" {
		s.measuredAt = m.MeasuredAt
	}
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
			s.statuses[strings.ToLower(strings.TrimSpace(w))] = outcome
		}
	}
	return s, nil
}

// timeParser reads an absolute time from a string or a number.
type timeParser struct {
	layout string  // Go layout; empty for numeric epochs
	scale  float64 // seconds per unit for numeric epochs
}

func newTimeParser(format string) (timeParser, error) {
	switch format {
	case "", "rfc3339":
		return timeParser{layout: time.RFC3339Nano}, nil
	case "unix_s":
		return timeParser{scale: 1}, nil
	case "unix_ms":
		return timeParser{scale: 1e-3}, nil
	case "unix_us":
		return timeParser{scale: 1e-6}, nil
	case "unix_ns":
		return timeParser{scale: 1e-9}, nil
	}
	if !strings.ContainsAny(format, "0123456789") {
		return timeParser{}, fmt.Errorf("%q is not rfc3339, unix_s, unix_ms, unix_us, unix_ns or a Go layout such as 2006-01-02 15:04:05", format)
	}
	return timeParser{layout: format}, nil
}

var errBadTime = errors.New("bad time")

func (p timeParser) parse(v any) (time.Time, error) {
	if p.layout == "" {
		f, ok, err := toFloat(v)
		if err != nil || !ok || f < 0 || f*p.scale > 1e11 {
			return time.Time{}, errBadTime
		}
		// Microseconds: float epochs carry no more, and rounding keeps
		// differences such as 0.4125 s exact.
		return time.UnixMicro(int64(math.Round(f * p.scale * 1e6))).UTC(), nil
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errBadTime
	}
	s = strings.TrimSpace(s)
	if p.layout == time.RFC3339Nano {
		// Exports often write a space instead of T, or no zone (taken as UTC).
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC(), nil
		}
		for _, l := range []string{"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(l, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, errBadTime
	}
	t, err := time.Parse(p.layout, s)
	if err != nil {
		return time.Time{}, errBadTime
	}
	return t.UTC(), nil
}
