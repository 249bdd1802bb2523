package ttftstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Chunk kinds the README's table names that TestClassifyChunks does not pin.
func TestClassifyEdges(t *testing.T) {
	cases := []struct {
		name   string
		format format
		data   string
		want   kind
	}{
		{"chat first choice has content", formatChat, `{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"role":"assistant"}}]}`, kindContent},
		{"chat null error with role", formatChat, `{"error":null,"choices":[{"delta":{"role":"assistant"}}]}`, kindRole},
		{"chat string part", formatChat, `{"choices":[{"delta":{"content":["Hi"]}}]}`, kindContent},
		{"chat image part", formatChat, `{"choices":[{"delta":{"content":[{"type":"image_url","image_url":{"url":"data:x"}}]}}]}`, kindContent},
		{"chat first tool call entry carries", formatChat, `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f"}},{"index":1}]}}]}`, kindToolCall},
		{"chat non-object tool call entry", formatChat, `{"choices":[{"delta":{"tool_calls":[1]}}]}`, kindToolCall},
		{"chat false refusal", formatChat, `{"choices":[{"delta":{"refusal":false}}]}`, kindLifecycle},
		{"chat trailing comma", formatChat, `{"choices":[{"delta":{"content":"x"}},]}`, kindContent},
		{"responses tool output item added", formatResponses, `{"type":"response.output_item.added","item":{"type":"shell_call_output"}}`, kindLifecycle},
		{"responses reasoning summary delta", formatResponses, `{"type":"response.reasoning_summary.delta","delta":"hm"}`, kindReasoning},
		{"anthropic mcp_tool_use block start", formatAnthropic, `{"type":"content_block_start","index":1,"content_block":{"type":"mcp_tool_use","id":"t1","name":"f"}}`, kindToolCall},
		{"anthropic citations_delta", formatAnthropic, `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`, kindContent},
		{"anthropic delta without payload key", formatAnthropic, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}`, kindContent},
		{"anthropic text block start, empty thinking after", formatAnthropic, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi","thinking":""}}`, kindContent},
		{"gemini thought signature alone", formatGemini, `{"candidates":[{"content":{"parts":[{"thought":true,"thoughtSignature":"abc"}]}}]}`, kindLifecycle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f facts
			got, ok := f.classify(c.format, nil, []byte(c.data), false)
			if !ok || got != c.want {
				t.Errorf("kind = %s (ok %v), want %s", got, ok, c.want)
			}
		})
	}
}

// A frame cut by the line limit is read as far as it goes, but a frame
// malformed before its cut is still malformed; a cut right after a string's
// opening quote carries nothing yet.
func TestClassifyPartialEdges(t *testing.T) {
	var f facts
	if _, ok := f.classify(formatChat, nil, []byte(`{"choices":[}, "x":"aaaa`), true); ok {
		t.Error("a cut frame malformed before its cut was accepted")
	}
	if k, ok := f.classify(formatChat, nil, []byte(`{"choices":[{"delta":{"content":"`), true); !ok || k != kindLifecycle {
		t.Errorf("cut after the opening quote: %s %v, want lifecycle", k, ok)
	}
}

