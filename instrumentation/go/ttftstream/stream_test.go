package ttftstream

import (
	"bytes"
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
)

const ms = time.Millisecond

func chatContent(s string) string {
	return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
}

const (
	chatRole   = `{"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	chatFinish = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	chatUsage  = `{"choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":3}}`
)

// chatTimeline: role at 40 ms, a keep-alive at 100 ms, content at 300 ms,
// then content after 20, 250 (the longest pause) and 10 ms, finish, usage, [DONE].
func chatTimeline() []step {
	return []step{
		{wait: 40 * ms, data: sse(chatRole)},
		{wait: 60 * ms, data: ": keep-alive\n\n"},
		{wait: 200 * ms, data: sse(chatContent("Hel"))},
		{wait: 20 * ms, data: sse(chatContent("lo"))},
		{wait: 240 * ms, data: ": keep-alive\n\n"}, // does not end the pause
		{wait: 10 * ms, data: sse(chatContent(","))},
		{wait: 10 * ms, data: sse(chatContent(" world"))},
		{wait: 5 * ms, data: sse(chatFinish, chatUsage, "[DONE]")},
	}
}

func joined(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.data)
	}
	return b.String()
}

func TestChatStream(t *testing.T) {
	steps := chatTimeline()
	want := joined(steps)
	r := run(t, call{path: "/chat/completions", body: `{"model":"gpt-4.1","messages":[],"stream":true}`, steps: steps})
	if r.readErr != nil || string(r.read) != want {
		t.Fatalf("the SDK read %q, %v; want the bytes unchanged", r.read, r.readErr)
	}
	s := r.span
	if s == nil || len(r.spans) != 1 {
		t.Fatalf("spans = %d", len(r.spans))
	}
	if s.name != "chat gpt-4.1" || s.kind != trace.SpanKindClient || s.ended != 1 || !r.body.closed {
		t.Errorf("span %q kind %v ended %d, body closed %v", s.name, s.kind, s.ended, r.body.closed)
	}
	if got := s.chunkKinds(); !slices.Equal(got, []string{"role", "keepalive", "content"}) {
		t.Errorf("events = %v, want role, keepalive, content (bounded after content)", got)
	}
	var first time.Time
	for _, e := range s.events {
		if e.name == EventChunk && e.attrs[AttrChunkKind].AsString() == "content" {
			first = e.t
		}
	}
	if d := first.Sub(s.start); d != 300*ms {
		t.Errorf("first content at %v after start, want 300ms", d)
	}
	checks := map[string]any{
		AttrChunkCount:                   int64(10),
		AttrChunkContentCount:            int64(4),
		AttrChunkMaxGap:                  0.25,
		AttrChunkUnrecorded:              int64(7),
		AttrStreamEnd:                    "completed",
		"gen_ai.request.model":           "gpt-4.1",
		"gen_ai.request.stream":          true,
		"gen_ai.provider.name":           "openai",
		"gen_ai.operation.name":          "chat",
		"gen_ai.response.model":          "gpt-4.1",
		"gen_ai.usage.input_tokens":      int64(1500),
		"gen_ai.usage.output_tokens":     int64(3),
		"gen_ai.response.finish_reasons": []string{"stop"},
		"http.response.status_code":      int64(200),
	}
	for k, want := range checks {
		if got := s.attr(k).AsInterface(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if s.status != codes.Unset {
		t.Errorf("status = %v", s.status)
	}
	if d := s.end.Sub(s.start); d != 585*ms {
		t.Errorf("span lasted %v, want 585ms", d)
	}
}

// Every event recorded gives, through the derivation's own rule, the same
// gap and count as the summary attributes.
func TestSummaryMatchesEveryEvent(t *testing.T) {
	bounded := run(t, call{path: "/chat/completions", steps: chatTimeline()})
	all := run(t, call{path: "/chat/completions", steps: chatTimeline(), opts: []Option{WithEventsAfterContent(-1)}})
	gap, content := deriveLike(all.span.events)
	if got := bounded.span.attr(AttrChunkMaxGap).AsFloat64(); got != gap.Seconds() {
		t.Errorf("summary max gap %v, events give %v", got, gap.Seconds())
	}
	if got := bounded.span.attr(AttrChunkContentCount).AsInt64(); got != content {
		t.Errorf("summary content %d, events give %d", got, content)
	}
	if n := len(all.span.chunkKinds()); int64(n) != all.span.attr(AttrChunkCount).AsInt64() || all.span.attr(AttrChunkUnrecorded).AsInt64() != 0 {
		t.Errorf("every-event mode recorded %d of %d chunks", n, all.span.attr(AttrChunkCount).AsInt64())
	}
}

// deriveLike is the processor's rule (internal/derive): the longest pause
// between consecutive non-keep-alive chunks from the first content on, and
// the count of content, tool_call and reasoning chunks.
func deriveLike(events []fakeEvent) (time.Duration, int64) {
	var first, last time.Time
	var gap time.Duration
	var content int64
	for _, e := range events {
		if e.name != EventChunk {
			continue
		}
		k := e.attrs[AttrChunkKind].AsString()
		switch k {
		case "content", "tool_call", "reasoning":
			content++
			if first.IsZero() {
				first, last = e.t, e.t
				continue
			}
		case "keepalive":
			continue
		}
		if first.IsZero() {
			continue
		}
		if d := e.t.Sub(last); d > gap {
			gap = d
		}
		last = e.t
	}
	return gap, content
}

func TestFraming(t *testing.T) {
	base := run(t, call{path: "/chat/completions", steps: chatTimeline()})
	variants := map[string]func(string) string{
		"LF":   func(s string) string { return s },
		"CRLF": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"CR":   func(s string) string { return strings.ReplaceAll(s, "\n", "\r") },
	}
	for name, conv := range variants {
		for _, maxRd := range []int{0, 1, 2, 3, 7, 64} {
			steps := chatTimeline()
			for i := range steps {
				steps[i].data = conv(steps[i].data)
			}
			want := joined(steps)
			r := run(t, call{path: "/chat/completions", steps: steps, maxRd: maxRd})
			if string(r.read) != want {
				t.Fatalf("%s/%d: bytes changed", name, maxRd)
			}
			if !slices.Equal(r.span.chunkKinds(), base.span.chunkKinds()) {
				t.Errorf("%s/%d: events %v, want %v", name, maxRd, r.span.chunkKinds(), base.span.chunkKinds())
			}
			for _, k := range []string{AttrChunkCount, AttrChunkContentCount, AttrChunkMaxGap, AttrStreamEnd, "gen_ai.usage.input_tokens"} {
				if got, want := r.span.attr(k).Emit(), base.span.attr(k).Emit(); got != want {
					t.Errorf("%s/%d: %s = %s, want %s", name, maxRd, k, got, want)
				}
			}
		}
	}
}

func TestMultiLineDataAndFields(t *testing.T) {
	body := "id: 1\nretry: 10\ndata: {\"choices\":\ndata: [{\"delta\":{\"content\":\"x\"}}]}\n\n" +
		": comment inside nothing\n\n" +
		"event: ignored\n\n" + // no data: no event dispatched
		"data: [DONE]\n\n"
	r := run(t, call{path: "/chat/completions", steps: []step{{data: body}}})
	if got := r.span.chunkKinds(); !slices.Equal(got, []string{"content"}) {
		t.Errorf("events = %v", got)
	}
	if r.span.attr(AttrChunkCount).AsInt64() != 3 || r.span.attr(AttrStreamEnd).AsString() != "completed" {
		t.Errorf("count %d end %s", r.span.attr(AttrChunkCount).AsInt64(), r.span.attr(AttrStreamEnd).AsString())
	}
}

func TestBoundedEvents(t *testing.T) {
	const n = 10000
	steps := []step{{wait: 40 * ms, data: sse(chatRole)}}
	for i := 0; i < 150; i++ { // more pings before content than the bound
		steps = append(steps, step{wait: ms, data: ": ping\n\n"})
	}
	for i := 0; i < n; i++ {
		w := 2 * ms
		if i == 5000 {
			w = 900 * ms
		}
		steps = append(steps, step{wait: w, data: sse(chatContent("t"))})
	}
	steps = append(steps, step{data: sse(chatFinish, "[DONE]")})
	r := run(t, call{path: "/chat/completions", steps: steps})
	kinds := r.span.chunkKinds()
	if len(kinds) > 1+DefaultEventsBeforeContent+1 {
		t.Errorf("%d events for a %d-chunk stream; bound is %d", len(kinds), n, 2+DefaultEventsBeforeContent)
	}
	if kinds[len(kinds)-1] != "content" || kinds[0] != "role" {
		t.Errorf("first/last events %s/%s", kinds[0], kinds[len(kinds)-1])
	}
	if got := r.span.attr(AttrChunkContentCount).AsInt64(); got != n {
		t.Errorf("content count %d, want %d", got, n)
	}
	if got := r.span.attr(AttrChunkMaxGap).AsFloat64(); got != 0.9 {
		t.Errorf("max gap %v, want 0.9", got)
	}
	if got := r.span.attr(AttrChunkCount).AsInt64(); got != int64(1+150+n+2) {
		t.Errorf("chunks %d", got)
	}
	// Asked for every event, a call still records MaxChunkEvents at most:
	// past 128 the SDK would drop the oldest, the first content with them.
	all := run(t, call{path: "/chat/completions", steps: steps, opts: []Option{WithEventsAfterContent(-1), WithEventsBeforeContent(1000)}})
	kinds = all.span.chunkKinds()
	if len(kinds) != MaxChunkEvents-1 { // one kept for an error event
		t.Errorf("every-event mode: %d events, want %d", len(kinds), MaxChunkEvents-1)
	}
	first := -1
	for i, k := range kinds {
		if k == "content" {
			first = i
			break
		}
	}
	if first != MaxChunkEvents-2 || kinds[0] != "role" {
		t.Errorf("every-event mode: first content is event %d of %v...", first, kinds[:3])
	}
	if got := all.span.attr(AttrChunkUnrecorded).AsInt64(); got != int64(1+150+n+2-(MaxChunkEvents-1)) {
		t.Errorf("every-event mode: unrecorded %d", got)
	}
	if got := all.span.attr(AttrChunkMaxGap).AsFloat64(); got != 0.9 {
		t.Errorf("every-event mode: max gap %v, want 0.9", got)
	}
}

// TestEventLimitFromTheSDKsEnv: under OTEL_SPAN_EVENT_COUNT_LIMIT=32 a call
// records 24 ttft.chunk events at most, the first content among them, so an
// SDK that keeps 32 a span drops none.
func TestEventLimitFromTheSDKsEnv(t *testing.T) {
	t.Setenv(EventCountLimitEnv, "32")
	steps := []step{{wait: 40 * ms, data: sse(chatRole)}}
	for i := 0; i < 60; i++ { // more pings before content than the bound
		steps = append(steps, step{wait: ms, data: ": ping\n\n"})
	}
	for i := 0; i < 50; i++ {
		steps = append(steps, step{wait: ms, data: sse(chatContent("t"))})
	}
	steps = append(steps, step{data: sse(chatFinish, "[DONE]")})
	r := run(t, call{path: "/chat/completions", steps: steps, opts: []Option{WithEventsAfterContent(-1), WithEventsBeforeContent(1000)}})
	kinds := r.span.chunkKinds()
	if len(kinds) != 24-1 { // one kept for an error event
		t.Fatalf("%d events under a limit of 32, want 23", len(kinds))
	}
	if kinds[0] != "role" || kinds[22] != "content" || kinds[21] == "content" {
		t.Errorf("events %v: want the role first and the first content last", kinds)
	}
	if got := r.span.attr(AttrChunkUnrecorded).AsInt64(); got != int64(1+60+50+2-23) {
		t.Errorf("unrecorded %d", got)
	}
}

func TestChunkEventBound(t *testing.T) {
	for env, want := range map[string]int{
		"": MaxChunkEvents, "128": MaxChunkEvents, "1000": MaxChunkEvents, "-1": MaxChunkEvents, "x": MaxChunkEvents,
		"127": 119, "32": 24, " 16 ": 8, "10": 2, "4": 2, "0": 2,
	} {
		if got := chunkEventBound(env); got != want {
			t.Errorf("chunkEventBound(%q) = %d, want %d", env, got, want)
		}
	}
}

func TestOutcomes(t *testing.T) {
	content := sse(chatContent("a"))
	cases := []struct {
		name       string
		c          call
		cancel     bool
		end        string
		status     codes.Code
		errorType  string
		readErrIs  error
		wantEvents []string
	}{
		{name: "closed without completion marker",
			c:   call{path: "/chat/completions", steps: []step{{data: sse(chatRole)}, {data: content}}},
			end: endEOF, wantEvents: []string{"role", "content"}},
		{name: "mid-stream error event",
			c:   call{path: "/chat/completions", steps: []step{{data: content}, {data: sse(`{"error":{"message":"upstream died","type":"server_error"}}`)}}},
			end: endStreamErr, status: codes.Error, errorType: "server_error", wantEvents: []string{"content", "error"}},
		{name: "anthropic error event",
			c: call{path: "/messages", steps: []step{{data: sse("message_start\x00"+`{"type":"message_start","message":{}}`,
				"error\x00"+`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}}},
			end: endStreamErr, status: codes.Error, errorType: "overloaded_error", wantEvents: []string{"lifecycle", "error"}},
		{name: "connection lost",
			c:   call{path: "/chat/completions", steps: []step{{data: content}, {err: io.ErrUnexpectedEOF}}},
			end: endError, status: codes.Error, errorType: "*errors.errorString", readErrIs: io.ErrUnexpectedEOF, wantEvents: []string{"content"}},
		{name: "timeout before content",
			c:   call{path: "/chat/completions", steps: []step{{data: sse(chatRole)}, {err: context.DeadlineExceeded}}},
			end: endTimeout, status: codes.Error, errorType: "timeout", readErrIs: context.DeadlineExceeded, wantEvents: []string{"role"}},
		{name: "deadline after content",
			c:   call{path: "/chat/completions", steps: []step{{data: content}, {err: context.DeadlineExceeded}}},
			end: endTimeout, status: codes.Error, errorType: "deadline_exceeded", readErrIs: context.DeadlineExceeded, wantEvents: []string{"content"}},
		{name: "caller canceled",
			c:      call{path: "/chat/completions", steps: []step{{data: content}, {err: context.Canceled}}},
			cancel: true, end: endCanceled, readErrIs: context.Canceled, wantEvents: []string{"content"}},
		{name: "rate limited",
			c:   call{path: "/chat/completions", status: 429, ctype: "application/json", steps: []step{{data: `{"error":{"message":"slow down"}}`}}},
			end: endEOF, status: codes.Error, errorType: "429"},
		{name: "not streamed",
			c:   call{path: "/chat/completions", body: `{"model":"m","stream":false}`, ctype: "application/json", steps: []step{{data: `{"choices":[{"message":{"content":"hi"}}]}`}}},
			end: endEOF},
		{name: "app stops reading",
			c:   call{path: "/chat/completions", noClose: true, steps: []step{{data: content}}},
			end: endEOF, wantEvents: []string{"content"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cancel {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				tc.c.ctx = ctx
			}
			r := run(t, tc.c)
			if tc.readErrIs != nil && !errors.Is(r.readErr, tc.readErrIs) {
				t.Errorf("read error %v, want %v", r.readErr, tc.readErrIs)
			}
			want := joined(tc.c.steps)
			if string(r.read) != want {
				t.Errorf("bytes changed: %q", r.read)
			}
			s := r.span
			if got := s.attr(AttrStreamEnd).AsString(); got != tc.end {
				t.Errorf("end = %q, want %q", got, tc.end)
			}
			if s.status != tc.status {
				t.Errorf("status = %v (%s), want %v", s.status, s.statusMsg, tc.status)
			}
			if got := s.attr("error.type").AsString(); got != tc.errorType {
				t.Errorf("error.type = %q, want %q", got, tc.errorType)
			}
			if got := s.chunkKinds(); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %v, want %v", got, tc.wantEvents)
			}
			if s.ended != 1 {
				t.Errorf("ended %d times", s.ended)
			}
		})
	}
}

