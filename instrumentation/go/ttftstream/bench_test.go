package ttftstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
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
	} // The pair above swings with the machine's load; one raw and one wrapped
	// read per iteration, in alternating order, share it: the median of the
	// per-pair ratios is the overhead an SDK-like reader sees in-process.
	b.Run("sdk/interleaved", func(b *testing.B) {
		ratios := make([]float64, 0, b.N)
		raw := func() { sdkRead(bytes.NewReader(stream)) }
		wrapped := func() {
			resp, err := tr.RoundTrip(newReq())
			if err != nil {
				b.Fatal(err)
			}
			sdkRead(resp.Body)
			resp.Body.Close()
		}
		timed := func(f func()) time.Duration {
			t := time.Now()
			f()
			return time.Since(t)
		}
		for i := 0; i < b.N; i++ {
			var r, w time.Duration
			if i%2 == 0 {
				r, w = timed(raw), timed(wrapped)
			} else {
				w, r = timed(wrapped), timed(raw)
			}
			ratios = append(ratios, float64(w)/float64(r))
		}
		sort.Float64s(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "wrapped/raw")
	})
}
