package sdktest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

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

	// One stream read through each SDK, raw or with ttftstream.
	openaiGo := func(mw bool) func(testing.TB) {
		opts := []option.RequestOption{option.WithBaseURL(srv.URL + "/v1/"), option.WithAPIKey("k"), option.WithHTTPClient(hc)}
		if mw {
			opts = append(opts, option.WithMiddleware(ttftstream.Middleware(ttftstream.WithTracerProvider(tp))))
		}
		client := openai.NewClient(opts...)
		params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
		return func(b testing.TB) {
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
	goOpenAI := func(wrap bool) func(testing.TB) {
		cfg := goopenai.DefaultConfig("k")
		cfg.BaseURL = srv.URL + "/v1"
		cfg.HTTPClient = hc
		if wrap {
			cfg.HTTPClient = ttftstream.WrapClient(hc, ttftstream.WithTracerProvider(tp))
		}
		client := goopenai.NewClientWithConfig(cfg)
		req := goopenai.ChatCompletionRequest{Model: "m", Stream: true, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		return func(b testing.TB) {
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
	loop := func(read func(testing.TB)) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				read(b)
			}
		}
	}
	b.Run("openai-go/raw", loop(openaiGo(false)))
	b.Run("openai-go/ttftstream", loop(openaiGo(true)))
	b.Run("go-openai/raw", loop(goOpenAI(false)))
	b.Run("go-openai/ttftstream", loop(goOpenAI(true)))
	// On a shared machine the runs above swing by tens of percent from run
	// to run; interleaving a raw and a wrapped read in one loop exposes both
	// to the same load, and the median of the per-pair ratios is the overhead.
	b.Run("openai-go/interleaved", interleaved(openaiGo(false), openaiGo(true)))
	b.Run("go-openai/interleaved", interleaved(goOpenAI(false), goOpenAI(true)))
}

// interleaved times one raw and one wrapped read per iteration, in
// alternating order, and reports the median of wrapped/raw.
func interleaved(raw, wrapped func(testing.TB)) func(*testing.B) {
	return func(b *testing.B) {
		ratios := make([]float64, 0, b.N)
		timed := func(f func(testing.TB)) time.Duration {
			t := time.Now()
			f(b)
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
	}
}