func TestClosedEarly(t *testing.T) {
	clock := newFakeClock()
	tp, tr := newFakeProvider()
	cfg := newConfig([]Option{WithTracerProvider(tp)})
	cfg.now = clock.now
	sb := &scriptBody{clock: clock, steps: []step{{data: sse(chatContent("a"), chatContent("b"))}}}
	resp, err := cfg.roundTrip(httpPost("/v1/chat/completions"), func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: sb}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	resp.Body.Read(buf)
	resp.Body.Close()
	resp.Body.Close()
	s := tr.all()[0]
	if s.attr(AttrStreamEnd).AsString() != endClosed || s.ended != 1 || !sb.closed {
		t.Errorf("end %q ended %d closed %v", s.attr(AttrStreamEnd).AsString(), s.ended, sb.closed)
	}
}

func TestParseFailureStopsInstrumenting(t *testing.T) {
	steps := []step{{data: sse(chatRole)}, {data: "data: {\"choices\":[{]\n\n"}, {data: sse(chatContent("x"), "[DONE]")}}
	r := run(t, call{path: "/chat/completions", steps: steps})
	if string(r.read) != joined(steps) {
		t.Fatal("bytes changed")
	}
	s := r.span
	if got := s.attr(AttrInstrumentError).AsString(); got != "malformed chat.completions event" {
		t.Errorf("instrumentation error = %q", got)
	}
	if got := s.chunkKinds(); !slices.Equal(got, []string{"role"}) {
		t.Errorf("events after the failure: %v", got)
	}
	if s.attr(AttrChunkCount).Type() != attribute.INVALID {
		t.Error("a summary was written from a partial parse")
	}
}

