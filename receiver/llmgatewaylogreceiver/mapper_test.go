package llmgatewaylogreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func testMapper(t testing.TB, format string, m MappingConfig) *mapper {
	t.Helper()
	s, err := newSpec(format, m)
	require.NoError(t, err)
	mp, err := newMapper(s, derive.DefaultConfig())
	require.NoError(t, err)
	return mp
}

func infroRow(over map[string]any) map[string]any {
	row := map[string]any{
		"request_id": "r1", "created_at": "2026-11-30T10:00:00.250Z", "route_slug": "chat", "provider": "openai",
		"model": "gpt-4.1-mini", "status": "ok", "ttft_ms": "412.5", "latency_ms": "1630", "prompt_tokens": "1180",
		"cached_tokens": "100", "completion_tokens": "212", "attempts": "1",
	}
	for k, v := range over {
		if v == nil {
			delete(row, k)
		} else {
			row[k] = v
		}
	}
	return row
}

func TestInfroRowBecomesFirstContentRecord(t *testing.T) {
	m := testMapper(t, FormatInfroCSV, MappingConfig{})
	out, reason := m.mapRow(infroRow(nil))
	require.Empty(t, reason)
	r := out.rec
	assert.Equal(t, record.OutcomeComplete, r.Outcome)
	assert.True(t, r.HasTimeToFirstContent)
	assert.InDelta(t, 0.4125, r.TimeToFirstContent, 1e-12)
	assert.False(t, r.HasTimeToFirstChunk, "an infro export measures first content, not first chunk")
	assert.Equal(t, record.MeasuredAtFirstContent, r.MeasuredAt)
	assert.Equal(t, record.ObserverGateway, r.Observer)
	assert.InDelta(t, 1.63, r.Duration, 1e-12)
	assert.Equal(t, "<2k", r.PromptBand)
	assert.Equal(t, int64(1180), r.PromptTokens)
	assert.Equal(t, int64(100), r.CachedTokens)
	assert.Equal(t, int64(212), r.OutputTokens)
	assert.Equal(t, "chat", r.Route)
	assert.Equal(t, "openai", r.Provider)
	assert.Equal(t, "gpt-4.1-mini", r.Model)
	assert.Equal(t, int64(1), r.Attempts)
	assert.Equal(t, time.Date(2026, 11, 30, 10, 0, 0, 250e6, time.UTC), out.at)
	assert.True(t, r.StreamedKnown && r.Streamed, "a first-content TTFT is streaming evidence")
}

func TestStreamingIsOnlyClaimedWithEvidence(t *testing.T) {
	m := testMapper(t, FormatInfroCSV, MappingConfig{})
	out, reason := m.mapRow(infroRow(map[string]any{"status": "error", "ttft_ms": ""}))
	require.Empty(t, reason)
	assert.False(t, out.rec.StreamedKnown, "an error without a first token may not have streamed")

	out, reason = m.mapRow(infroRow(map[string]any{"ttft_ms": "1630", "latency_ms": "1630"}))
	require.Empty(t, reason)
	assert.True(t, out.rec.HasTimeToFirstContent, "a first-content clock equal to the duration is a one-chunk answer, not the duration in disguise")

	out, reason = m.mapRow(infroRow(map[string]any{"stream": "false"}))
	require.Empty(t, reason)
	assert.False(t, out.rec.HasTimeToFirstContent, "a non-streamed request has no TTFT")
}

func TestInfroStatusesMapToOutcomes(t *testing.T) {
	m := testMapper(t, FormatInfroCSV, MappingConfig{})
	for _, tc := range []struct {
		name, status, ttft string
		outcome            string
		hasTTFT            bool
	}{
		{"ok is complete", "ok", "400", record.OutcomeComplete, true},
		{"status words are case-insensitive", "OK", "400", record.OutcomeComplete, true},
		{"error keeps a ttft seen before it", "error", "400", record.OutcomeError, true},
		{"error without ttft", "error", "", record.OutcomeError, false},
		{"first-token timeout has no ttft", "timeout_first_token", "", record.OutcomeTimeoutFirstToken, false},
		{"first-token timeout drops a contradictory ttft", "timeout_first_token", "900", record.OutcomeTimeoutFirstToken, false},
		{"idle timeout", "timeout_idle", "700", record.OutcomeTimeoutIdle, true},
		{"deadline timeout", "timeout_deadline", "700", record.OutcomeTimeoutDeadline, true},
		{"generic timeout without a first token is first-token", "timeout", "", record.OutcomeTimeoutFirstToken, false},
		{"generic timeout after a first token is idle", "timeout", "650", record.OutcomeTimeoutIdle, true},
		{"closed", "cancelled", "300", record.OutcomeClosed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, reason := m.mapRow(infroRow(map[string]any{"status": tc.status, "ttft_ms": tc.ttft}))
			require.Empty(t, reason)
			assert.Equal(t, tc.outcome, out.rec.Outcome)
			assert.Equal(t, tc.hasTTFT, out.rec.HasTimeToFirstContent)
		})
	}
}

