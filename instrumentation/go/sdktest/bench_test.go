package sdktest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelcol-ttft/otelcol-ttft/instrumentation/go/ttftstream"
)

// BenchmarkSDKStream reads a 1,000-chunk Chat Completions stream from a
// loopback server through a real SDK, raw and with ttftstream installed
// (recording spans with the OTel SDK), in the same run.
func BenchmarkSDKStream(b *testing.B) {
	var stream strings.Builder
	w := chatWire{}
	stream.WriteString(w.frames(opRole, "m"))
	for i := 0; i < 997; i++ {
		stream.WriteString(w.frames(opContent, "m"))
	}
	stream.WriteString(w.frames(opFinish, "m") + w.frames(opUsage, "m") + w.frames(opDone, "m"))
	body := stream.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: base}

	openaiGo := func(mw bool) func(b *testing.B) {
		return func(b *testing.B) {
			opts := []option.RequestOption{option.WithBaseURL(srv.URL + "/v1/"), option.WithAPIKey("k"), option.WithHTTPClient(hc)}
			if mw {
				opts = append(opts, option.WithMiddleware(ttftstream.Middleware(ttftstream.WithTracerProvider(tp))))
			}
			client := openai.NewClient(opts...)
			params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				st := client.Chat.Completions.NewStreaming(context.Background(), params)
				n := 0
				for st.Next() {
					n++
				}
				if st.Err() != nil || n != 1000 {
					b.Fatalf("%d chunks, %v", n, st.Err())
				}
				st.Close()
			}
		}
	}
	goOpenAI := func(wrap bool) func(b *testing.B) {
		return func(b *testing.B) {
			cfg := goopenai.DefaultConfig("k")
			cfg.BaseURL = srv.URL + "/v1"
			cfg.HTTPClient = hc
			if wrap {
				cfg.HTTPClient = ttftstream.WrapClient(hc, ttftstream.WithTracerProvider(tp))
			}
			client := goopenai.NewClientWithConfig(cfg)
			req := goopenai.ChatCompletionRequest{Model: "m", Stream: true, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				st, err := client.CreateChatCompletionStream(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := st.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				st.Close()
				if n < 999 {
					b.Fatalf("%d chunks", n)
				}
			}
		}
	}
	b.Run("openai-go/raw", openaiGo(false))
	b.Run("openai-go/ttftstream", openaiGo(true))
	b.Run("go-openai/raw", goOpenAI(false))
	b.Run("go-openai/ttftstream", goOpenAI(true))
}