func TestPassThrough(t *testing.T) {
	// Not an LLM endpoint: no span, the response is the one next returned.
	tp, tr := newFakeProvider()
	body := io.NopCloser(strings.NewReader("x"))
	mw := Middleware(WithTracerProvider(tp))
	resp, _ := mw(httpPost("/v1/embeddings"), func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: body}, nil
	})
	if resp.Body != body || len(tr.all()) != 0 {
		t.Errorf("embeddings request instrumented")
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:9/v1/chat/completions", nil)
	resp, _ = mw(req, func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 200, Body: body}, nil })
	if resp.Body != body || len(tr.all()) != 0 {
		t.Errorf("GET instrumented")
	}
}

func TestRequestBodyIsIntact(t *testing.T) {
	tp, tr := newFakeProvider()
	const reqBody = `{"messages":[{"role":"user","content":"hi"}],"model":"claude-x","stream":true}`
	for _, getBody := range []bool{true, false} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/v1/messages", strings.NewReader(reqBody))
		if !getBody {
			req.GetBody = nil
			req.Body = io.NopCloser(strings.NewReader(reqBody))
		}
		var got []byte
		NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got, _ = io.ReadAll(r.Body)
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(""))}, nil
		}), WithTracerProvider(tp)).RoundTrip(req)
		if string(got) != reqBody {
			t.Errorf("GetBody=%v: next got %q", getBody, got)
		}
	}
	for _, s := range tr.all() {
		if s.name != "chat claude-x" || s.attr("gen_ai.provider.name").AsString() != "anthropic" || !s.attr("gen_ai.request.stream").AsBool() {
			t.Errorf("span %q %v", s.name, s.attrs)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCallerSpanAndNesting(t *testing.T) {
	tp, tr := newFakeProvider()
	caller := &fakeSpan{kind: trace.SpanKindClient, attrs: map[attribute.Key]attribute.Value{"gen_ai.operation.name": attribute.StringValue("chat")}}
	ctx := trace.ContextWithSpan(context.Background(), caller)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	// A middleware over a transport: recorded once.
	inner := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(sse(chatRole, chatContent("x"), "[DONE]")))}, nil
	}), WithTracerProvider(tp))
	resp, err := Middleware(WithTracerProvider(tp))(req, inner.RoundTrip)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if len(tr.all()) != 0 {
		t.Errorf("started %d spans beside the caller's GenAI span", len(tr.all()))
	}
	if got := caller.chunkKinds(); !slices.Equal(got, []string{"role", "content"}) {
		t.Errorf("caller span events %v", got)
	}
	if caller.ended != 0 {
		t.Error("ended the caller's span")
	}
}