func TestBadRowsAreSkippedWithAReason(t *testing.T) {
	m := testMapper(t, FormatInfroCSV, MappingConfig{})
	for _, tc := range []struct {
		name   string
		over   map[string]any
		reason string
	}{
		{"non-numeric ttft", map[string]any{"ttft_ms": "fast"}, reasonBadTTFT},
		{"negative ttft", map[string]any{"ttft_ms": "-3"}, reasonNegative},
		{"infinite ttft", map[string]any{"ttft_ms": "Inf"}, reasonBadTTFT},
		{"absurd ttft", map[string]any{"ttft_ms": "9000000"}, reasonAbsurdTTFT},
		{"negative duration", map[string]any{"latency_ms": "-1"}, reasonNegative},
		{"negative prompt tokens", map[string]any{"prompt_tokens": "-10"}, reasonNegative},
		{"non-numeric tokens", map[string]any{"completion_tokens": "many"}, reasonBadNumber},
		{"unknown status", map[string]any{"status": "weird"}, reasonUnknownStatus},
		{"empty status", map[string]any{"status": ""}, reasonMissingStatus},
		{"in-progress row", map[string]any{"status": "processing"}, reasonNotFinished},
		{"unparsable time", map[string]any{"created_at": "yesterday"}, reasonBadTime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, reason := m.mapRow(infroRow(tc.over))
			assert.Equal(t, tc.reason, reason)
		})
	}
}

func TestUnknownValuesStayUnknown(t *testing.T) {
	m := testMapper(t, FormatInfroCSV, MappingConfig{})
	out, reason := m.mapRow(infroRow(map[string]any{"prompt_tokens": "", "created_at": nil, "attempts": ""}))
	require.Empty(t, reason)
	assert.Equal(t, band.Unknown, out.rec.PromptBand)
	assert.False(t, out.rec.HasPromptTokens)
	assert.False(t, out.hasTime, "no request time: the receiver stamps the observed time")
	assert.Equal(t, int64(1), out.rec.Attempts)
}

func TestBifrostAttemptsCountRetriesAndFallbacks(t *testing.T) {
	m := testMapper(t, FormatBifrost, MappingConfig{})
	// A fallback attempt's row as Bifrost v1.5.11 logs it: its own 0-based
	// trail, fallback_index 1, no TTFT field of any kind.
	row := map[string]any{
		"timestamp": "2026-11-30T00:00:02Z", "provider": "anthropic", "model": "claude-sonnet-4-5",
		"routing_rule_name": "code-assist", "number_of_retries": 1.0, "fallback_index": 1.0,
		"attempt_trail": []any{map[string]any{"attempt": 0.0}, map[string]any{"attempt": 1.0}},
		"latency":       9120.0, "status": "success", "stream": true,
		"token_usage": map[string]any{"prompt_tokens": 7310.0, "completion_tokens": 655.0},
	}
	out, reason := m.mapRow(row)
	require.Empty(t, reason)
	r := out.rec
	assert.Equal(t, int64(3), r.Attempts, "two tries on the fallback provider after one failed provider")
	_, has := r.TTFT()
	assert.False(t, has, "bifrost's log rows carry no TTFT")
	assert.Empty(t, r.MeasuredAt, "a record without TTFT says nothing about where a clock stopped")
	assert.Equal(t, "2k-16k", r.PromptBand)
	assert.Equal(t, "code-assist", r.Route)
	assert.InDelta(t, 9.12, r.Duration, 1e-12)

	// An exporter that adds the chunk-0 latency can point mapping::ttft at it.
	m = testMapper(t, FormatBifrost, MappingConfig{TTFT: "ttft_ms"})
	row["ttft_ms"] = 2210.0
	out, reason = m.mapRow(row)
	require.Empty(t, reason)
	assert.InDelta(t, 2.21, out.rec.TimeToFirstChunk, 1e-12)
	assert.Equal(t, record.MeasuredAtFirstChunk, out.rec.MeasuredAt)
}

