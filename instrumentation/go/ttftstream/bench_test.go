package ttftstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchStream is a 1,000-chunk Chat Completions stream as a real server
// sends it: a role chunk, 998 content chunks, finish, usage, [DONE].
func benchStream() []byte {
	var b strings.Builder
	b.WriteString(sse(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`))
	for i := 0; i < 998; i++ {
		b.WriteString(sse(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}`))
	}
	b.WriteString(sse(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":998,"total_tokens":1008}}`, "[DONE]"))
	return []byte(b.String())
}

// sdkRead reads a stream the way the Go SDKs do: lines through a bufio
// reader, each data payload decoded into a chunk struct.
func sdkRead(body io.Reader) int {
	type chunk struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	sc := bufio.NewScanner(body)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) || bytes.Equal(line, []byte("data: [DONE]")) {
			continue
		}
		var c chunk
		if json.Unmarshal(line[6:], &c) == nil {
			n++
		}
	}
	return n
}

func BenchmarkStream(b *testing.B) {
	stream := benchStream()
	tp, _ := newFakeProvider()
	tr := NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(stream))}, nil
	}), WithTracerProvider(tp))
	reqBody := `{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	newReq := func() *http.Request {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader(reqBody))
		return req
	}
	for _, mode := range []struct {
		name string
		read func(io.Reader) int
	}{{"sdk", sdkRead}, {"bytes", func(r io.Reader) int { n, _ := io.Copy(io.Discard, r); return int(n) }}} {
		b.Run(mode.name+"/raw", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				mode.read(io.NopCloser(bytes.NewReader(stream)))
			}
		})
		b.Run(mode.name+"/wrapped", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp, err := tr.RoundTrip(newReq())
				if err != nil {
					b.Fatal(err)
				}
				mode.read(resp.Body)
				resp.Body.Close()
			}
		})
	}
}