func TestFormatsEndToEnd(t *testing.T) {
	cases := []struct {
		path  string
		body  string
		kinds []string
		end   string
	}{
		{"/responses", sse(
			"response.created\x00"+`{"type":"response.created","response":{"model":"gpt-5","status":"in_progress"}}`,
			"response.reasoning_summary_text.delta\x00"+`{"type":"response.reasoning_summary_text.delta","delta":"hm"}`,
			"response.output_text.delta\x00"+`{"type":"response.output_text.delta","delta":"Hi"}`,
			"response.completed\x00"+`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":1}}}`),
			[]string{"lifecycle", "reasoning"}, endCompleted},
		{"/messages", sse(
			"message_start\x00"+`{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":3}}}`,
			"ping\x00"+`{"type": "ping"}`,
			"content_block_start\x00"+`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use"}}`,
			"content_block_delta\x00"+`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`,
			"message_delta\x00"+`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`,
			"message_stop\x00"+`{"type":"message_stop"}`),
			[]string{"lifecycle", "keepalive", "tool_call"}, endCompleted}, // the tool_use block names the tool
		{"beta/models/gemini-2.5-flash:streamGenerateContent", sse(
			`{"candidates":[{"content":{"parts":[{"text":"hm","thought":true}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2}}`),
			[]string{"reasoning"}, endCompleted},
	}
	for _, c := range cases {
		r := run(t, call{path: c.path, steps: []step{{data: c.body}}})
		if !bytes.Equal(r.read, []byte(c.body)) {
			t.Errorf("%s: bytes changed", c.path)
		}
		if got := r.span.chunkKinds(); !slices.Equal(got, c.kinds) {
			t.Errorf("%s: events %v, want %v", c.path, got, c.kinds)
		}
		if got := r.span.attr(AttrStreamEnd).AsString(); got != c.end {
			t.Errorf("%s: end %s", c.path, got)
		}
		if r.span.attr("gen_ai.response.finish_reasons").Type() == attribute.INVALID {
			t.Errorf("%s: no finish reason", c.path)
		}
	}
}