func TestBifrostTimeoutErrorIsATimeout(t *testing.T) {
	m := testMapper(t, FormatBifrost, MappingConfig{})
	out, reason := m.mapRow(map[string]any{
		"timestamp": "2026-11-30T00:00:03Z", "status": "error", "stream": true, "latency": 30000.0,
		"error_details": map[string]any{"error": map[string]any{"type": "request_timeout"}},
	})
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, out.rec.Outcome)
}

// Bifrost's idle timeout cuts a stream 5 s after its last chunk, before or
// after content. The detail log's output_message tells them apart: a stall
// keeps the role only (first-token timeout), a stream cut after content
// keeps that content (idle timeout). The fixture's stall rows are the
// first kind.
func TestBifrostIdleTimeoutAfterContentIsIdle(t *testing.T) {
	m := testMapper(t, FormatBifrost, MappingConfig{})
	idle := map[string]any{"error": map[string]any{
		"error":   "stream idle timeout: no data received within configured window",
		"message": "Error reading stream: stream idle timeout: no data received within configured window",
	}}
	for _, c := range []struct {
		name   string
		output any
		want   string
	}{
		{"role only", map[string]any{"role": "assistant"}, record.OutcomeTimeoutFirstToken},
		{"no output kept", nil, record.OutcomeTimeoutFirstToken},
		{"empty content", map[string]any{"role": "assistant", "content": " "}, record.OutcomeTimeoutFirstToken},
		{"content", map[string]any{"role": "assistant", "content": "Partial answer"}, record.OutcomeTimeoutIdle},
		{"a tool call", map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1"}}}, record.OutcomeTimeoutIdle},
	} {
		row := map[string]any{
			"timestamp": "2026-11-30T00:00:03Z", "status": "error", "stream": true, "latency": 9040.0,
			"error_details": idle,
		}
		if c.output != nil {
			row["output_message"] = c.output
		}
		out, reason := m.mapRow(row)
		require.Empty(t, reason, c.name)
		assert.Equal(t, c.want, out.rec.Outcome, c.name)
	}
}

func litellmRow(over map[string]any) map[string]any {
	row := map[string]any{
		"status": "success", "stream": true, "custom_llm_provider": "openai", "model": "gpt-4.1-mini",
		"model_group": "chat-default", "prompt_tokens": 1180.0, "completion_tokens": 212.0,
		"startTime": 1796083201.12, "completionStartTime": 1796083201.5325, "endTime": 1796083202.75,
	}
	for k, v := range over {
		if v == nil {
			delete(row, k)
		} else {
			row[k] = v
		}
	}
	return row
}

func TestLiteLLMTTFTIsCompletionStartMinusStart(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(nil))
	require.Empty(t, reason)
	assert.InDelta(t, 0.4125, out.rec.TimeToFirstChunk, 1e-6)
	assert.InDelta(t, 1.63, out.rec.Duration, 1e-6)
	assert.Equal(t, "chat-default", out.rec.Route)
	assert.Equal(t, record.MeasuredAtFirstChunk, out.rec.MeasuredAt)
}

func TestLiteLLMNonStreamedCallHasNoTTFT(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(map[string]any{"stream": false, "completionStartTime": 1796083202.75}))
	require.Empty(t, reason)
	_, has := out.rec.TTFT()
	assert.False(t, has)
	assert.True(t, out.rec.HasDuration, "the duration is kept, never passed off as TTFT")
}

func TestTTFTEqualToDurationOnAnUnknownStreamIsRejected(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(map[string]any{"stream": nil, "completionStartTime": 1796083202.75}))
	require.Empty(t, reason)
	_, has := out.rec.TTFT()
	assert.False(t, has)
}

func TestLiteLLMFailedCallStampedAtEndHasNoFirstChunk(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(map[string]any{
		"status": "failure", "completionStartTime": 1796083202.75,
		"error_information": map[string]any{"error_class": "Timeout", "error_code": "408"},
	}))
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, out.rec.Outcome)
	_, has := out.rec.TTFT()
	assert.False(t, has)
}

// A timeout named only in the message (the class and code say a connection
// error) is still a timeout: every error field is read, not the first.
func TestLiteLLMTimeoutInTheMessageOnly(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(map[string]any{
		"status": "failure", "completionStartTime": nil,
		"error_information": map[string]any{"error_class": "APIConnectionError", "error_code": "500"},
		"error_str":         "litellm.Timeout: Request timed out",
	}))
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, out.rec.Outcome)
	out, reason = m.mapRow(litellmRow(map[string]any{
		"status": "failure", "completionStartTime": nil,
		"error_information": map[string]any{"error_class": "RateLimitError", "error_code": "429"},
		"error_str":         "rate limited",
	}))
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeError, out.rec.Outcome)
}

