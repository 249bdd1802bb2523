package ttftstream

import (
	"context"
	"slices"
	"testing"
	"time"
)

// OpenAI's Responses API sends {"type":"keepalive","sequence_number":n}
// events during long requests (openai/openai-node#1964,
// openai-php/client#732): a keep-alive, which must neither count as a chunk
// that ends a pause (ttft.chunk.max_gap) nor be told apart from an SSE
// comment.
func TestResponsesKeepaliveEvent(t *testing.T) {
	var f facts
	k, ok := f.classify(formatResponses, []byte("keepalive"), []byte(`{"type":"keepalive","sequence_number":7}`), false)
	if !ok || k != kindKeepalive {
		t.Errorf("responses keepalive event: kind %v ok %v, want keepalive", k, ok)
	}
	const s = time.Second
	delta := func(d string) string {
		return "response.output_text.delta\x00" + `{"type":"response.output_text.delta","delta":"` + d + `"}`
	}
	ka := "keepalive\x00" + `{"type":"keepalive","sequence_number":9}`
	r := run(t, call{path: "/responses", body: `{"model":"m","stream":true}`, opts: []Option{WithEventsAfterContent(-1)}, steps: []step{
		{wait: 100 * time.Millisecond, data: sse(delta("Hi"))},
		{wait: 10 * s, data: sse(ka)},
		{wait: 10 * s, data: sse(ka)},
		{wait: 10 * s, data: sse(delta(" there"))},
		{data: sse("response.completed\x00" + `{"type":"response.completed","response":{"status":"completed"}}`)},
	}})
	if got, want := r.span.chunkKinds(), []string{"content", "keepalive", "keepalive", "content", "lifecycle"}; !slices.Equal(got, want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
	if got := r.span.attr(AttrChunkMaxGap).AsFloat64(); got != 30 {
		t.Errorf("ttft.chunk.max_gap = %v s, want 30 s (the keep-alives do not end the pause)", got)
	}
}

// timeoutErr is a network read timeout (net.Error with Timeout true).
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "read: i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestIdleCutKeepsThePauseItWasCutIn: a stream a read timeout cut 20 s
// after its last content chunk paused at least 20 s: ttft.chunk.max_gap
// says so (the collector censors the idle window there), not the 0.5 s
// between its chunks. The caller's own deadline after content is no idle
// cut: its gaps stay as they were.
func TestIdleCutKeepsThePauseItWasCutIn(t *testing.T) {
	content := sse(chatContent("a"))
	for _, tc := range []struct {
		name string
		err  error
		want float64
	}{
		{"read timeout", timeoutErr{}, 20},
		{"caller's deadline", context.DeadlineExceeded, 0.5},
	} {
		r := run(t, call{path: "/chat/completions", steps: []step{
			{wait: 100 * time.Millisecond, data: content},
			{wait: 500 * time.Millisecond, data: content},
			{wait: 20 * time.Second, err: tc.err},
		}})
		if got := r.span.attr(AttrChunkMaxGap).AsFloat64(); got != tc.want {
			t.Errorf("%s: ttft.chunk.max_gap = %v s, want %v s", tc.name, got, tc.want)
		}
	}
}
