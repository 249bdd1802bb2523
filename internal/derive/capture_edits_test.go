package derive

// Edits of the real captures (testdata/fixtures) into cases their
// libraries produce but the captures lack: a retried Vercel call, a client
// timeout and an abort over the stalled Anthropic stream, a prompt read
// whole from Anthropic's cache. Each failed on the code before its fix.

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func captureRecords(t *testing.T, td ptrace.Traces) []record.Record {
	t.Helper()
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	var recs []record.Record
	d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
	return recs
}

func captureTraces(t *testing.T, lib, scenario string) ptrace.Traces {
	t.Helper()
	return readTraces(t, filepath.Join(fixturesDir, lib, scenario+".traces.json"))
}

// spansByName returns the spans of a capture by name.
func spansByName(td ptrace.Traces) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				out[spans.At(k).Name()] = spans.At(k)
			}
		}
	}
	return out
}

// vercelRetry turns the real vercel-ai/normal capture into a call whose
// first provider request failed with a 429 (the doStream of the real
// vercel-ai/http_429 capture) and whose retry, one second later, served it.
func vercelRetry(t *testing.T) ptrace.Traces {
	td := captureTraces(t, "vercel-ai", "normal")
	failedTD := captureTraces(t, "vercel-ai", "http_429")
	spans := spansByName(td)
	outer, served := spans["ai.streamText"], spans["ai.streamText.doStream"]
	const shift = pcommon.Timestamp(1e9)
	// The failed request takes the served one's place at the start.
	failed := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	spansByName(failedTD)["ai.streamText.doStream"].CopyTo(failed)
	failed.SetTraceID(served.TraceID())
	failed.SetParentSpanID(outer.SpanID())
	failed.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	failed.Attributes().PutStr("ai.model.id", "scn-normal")
	failed.Attributes().PutStr("gen_ai.request.model", "scn-normal")
	d := failed.EndTimestamp() - failed.StartTimestamp()
	failed.SetStartTimestamp(served.StartTimestamp())
	failed.SetEndTimestamp(served.StartTimestamp() + d)
	for i := 0; i < failed.Events().Len(); i++ {
		failed.Events().At(i).SetTimestamp(failed.EndTimestamp())
	}
	// The retry, one second later.
	served.SetStartTimestamp(served.StartTimestamp() + shift)
	served.SetEndTimestamp(served.EndTimestamp() + shift)
	for i := 0; i < served.Events().Len(); i++ {
		served.Events().At(i).SetTimestamp(served.Events().At(i).Timestamp() + shift)
	}
	outer.SetEndTimestamp(outer.EndTimestamp() + shift)
	return td
}

// §2: "Requests of more than one attempt ...: their TTFT includes the
// earlier attempts' time". A Vercel call retried after a 429 reports the
// retry's own msToFirstChunk, as if the first attempt and the backoff had
// not happened.
func TestRetriedVercelCallTTFTIncludesEarlierAttempts(t *testing.T) {
	recs := captureRecords(t, vercelRetry(t))
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.Equal(t, int64(2), rec.Attempts)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome)
	require.True(t, rec.HasTimeToFirstChunk)
	// The served request started 1.009 s after ai.streamText; its first
	// chunk came 63 ms after that.
	assert.GreaterOrEqual(t, rec.TimeToFirstChunk, 1.0, "TTFT from the call's start (ai.streamText), got %.4f", rec.TimeToFirstChunk)
}

// §4 "Attempts and failover": "a retry of the same target is an
// attempt, not a failover". A Vercel call retried on the same model is
// counted as failed over.
func TestVercelRetryOfSameModelIsNoFailover(t *testing.T) {
	recs := captureRecords(t, vercelRetry(t))
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.Equal(t, int64(2), rec.Attempts)
	assert.False(t, rec.DidFailOver(), "both provider requests went to fakellm.chat/scn-normal (FailedOverKnown=%v)", rec.FailedOverKnown)
}

// §4 "Outcome": a timeout is "first-token or idle by whether content
// was seen". In the real openinference-anthropic/stall capture no content
// ever came (ground truth: 40 ms message_start, then silence), but
// OpenInference copies message_start's placeholder usage
// (llm.token_count.completion=1) onto its span. Cut by a client timeout
// (as the Anthropic SDK marks one: ERROR, error.type client_timeout_error),
// the call is read as an idle timeout.
func TestPlaceholderOutputTokenIsNoContent(t *testing.T) {
	td := captureTraces(t, "openinference-anthropic", "stall")
	spans := spansByName(td)
	outer, inner := spans["Anthropic Messages"], spans["anthropic.messages.create"]
	require.Equal(t, int64(1), func() int64 { v, _ := outer.Attributes().Get("llm.token_count.completion"); return v.Int() }())
	inner.Status().SetCode(ptrace.StatusCodeError)
	inner.Attributes().PutStr("error.type", "client_timeout_error")
	outer.Status().SetCode(ptrace.StatusCodeError)
	outer.Status().SetMessage("Request timed out.")
	ev := outer.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(outer.EndTimestamp())
	ev.Attributes().PutStr("exception.type", "APIConnectionTimeoutError")
	ev.Attributes().PutStr("exception.message", "Request timed out.")

	recs := captureRecords(t, td)
	require.Len(t, recs, 1)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, recs[0].Outcome, "no content came before the timeout")
}

// §4 "Outcome": abandoned streams are `closed`, ahead of errors and
// completion; folded spans keep the worst outcome. The real
// openinference-anthropic/stall capture is a stream the client aborted;
// here the nested SDK span says so explicitly (exception AbortError, as
// fetch raises it) and the OpenInference span around it says OK: the
// cancelled stream is read as complete.
func TestAbandonedNestedStreamIsNotComplete(t *testing.T) {
	td := captureTraces(t, "openinference-anthropic", "stall")
	inner := spansByName(td)["anthropic.messages.create"]
	ev := inner.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(inner.EndTimestamp())
	ev.Attributes().PutStr("exception.type", "AbortError")
	ev.Attributes().PutStr("exception.message", "This operation was aborted")

	recs := captureRecords(t, td)
	require.Len(t, recs, 1)
	assert.Equal(t, record.OutcomeClosed, recs[0].Outcome, "the client abandoned the stream")
}

// §1 bands / §4 producer traits ("input tokens that exclude cached
// input"): an Anthropic call whose whole prompt was read from the cache
// reports input_tokens 0 and cache_read 40,000: its prompt is 40,000 tokens,
// but the record's band is unknown.
func TestAnthropicFullyCachedPromptHasABand(t *testing.T) {
	td := captureTraces(t, "anthropic-native", "normal")
	span := spansByName(td)["anthropic.messages.create"]
	span.Attributes().PutInt("gen_ai.usage.input_tokens", 0)
	span.Attributes().PutInt("gen_ai.usage.cache_read.input_tokens", 40000)
	recs := captureRecords(t, td)
	require.Len(t, recs, 1)
	assert.Equal(t, "16k-64k", recs[0].PromptBand, "prompt tokens %d (known %v)", recs[0].PromptTokens, recs[0].HasPromptTokens)
}