func TestClassifyFactEdges(t *testing.T) {
	var f facts
	for i := 0; i < maxFinishReasons+1; i++ {
		f.classify(formatChat, nil, []byte(fmt.Sprintf(`{"choices":[{"delta":{},"finish_reason":"r%d"}]}`, i)), false)
	}
	if len(f.finish) != maxFinishReasons {
		t.Errorf("%d finish reasons kept, want %d", len(f.finish), maxFinishReasons)
	}

	var m facts
	m.classify(formatChat, nil, []byte(`{"model":"first","choices":[]}`), false)
	m.classify(formatChat, nil, []byte(`{"model":"second","choices":[]}`), false)
	if m.model != "first" {
		t.Errorf("model %q, want the first one", m.model)
	}

	var big facts
	big.classify(formatChat, nil, []byte(`{"choices":[],"usage":{"prompt_tokens":99999999999999999999}}`), false)
	if big.hasInput {
		t.Errorf("an overflowing token count was kept: %d", big.inputTokens)
	}

	typ64, msg := strings.Repeat("t", 64), strings.Repeat("m", 600)
	var e facts
	e.classify(formatChat, nil, []byte(`{"error":{"type":"`+typ64+`","code":"other","message":"`+msg+`"}}`), false)
	if e.errType != typ64 || len(e.errMsg) != 512 {
		t.Errorf("error type %q (%d bytes), message %d bytes; want the 64-byte type and 512 bytes", e.errType, len(e.errType), len(e.errMsg))
	}

	// message_delta's input_tokens 0 does not undo message_start's count.
	var a facts
	a.classify(formatAnthropic, nil, []byte(`{"type":"message_start","message":{"usage":{"input_tokens":20,"output_tokens":1}}}`), false)
	a.classify(formatAnthropic, nil, []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":0,"output_tokens":9}}`), false)
	if a.inputTokens != 20 || !a.hasInput {
		t.Errorf("input tokens %d, want 20", a.inputTokens)
	}

	var inc facts
	inc.classify(formatResponses, nil, []byte(`{"type":"response.incomplete","response":{"status":"incomplete"}}`), false)
	if !inc.marker || !slices.Equal(inc.finish, []string{"incomplete"}) {
		t.Errorf("response.incomplete: marker %v finish %v", inc.marker, inc.finish)
	}
}

// An OpenAI-compatible server's [DONE] ends a Responses stream as framing:
// without response.completed the stream did not complete.
func TestResponsesDoneIsNoCompletion(t *testing.T) {
	r := run(t, call{path: "/responses", body: `{"model":"m","stream":true}`, steps: []step{{data: sse(
		"response.output_text.delta\x00"+`{"type":"response.output_text.delta","delta":"Hi"}`, `[DONE]`)}}})
	if got := r.span.attr(AttrStreamEnd).AsString(); got != endEOF {
		t.Errorf("end %q, want %q", got, endEOF)
	}
}

// An error chunk is no content: it neither counts nor starts the gap clock.
func TestErrorChunkIsNoContent(t *testing.T) {
	r := run(t, call{path: "/chat/completions", steps: []step{{data: sse(chatRole)},
		{wait: 50 * ms, data: sse(`{"error":{"message":"boom","type":"server_error"}}`)}}})
	s := r.span
	if got := s.attr(AttrChunkContentCount).AsInt64(); got != 0 {
		t.Errorf("content count %d, want 0", got)
	}
	if v := s.attr(AttrChunkMaxGap); v.Type() != attribute.INVALID {
		t.Errorf("max gap %v written without content", v.Emit())
	}
}

// The event field gives the type when the data has none; its value loses
// one leading space, and CRLF line ends keep it with its data.
func TestEventNameGivesTheType(t *testing.T) {
	body := "event: response.created\n" + `data: {"type":"response.created","response":{"status":"in_progress"}}` + "\n\n" +
		"event: response.reasoning_summary_text.delta\n" + `data: {"delta":"hm"}` + "\n\n" +
		"event: response.output_text.delta\n" + `data: {"delta":"Hi"}` + "\n\n"
	for name, b := range map[string]string{"LF": body, "CRLF": strings.ReplaceAll(body, "\n", "\r\n")} {
		r := run(t, call{path: "/responses", steps: []step{{data: b}}, opts: []Option{WithEventsAfterContent(-1)}})
		if got, want := r.span.chunkKinds(), []string{"lifecycle", "reasoning", "content"}; !slices.Equal(got, want) {
			t.Errorf("%s: kinds %v, want %v", name, got, want)
		}
	}
}

// A comment inside an event (after its data or event field) is no keep-alive.
func TestCommentInsideAnEvent(t *testing.T) {
	body := "data: " + chatContent("a") + "\n: note\n\n" +
		"event: x\n: note\ndata: [DONE]\n\n"
	r := run(t, call{path: "/chat/completions", steps: []step{{data: body}}, opts: []Option{WithEventsAfterContent(-1)}})
	if got := r.span.chunkKinds(); !slices.Equal(got, []string{"content", "lifecycle"}) {
		t.Errorf("kinds %v, want content, lifecycle", got)
	}
	if got := r.span.attr(AttrChunkCount).AsInt64(); got != 2 {
		t.Errorf("chunk count %d, want 2", got)
	}
}

// A data line longer than the line limit, arriving over many reads, is read
// as far as it goes: a 2 MiB content delta is content.
func TestLongDataLineIsContent(t *testing.T) {
	body := sse(chatContent(strings.Repeat("a", 2<<20)), "[DONE]")
	r := run(t, call{path: "/chat/completions", steps: []step{{data: body}}, maxRd: 64 << 10})
	if v := r.span.attr(AttrInstrumentError); v.Type() != attribute.INVALID {
		t.Fatalf("instrumentation error %q", v.AsString())
	}
	if got := r.span.chunkKinds(); !slices.Equal(got, []string{"content"}) {
		t.Errorf("kinds %v, want content", got)
	}
}

func TestEventsBeforeContentBound(t *testing.T) {
	steps := []step{{data: sse(chatRole)}}
	for i := 0; i < 5; i++ {
		steps = append(steps, step{wait: ms, data: ": ping\n\n"})
	}
	steps = append(steps, step{wait: ms, data: sse(chatContent("a"), "[DONE]")})
	for n, want := range map[int][]string{
		0: {"role", "content"}, // the first chunk and the first content always
		2: {"role", "keepalive", "content"},
	} {
		r := run(t, call{path: "/chat/completions", steps: steps, opts: []Option{WithEventsBeforeContent(n)}})
		if got := r.span.chunkKinds(); !slices.Equal(got, want) {
			t.Errorf("WithEventsBeforeContent(%d): kinds %v, want %v", n, got, want)
		}
	}
}

// An error event ends the span at its time, although the body goes on.
func TestErrorEventEndsTheSpanThen(t *testing.T) {
	r := run(t, call{path: "/chat/completions", steps: []step{
		{wait: 10 * ms, data: sse(chatContent("a"))},
		{wait: 90 * ms, data: sse(`{"error":{"message":"boom","type":"server_error"}}`)},
		{wait: 5 * time.Second, data: sse(chatContent("b"), "[DONE]")},
	}})
	s := r.span
	if d := s.end.Sub(s.start); d != 100*ms || s.ended != 1 {
		t.Errorf("span ended %d times, after %v; want once, at the error (100ms)", s.ended, d)
	}
	if got := s.attr(AttrChunkCount).AsInt64(); got != 2 {
		t.Errorf("chunk count %d, want 2 (nothing after the error)", got)
	}
}

// The gap summary: a stream that ended (no cut) has no pause after its last
// chunk; an idle cut's pause counts only when longer than the longest one;
// no content, no gap.
func TestMaxGapEdges(t *testing.T) {
	content := sse(chatContent("a"))
	eof := run(t, call{path: "/chat/completions", steps: []step{
		{wait: 100 * ms, data: content}, {wait: 100 * ms, data: content}, {wait: 5 * time.Second},
	}})
	if got := eof.span.attr(AttrChunkMaxGap).AsFloat64(); got != 0.1 {
		t.Errorf("eof: max gap %v, want 0.1", got)
	}
	cut := run(t, call{path: "/chat/completions", steps: []step{
		{wait: 100 * ms, data: content}, {wait: 500 * ms, data: content}, {wait: 100 * ms, err: timeoutErr{}},
	}})
	if got := cut.span.attr(AttrChunkMaxGap).AsFloat64(); got != 0.5 {
		t.Errorf("idle cut after a shorter pause: max gap %v, want 0.5", got)
	}
	none := run(t, call{path: "/chat/completions", steps: []step{{data: sse(chatRole, "[DONE]")}}})
	if v := none.span.attr(AttrChunkMaxGap); v.Type() != attribute.INVALID {
		t.Errorf("no content: max gap %v written", v.Emit())
	}
}

// roundTripClock runs one call through cfg with a fake clock; next advances
// it by headersAfter before the headers.
func roundTripClock(t *testing.T, ctx context.Context, ctype string, headersAfter time.Duration, steps []step, opts ...Option) (*http.Response, *fakeTracer) {
	t.Helper()
	clock := newFakeClock()
	tp, tr := newFakeProvider()
	cfg := newConfig(append([]Option{WithTracerProvider(tp)}, opts...))
	cfg.now = clock.now
	sb := &scriptBody{clock: clock, steps: steps}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	resp, err := cfg.roundTrip(req, func(*http.Request) (*http.Response, error) {
		clock.advance(headersAfter)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ctype}}, Body: sb}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp, tr
}