// LiteLLM falls back to endTime for completionStartTime on some streamed
// endpoints (/v1/messages, /v1/responses): that is no first chunk.
func TestLiteLLMStreamedCallStampedAtEndHasNoTTFT(t *testing.T) {
	m := testMapper(t, FormatLiteLLM, MappingConfig{})
	out, reason := m.mapRow(litellmRow(map[string]any{"completionStartTime": 1796083202.7495}))
	require.Empty(t, reason)
	_, has := out.rec.TTFT()
	assert.False(t, has)
	assert.Empty(t, out.rec.MeasuredAt)
	assert.Equal(t, record.OutcomeComplete, out.rec.Outcome)
	assert.True(t, out.rec.StreamedKnown && out.rec.Streamed)
}

func TestGenericMappingNamesColumnsAndUnits(t *testing.T) {
	m := testMapper(t, FormatCSV, MappingConfig{
		TTFT: "first_token_s", TTFTUnit: "s", StartTime: "ts", StartTimeFormat: "unix_ms",
		Model: "m", Route: "r", Status: "result", PromptTokens: "in",
		StatusValues: map[string][]string{"complete": {"good"}, "timeout_first_token": {"cut"}},
		MeasuredAt:   "first_content",
	})
	out, reason := m.mapRow(map[string]any{"first_token_s": "1.5", "ts": "1796083201120", "m": "x", "r": "y", "result": "good", "in": "70000"})
	require.Empty(t, reason)
	assert.InDelta(t, 1.5, out.rec.TimeToFirstContent, 1e-12)
	assert.Equal(t, ">=64k", out.rec.PromptBand)
	assert.Equal(t, time.UnixMilli(1796083201120).UTC(), out.at)

	out, reason = m.mapRow(map[string]any{"first_token_s": "", "ts": "1796083201120", "result": "cut"})
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, out.rec.Outcome)

	_, reason = m.mapRow(map[string]any{"first_token_s": "1", "result": "ok"})
	assert.Equal(t, reasonUnknownStatus, reason, "user status_values replace the words for complete")
}

func TestGenericJSONReadsNestedFields(t *testing.T) {
	m := testMapper(t, FormatJSON, MappingConfig{TTFT: "timing.ttft_ns", TTFTUnit: "ns", PromptTokens: "usage.input"})
	out, reason := m.mapRow(map[string]any{
		"timing": map[string]any{"ttft_ns": 250e6},
		"usage":  map[string]any{"input": 20000.0},
	})
	require.Empty(t, reason)
	assert.InDelta(t, 0.25, out.rec.TimeToFirstChunk, 1e-12)
	assert.Equal(t, "16k-64k", out.rec.PromptBand)
	assert.Equal(t, record.OutcomeComplete, out.rec.Outcome, "no status mapped: every row is a finished request")
}

// TestHTTPStatusCodesReadByClass: a status column of HTTP codes (Helicone,
// proxy access logs) maps every code: the listed ones as listed (408 and
// 504 timeouts, 499 the client closing), the rest by class, 2xx complete,
// 4xx and 5xx error. Before, a 429 or a 500 row was skipped as
// unknown_status, so failed requests dropped out of ttft.requests. A user
// who replaces an outcome's words replaces its class too.
func TestHTTPStatusCodesReadByClass(t *testing.T) {
	m := testMapper(t, FormatJSON, MappingConfig{TTFT: "ttft_ms", Status: "status"})
	for word, want := range map[any]string{
		"200": record.OutcomeComplete, float64(201): record.OutcomeComplete,
		"429": record.OutcomeError, float64(500): record.OutcomeError, "503": record.OutcomeError,
		"499": record.OutcomeClosed, "408": record.OutcomeTimeoutFirstToken, "504": record.OutcomeTimeoutFirstToken,
	} {
		out, reason := m.mapRow(map[string]any{"status": word})
		require.Empty(t, reason, "%v", word)
		assert.Equal(t, want, out.rec.Outcome, "%v", word)
	}
	for _, word := range []string{"102", "600", "42", "2000", "4x9"} {
		_, reason := m.mapRow(map[string]any{"status": word})
		assert.Equal(t, reasonUnknownStatus, reason, word)
	}
	m = testMapper(t, FormatJSON, MappingConfig{TTFT: "ttft_ms", Status: "status",
		StatusValues: map[string][]string{"complete": {"200"}}})
	_, reason := m.mapRow(map[string]any{"status": "201"})
	assert.Equal(t, reasonUnknownStatus, reason, "complete's words replaced: 2xx with them")
	out, reason := m.mapRow(map[string]any{"status": "502"})
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeError, out.rec.Outcome)
}
