package sdktest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/otelcol-ttft/otelcol-ttft/instrumentation/go/ttftstream"
)

// A driver makes one call of scenario sc through a real SDK and reports when
// the SDK handed the app its first content, reasoning or tool-call delta.
// onContent runs at that moment (the abort scenario cancels there).
type driver struct {
	name string
	run  func(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (first time.Time, err error)
}

func model(sc scenario) string { return "scn-" + sc.name }

var drivers = []driver{
	{"openai-go", runOpenAIGoChat},
	{"openai-go/responses", runOpenAIGoResponses},
	{"anthropic-sdk-go", runAnthropic},
	{"go-openai", runGoOpenAI},
	{"langchaingo", runLangchain},
}

// The openai-go and anthropic-sdk-go drivers install ttftstream as SDK
// middleware; go-openai and langchaingo take an *http.Client, so they get
// the RoundTripper.

func runOpenAIGoChat(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (time.Time, error) {
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0),
		option.WithHTTPClient(hc), option.WithMiddleware(ttftstream.Middleware(opts...)))
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(model(sc)),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
	if !sc.stream {
		_, err := client.Chat.Completions.New(ctx, params)
		return time.Time{}, err
	}
	var first time.Time
	st := client.Chat.Completions.NewStreaming(ctx, params)
	defer st.Close()
	for st.Next() {
		c := st.Current()
		if first.IsZero() && len(c.Choices) > 0 {
			d := c.Choices[0].Delta
			if d.Content != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || strings.Contains(d.RawJSON(), `"reasoning_content"`) {
				first = time.Now()
				onContent()
			}
		}
	}
	return first, st.Err()
}

func runOpenAIGoResponses(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (time.Time, error) {
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0),
		option.WithHTTPClient(hc), option.WithMiddleware(ttftstream.Middleware(opts...)))
	params := responses.ResponseNewParams{
		Model: model(sc),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	}
	if !sc.stream {
		_, err := client.Responses.New(ctx, params)
		return time.Time{}, err
	}
	var first time.Time
	st := client.Responses.NewStreaming(ctx, params)
	defer st.Close()
	for st.Next() {
		switch st.Current().Type {
		case "response.output_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta":
			if first.IsZero() {
				first = time.Now()
				onContent()
			}
		}
	}
	return first, st.Err()
}

func runAnthropic(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (time.Time, error) {
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("test"), aoption.WithMaxRetries(0),
		aoption.WithHTTPClient(hc), aoption.WithMiddleware(ttftstream.Middleware(opts...)))
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(model(sc)),
		MaxTokens: 256,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
	if !sc.stream {
		_, err := client.Messages.New(ctx, params)
		return time.Time{}, err
	}
	var first time.Time
	st := client.Messages.NewStreaming(ctx, params)
	defer st.Close()
	for st.Next() {
		ev := st.Current()
		if first.IsZero() && ev.Type == "content_block_delta" {
			switch ev.Delta.Type {
			case "text_delta", "thinking_delta", "input_json_delta":
				first = time.Now()
				onContent()
			}
		}
	}
	return first, st.Err()
}

func runGoOpenAI(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (time.Time, error) {
	cfg := goopenai.DefaultConfig("test")
	cfg.BaseURL = base + "/v1"
	cfg.HTTPClient = ttftstream.WrapClient(hc, opts...)
	client := goopenai.NewClientWithConfig(cfg)
	req := goopenai.ChatCompletionRequest{
		Model:    model(sc),
		Messages: []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "hi"}},
		Stream:   sc.stream,
	}
	if !sc.stream {
		_, err := client.CreateChatCompletion(ctx, req)
		return time.Time{}, err
	}
	st, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return time.Time{}, err
	}
	defer st.Close()
	var first time.Time
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return first, nil
		}
		if err != nil {
			return first, err
		}
		if first.IsZero() && len(resp.Choices) > 0 {
			d := resp.Choices[0].Delta
			if d.Content != "" || d.ReasoningContent != "" || len(d.ToolCalls) > 0 || d.FunctionCall != nil || d.Refusal != "" {
				first = time.Now()
				onContent()
			}
		}
	}
}

func runLangchain(ctx context.Context, base string, hc *http.Client, opts []ttftstream.Option, sc scenario, onContent func()) (time.Time, error) {
	llm, err := lcopenai.New(lcopenai.WithBaseURL(base+"/v1"), lcopenai.WithToken("test"), lcopenai.WithModel(model(sc)),
		lcopenai.WithHTTPClient(ttftstream.WrapClient(hc, opts...)))
	if err != nil {
		return time.Time{}, err
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	if !sc.stream {
		_, err := llm.GenerateContent(ctx, msgs)
		return time.Time{}, err
	}
	var first time.Time
	_, err = llm.GenerateContent(ctx, msgs, llms.WithStreamingReasoningFunc(func(_ context.Context, reasoning, chunk []byte) error {
		if first.IsZero() && (len(reasoning) > 0 || len(chunk) > 0) {
			first = time.Now()
			onContent()
		}
		return nil
	}))
	return first, err
}