func TestHeadersEventTime(t *testing.T) {
	resp, tr := roundTripClock(t, context.Background(), "text/event-stream", 50*ms, []step{{data: sse("[DONE]")}})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s := tr.all()[0]
	for _, e := range s.events {
		if e.name == EventHeaders {
			if d := e.t.Sub(s.start); d != 50*ms {
				t.Errorf("headers event at %v, want 50ms", d)
			}
			return
		}
	}
	t.Error("no headers event")
}

// The completion marker read, the app's context ending before it closes the
// body does not make the call a cancel.
func TestCloseAfterMarkerWithContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	resp, tr := roundTripClock(t, ctx, "text/event-stream", 0, []step{{data: sse(chatContent("a"), "[DONE]")}, {wait: time.Second, data: sse(chatContent("late"))}})
	resp.Body.Read(make([]byte, 4096))
	cancel()
	resp.Body.Close()
	if got := tr.all()[0].attr(AttrStreamEnd).AsString(); got != endCompleted {
		t.Errorf("end %q, want %q", got, endCompleted)
	}
}

// A non-streamed body closed before its end ended as eof (no stream to close).
func TestNonStreamedCloseEarly(t *testing.T) {
	resp, tr := roundTripClock(t, context.Background(), "application/json", 0, []step{{data: `{"choices":[{"message":{"content":"hi"}}]}`}})
	resp.Body.Read(make([]byte, 5))
	resp.Body.Close()
	if got := tr.all()[0].attr(AttrStreamEnd).AsString(); got != endEOF {
		t.Errorf("end %q, want %q", got, endEOF)
	}
}