// Claude on Vertex AI: the Anthropic SDKs' Vertex clients post the Messages
// API to a publisher path, the model in the path, and read the same SSE.
func TestClaudeOnVertex(t *testing.T) {
	body := sse(
		"message_start\x00"+`{"type":"message_start","message":{"model":"claude-sonnet-4-5@20250929","usage":{"input_tokens":3}}}`,
		"ping\x00"+`{"type": "ping"}`,
		"content_block_start\x00"+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta\x00"+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		"message_delta\x00"+`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		"message_stop\x00"+`{"type":"message_stop"}`)
	r := run(t, call{path: "/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
		body: `{"anthropic_version":"vertex-2023-10-16","stream":true,"max_tokens":64,"messages":[]}`, steps: []step{{data: body}}})
	if r.span == nil {
		t.Fatal("no span")
	}
	if got := r.span.chunkKinds(); !slices.Equal(got, []string{"lifecycle", "keepalive", "lifecycle", "content"}) {
		t.Errorf("events %v", got)
	}
	for k, want := range map[string]string{"gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": "claude-sonnet-4-5@20250929"} {
		if got := r.span.attr(k).AsString(); got != want {
			t.Errorf("%s %q, want %q", k, got, want)
		}
	}
	if !r.span.attr("gen_ai.request.stream").AsBool() || r.span.attr(AttrStreamEnd).AsString() != endCompleted {
		t.Errorf("stream %v end %v", r.span.attr("gen_ai.request.stream"), r.span.attr(AttrStreamEnd))
	}
}

func TestNonStreamedResponse(t *testing.T) {
	cases := []struct{ path, body, finish string }{
		{"/chat/completions", `{"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`, "stop"},
		{"/messages", `{"type":"message","model":"claude","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":1}}`, "end_turn"},
		{"/responses", `{"object":"response","status":"completed","model":"gpt-5","usage":{"input_tokens":9,"output_tokens":1}}`, "completed"},
	}
	for _, c := range cases {
		r := run(t, call{path: c.path, body: `{"stream":false}`, ctype: "application/json", steps: []step{{wait: 200 * ms, data: c.body}}})
		s := r.span
		if string(r.read) != c.body {
			t.Fatalf("%s: bytes changed", c.path)
		}
		if got := s.attr("gen_ai.response.finish_reasons").AsStringSlice(); !slices.Equal(got, []string{c.finish}) {
			t.Errorf("%s: finish reasons %v", c.path, got)
		}
		if s.attr("gen_ai.usage.input_tokens").AsInt64() != 9 || s.attr("gen_ai.usage.output_tokens").AsInt64() != 1 {
			t.Errorf("%s: usage %v", c.path, s.attrs)
		}
		if len(s.chunkKinds()) != 0 || s.attr("gen_ai.request.stream").AsBool() || s.end.Sub(s.start) != 200*ms {
			t.Errorf("%s: events %v stream %v duration %v", c.path, s.chunkKinds(), s.attr("gen_ai.request.stream").AsBool(), s.end.Sub(s.start))
		}
	}
}

// Streams from OpenAI-compatible servers: a UTF-8 byte order mark before
// the first field (the SSE decoder strips it), and a Responses stream
// ended by Chat's data: [DONE] after response.completed. Neither loses an
// event or the summary.
func TestCompatibleServersFraming(t *testing.T) {
	bom := run(t, call{path: "/chat/completions", body: `{"model":"m","stream":true}`, steps: []step{{data: "\uFEFF" + sse(
		`{"choices":[{"delta":{"content":"Hi"}}]}`, `[DONE]`)}}})
	if got := bom.span.chunkKinds(); !slices.Equal(got, []string{"content"}) {
		t.Errorf("after a BOM: events %v, want [content]", got)
	}
	done := run(t, call{path: "/responses", body: `{"model":"m","stream":true}`, steps: []step{{data: sse(
		"response.output_text.delta\x00"+`{"type":"response.output_text.delta","delta":"Hi"}`,
		"response.completed\x00"+`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":1}}}`,
		`[DONE]`)}}})
	if v := done.span.attr(AttrInstrumentError); v.Type() != attribute.INVALID {
		t.Errorf("a trailing [DONE]: instrumentation error %q", v.AsString())
	}
	if got := done.span.attr(AttrStreamEnd).AsString(); got != endCompleted {
		t.Errorf("a trailing [DONE]: end %s", got)
	}
	if got := done.span.attr(AttrChunkCount).AsInt64(); got != 3 {
		t.Errorf("a trailing [DONE]: %d chunks counted, want 3", got)
	}
}