// A canceled context is a cancel whatever error the transport reports it with.
func TestCanceledContextWithOtherError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := run(t, call{path: "/chat/completions", ctx: ctx, steps: []step{{data: sse(chatContent("a"))}, {err: errors.New("net/http: request canceled")}}})
	s := r.span
	if got := s.attr(AttrStreamEnd).AsString(); got != endCanceled || s.status != codes.Unset || s.attr("error.type").Type() != attribute.INVALID {
		t.Errorf("end %q status %v error.type %v, want canceled, unset, none", got, s.status, s.attr("error.type").Emit())
	}
}

// A cancel wins over an error a lifecycle event's response object carried.
func TestCancelWinsOverAStreamedErrorObject(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := run(t, call{path: "/responses", ctx: ctx, steps: []step{
		{data: sse(`{"type":"response.in_progress","response":{"status":"in_progress","error":{"code":"x","message":"y"}}}`)},
		{err: context.Canceled}}})
	if got := r.span.attr(AttrStreamEnd).AsString(); got != endCanceled {
		t.Errorf("end %q, want %q", got, endCanceled)
	}
}

func TestHTTPErrorStatus(t *testing.T) {
	r := run(t, call{path: "/chat/completions", status: 400, ctype: "application/json", steps: []step{{data: `{"error":{"message":"bad"}}`}}})
	if got := r.span.attr("error.type").AsString(); got != "400" || r.span.status != codes.Error {
		t.Errorf("400: error.type %q status %v", got, r.span.status)
	}
	// An error answer sent as an event stream is no stream: no summary.
	sr := run(t, call{path: "/chat/completions", status: 400, steps: []step{{data: sse(`{"error":{"message":"bad"}}`)}}})
	if v := sr.span.attr(AttrChunkCount); v.Type() != attribute.INVALID {
		t.Errorf("400 event stream: chunk count %v written", v.Emit())
	}
}

func TestAnthropicCacheUsage(t *testing.T) {
	r := run(t, call{path: "/messages", steps: []step{{data: sse(
		"message_start\x00"+`{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}}`,
		"message_stop\x00"+`{"type":"message_stop"}`)}}})
	if r.span.attr("gen_ai.usage.cache_creation.input_tokens").AsInt64() != 5 || r.span.attr("gen_ai.usage.cache_read.input_tokens").AsInt64() != 100 {
		t.Errorf("cache usage %v", r.span.attrs)
	}
}

func TestFirstTokenLimitInternals(t *testing.T) {
	// A body that ended cleanly is no cut, even once the limit fired.
	r := &recorder{limit: &firstTokenLimit{err: &timeoutError{}}}
	r.limit.state.Store(limitFired)
	if err := r.cutErr(io.EOF); err != io.EOF {
		t.Errorf("cutErr(io.EOF) = %v after the limit fired", err)
	}
	// The caller's own cancel wins: the limit does not fire after it.
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	r = &recorder{ctx: parent}
	r.limitFirstToken(time.Millisecond)
	time.Sleep(30 * ms)
	if r.limit.fired() || errors.Is(context.Cause(r.ctx), ErrFirstTokenTimeout) {
		t.Error("the limit fired after the caller's cancel")
	}
	r.requestDone()
}

// ctxBody sends a malformed frame, then its content after wait (real time),
// unless the request's context ends first.
type ctxBody struct {
	ctx  context.Context
	wait time.Duration
	n    int
}

func (b *ctxBody) Read(p []byte) (int, error) {
	b.n++
	switch b.n {
	case 1:
		return copy(p, "data: {not json\n\n"), nil
	case 2:
		select {
		case <-time.After(b.wait):
			return copy(p, sse(chatContent("a"), "[DONE]")), nil
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	return 0, io.EOF
}

func (b *ctxBody) Close() error { return nil }

// Parsing stopped, the limit can no longer see content: it is stopped, and
// does not cut the call.
func TestParseFailureStopsTheLimit(t *testing.T) {
	tp, _ := newFakeProvider()
	mw := Middleware(WithTracerProvider(tp), WithFirstTokenTimeout(30*ms))
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	resp, err := mw(req, func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: &ctxBody{ctx: req.Context(), wait: 150 * ms}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Errorf("read error %v: the limit cut a call whose parsing had stopped", err)
	}
}

// A call that asked for no stream gets no limit, even while its headers wait.
func TestNoLimitBeforeHeadersWithoutStream(t *testing.T) {
	const limit = 100 * ms
	srv := limitServer(t, 250*ms, []frameAt{{260 * ms, `{"choices":[{"message":{"content":"hi"}}]}`}}, true, "application/json")
	r := limitCall(t, srv, context.Background(), `{"model":"m","stream":false}`, WithFirstTokenTimeout(limit))
	if r.err != nil {
		t.Fatalf("error %v: a call without stream was cut", r.err)
	}
}

func TestRequestSpanAttributes(t *testing.T) {
	r := run(t, call{path: "/completions", body: `{"model":"davinci","stream":true}`, steps: []step{{data: sse(`{"choices":[{"text":"hi"}]}`, "[DONE]")}},
		opts: []Option{WithProvider("mistral")}})
	s := r.span
	if s.name != "text_completion davinci" || s.attr("gen_ai.operation.name").AsString() != "text_completion" {
		t.Errorf("span %q operation %q", s.name, s.attr("gen_ai.operation.name").AsString())
	}
	if s.attr("gen_ai.provider.name").AsString() != "mistral" {
		t.Errorf("provider %q, want WithProvider's", s.attr("gen_ai.provider.name").AsString())
	}
	if s.attr("server.address").AsString() != "127.0.0.1" || s.attr("server.port").AsInt64() != 9 {
		t.Errorf("server %v:%v", s.attr("server.address").Emit(), s.attr("server.port").Emit())
	}

	long := run(t, call{path: "/chat/completions", body: `{"model":"` + strings.Repeat("m", 300) + `","stream":true}`, steps: []step{{data: sse("[DONE]")}}})
	if v := long.span.attr("gen_ai.request.model"); v.Type() != attribute.INVALID || long.span.name != "chat" {
		t.Errorf("a 300-byte model was kept: span %q", long.span.name)
	}
	for _, body := range []string{`{"model":"m"`, `{"stream":null`} {
		bad := run(t, call{path: "/chat/completions", body: body, steps: []step{{data: sse("[DONE]")}}})
		if v := bad.span.attr("gen_ai.request.stream"); v.Type() != attribute.INVALID {
			t.Errorf("body %s: stream %v, want unknown", body, v.Emit())
		}
	}
}

// A body over the sniff bound without GetBody is not read for its model,
// and reaches the next stage intact.
func TestLargeBodyIsNotSniffed(t *testing.T) {
	tp, tr := newFakeProvider()
	reqBody := `{"model":"big","stream":true,"pad":"` + strings.Repeat("x", maxSniff) + `"}`
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(reqBody))
	req.GetBody = nil
	var got []byte
	NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got, _ = io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(""))}, nil
	}), WithTracerProvider(tp)).RoundTrip(req)
	if string(got) != reqBody {
		t.Errorf("next got %d bytes, want %d", len(got), len(reqBody))
	}
	if v := tr.all()[0].attr("gen_ai.request.model"); v.Type() != attribute.INVALID {
		t.Errorf("model %v read from a body over the bound", v.Emit())
	}
}

// An INTERNAL span that names gen_ai.system is the caller's GenAI span; an
// unknown stream is not written on it.
func TestCallerInternalSpan(t *testing.T) {
	tp, tr := newFakeProvider()
	caller := &fakeSpan{kind: trace.SpanKindInternal, attrs: map[attribute.Key]attribute.Value{"gen_ai.system": attribute.StringValue("openai")}}
	ctx := trace.ContextWithSpan(context.Background(), caller)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(""))
	resp, err := Middleware(WithTracerProvider(tp))(req, func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(sse(chatContent("x"), "[DONE]")))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if len(tr.all()) != 0 || !slices.Equal(caller.chunkKinds(), []string{"content"}) {
		t.Errorf("%d own spans, caller events %v", len(tr.all()), caller.chunkKinds())
	}
	if v := caller.attr("gen_ai.request.stream"); v.Type() != attribute.INVALID {
		t.Errorf("stream %v written though unknown", v.Emit())
	}
}

// A sampled-out call passes through untouched, unless a first-token limit
// must see its first content.
func TestSampledOutPassesThrough(t *testing.T) {
	for _, limit := range []time.Duration{0, time.Minute} {
		body := io.NopCloser(strings.NewReader(sse(chatContent("x"))))
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(`{"stream":true}`))
		mw := Middleware(WithTracerProvider(noop.NewTracerProvider()), WithFirstTokenTimeout(limit))
		resp, _ := mw(req, func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}, nil
		})
		if wrapped := resp.Body != body; wrapped != (limit > 0) {
			t.Errorf("limit %v: body wrapped %v", limit, wrapped)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func TestResponseContentTypes(t *testing.T) {
	// The media type is case-insensitive.
	r := run(t, call{path: "/chat/completions", ctype: "Text/Event-Stream", steps: []step{{data: sse(chatContent("x"), "[DONE]")}}})
	if got := r.span.chunkKinds(); !slices.Equal(got, []string{"content"}) {
		t.Errorf("Text/Event-Stream: kinds %v", got)
	}
	// A body that is neither a stream nor JSON is not read.
	p := run(t, call{path: "/chat/completions", body: `{"stream":false}`, ctype: "text/plain", steps: []step{{data: `{"choices":[],"usage":{"prompt_tokens":9}}`}}})
	if v := p.span.attr("gen_ai.usage.input_tokens"); v.Type() != attribute.INVALID {
		t.Errorf("text/plain body read: input tokens %v", v.Emit())
	}
}

// A frame that ends after a member's comma is cut short: malformed, not a
// complete chunk (jscan's contract: malformed input sets bad).
func TestClassifyRejectsTrailingComma(t *testing.T) {
	for _, d := range []string{`{"choices":[{"delta":{"content":"x"}}],`, `{"choices":[{"delta":{"content":"x"}},`} {
		var f facts
		if _, ok := f.classify(formatChat, nil, []byte(d), false); ok {
			t.Errorf("%q accepted", d)
		}
	}
}
