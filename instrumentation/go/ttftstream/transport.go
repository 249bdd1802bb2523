package ttftstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Next is the rest of the chain a Middleware hands the request to: the same
// type as option.MiddlewareNext of openai-go and anthropic-sdk-go.
type Next = func(*http.Request) (*http.Response, error)

// Middleware returns the SDK middleware shape that openai-go and
// anthropic-sdk-go accept through option.WithMiddleware.
func Middleware(opts ...Option) func(*http.Request, Next) (*http.Response, error) {
	c := newConfig(opts)
	return c.roundTrip
}

// Transport is an http.RoundTripper that instruments LLM requests and
// passes every other request through untouched.
type Transport struct {
	base http.RoundTripper
	cfg  *config
}

// NewTransport wraps base (nil: http.DefaultTransport).
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{base: base, cfg: newConfig(opts)}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.cfg.roundTrip(req, t.base.RoundTrip)
}

// WrapClient returns a copy of c (nil: a new client) whose transport is
// wrapped by NewTransport.
func WrapClient(c *http.Client, opts ...Option) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.Transport = NewTransport(out.Transport, opts...)
	return &out
}

// activeKey marks a context whose request is already instrumented, so a
// middleware and a transport installed together record it once.
type activeKey struct{}

// endpoint is what the request line says.
type endpoint struct {
	format    format
	operation string
	provider  string
	model     string
	stream    bool // known streamed from the URL (Gemini)
}

func classifyRequest(req *http.Request) endpoint {
	if req.Method != http.MethodPost || req.URL == nil {
		return endpoint{}
	}
	p := req.URL.Path
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return endpoint{format: formatChat, operation: "chat", provider: "openai"}
	case strings.HasSuffix(p, "/completions"):
		return endpoint{format: formatChat, operation: "text_completion", provider: "openai"}
	case strings.HasSuffix(p, "/responses"):
		return endpoint{format: formatResponses, operation: "chat", provider: "openai"}
	case strings.HasSuffix(p, "/messages") && !strings.Contains(p, "/threads/"):
		// Not OpenAI Assistants' POST /threads/{id}/messages, which adds a
		// message to a thread and calls no model.
		return endpoint{format: formatAnthropic, operation: "chat", provider: "anthropic"}
	}
	if i := strings.LastIndexByte(p, ':'); i > 0 {
		var e endpoint
		switch method := p[i+1:]; method {
		case "streamGenerateContent", "generateContent":
			e = endpoint{format: formatGemini, operation: "generate_content", provider: "gcp.gemini",
				stream: method == "streamGenerateContent"}
		case "streamRawPredict", "rawPredict":
			// Claude on Vertex AI: the Anthropic Messages API, and its
			// stream, under a Vertex publisher path (the Anthropic SDKs'
			// Vertex clients); other publishers' raw predictions are no
			// Messages API.
			if !strings.Contains(p[:i], "/publishers/anthropic/models/") {
				return endpoint{}
			}
			e = endpoint{format: formatAnthropic, operation: "chat", provider: "gcp.vertex_ai",
				stream: method == "streamRawPredict"}
		default:
			return endpoint{}
		}
		if j := strings.LastIndex(p[:i], "/models/"); j >= 0 {
			e.model = p[j+len("/models/") : i]
		}
		return e
	}
	return endpoint{}
}

// maxSniff bounds how much of a request body is read for model and stream.
const maxSniff = 1 << 20

// sniffBody reads "model" and "stream" from a JSON request body without
// consuming it: through GetBody when the request has one, else by reading a
// body of known, bounded length and handing the next stage a copy.
func sniffBody(req *http.Request) (out *http.Request, model string, stream, streamKnown bool) {
	out = req
	var b []byte
	switch {
	case req.GetBody != nil:
		rc, err := req.GetBody()
		if err != nil {
			return
		}
		b, err = io.ReadAll(io.LimitReader(rc, maxSniff+1))
		rc.Close()
		if err != nil || len(b) > maxSniff {
			return
		}
	case req.Body != nil && req.Body != http.NoBody && req.ContentLength > 0 && req.ContentLength <= maxSniff:
		var err error
		b, err = io.ReadAll(io.LimitReader(req.Body, req.ContentLength))
		req.Body.Close()
		out = req.Clone(req.Context())
		body := b
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if err != nil {
			// The next stage sees the bytes that could be read, then the error.
			out.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			return
		}
	default:
		return
	}
	s := jscan{b: b}
	if !s.enter('{') {
		return
	}
	// The APIs stream only when asked: a readable body without "stream" is not streamed.
	defer func() {
		if !s.bad {
			streamKnown = true
		}
	}()
	for s.more('}') {
		switch string(s.key()) {
		case "model":
			if m, ok := s.strValue(); ok && len(m) <= 256 {
				model = string(m)
			}
		case "stream":
			c := s.peek()
			stream = s.isTrue()
			streamKnown = c == 't' || c == 'f'
		default:
			s.skip()
		}
	}
	return
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// readOnlySpan is the part of the SDK's span that tells whether the active
// span is a GenAI call (the API alone cannot read attributes).
type readOnlySpan interface {
	SpanKind() trace.SpanKind
	Attributes() []attribute.KeyValue
}

// callerSpan returns the active span when it is a recording GenAI CLIENT or
// INTERNAL span that the caller started for this call.
func callerSpan(ctx context.Context) (trace.Span, bool) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return nil, false
	}
	ro, ok := sp.(readOnlySpan)
	if !ok {
		return nil, false
	}
	if k := ro.SpanKind(); k != trace.SpanKindClient && k != trace.SpanKindInternal {
		return nil, false
	}
	for _, kv := range ro.Attributes() {
		switch kv.Key {
		case "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system":
			return sp, true
		}
	}
	return nil, false
}

func (c *config) roundTrip(req *http.Request, next Next) (*http.Response, error) {
	ep := classifyRequest(req)
	if ep.format == formatNone || req.Context().Value(activeKey{}) != nil {
		return next(req)
	}
	start := c.now()
	req, model, stream, streamKnown := sniffBody(req)
	if model == "" {
		model = ep.model
	}
	if ep.stream {
		stream, streamKnown = true, true
	}
	ctx := context.WithValue(req.Context(), activeKey{}, true)
	r := &recorder{cfg: c, start: start, format: ep.format, ctx: ctx}
	if sp, ok := callerSpan(ctx); ok {
		r.span = sp
		if streamKnown {
			sp.SetAttributes(attribute.Bool("gen_ai.request.stream", stream))
		}
	} else {
		provider := ep.provider
		if c.provider != "" {
			provider = c.provider
		}
		attrs := make([]attribute.KeyValue, 0, 6+len(c.attrs))
		attrs = append(attrs,
			attribute.String("gen_ai.operation.name", ep.operation),
			attribute.String("gen_ai.provider.name", provider))
		if model != "" {
			attrs = append(attrs, attribute.String("gen_ai.request.model", model))
		}
		if streamKnown {
			attrs = append(attrs, attribute.Bool("gen_ai.request.stream", stream))
		}
		if h := req.URL.Hostname(); h != "" {
			attrs = append(attrs, attribute.String("server.address", h))
		}
		if p := req.URL.Port(); p != "" {
			if n, err := strconv.Atoi(p); err == nil {
				attrs = append(attrs, attribute.Int("server.port", n))
			}
		}
		attrs = append(attrs, c.attrs...)
		name := ep.operation
		if model != "" {
			name += " " + model
		}
		ctx, r.span = c.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(start), trace.WithAttributes(attrs...))
		r.own = true
	}
	r.ctx = ctx
	if c.firstToken > 0 && !(streamKnown && !stream) {
		// A call that asked for no stream has no first token to wait for.
		r.limitFirstToken(c.firstToken)
	}
	req = req.WithContext(r.ctx)
	if !r.span.IsRecording() && r.limit == nil {
		// Sampled out: nothing would be kept, so nothing is parsed (unless
		// a limit must see the first content).
		if r.own {
			r.span.End()
		}
		return next(req)
	}

	resp, err := next(req)
	now := r.now()
	if err != nil {
		err = r.cutErr(err)
		r.end(endError, err, now)
		r.requestDone()
		return resp, err
	}
	r.headers(resp, now)
	switch {
	case resp.Body == nil || resp.Body == http.NoBody:
		r.end(endEOF, nil, now)
		r.requestDone()
	case resp.StatusCode >= 400:
		resp.Body = &body{rc: resp.Body, r: r}
	case isSSE(resp.Header.Get("Content-Type")):
		r.sse = true
		resp.Body = &body{rc: resp.Body, r: r}
	default:
		r.keepOn = strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "json")
		resp.Body = &body{rc: resp.Body, r: r}
	}
	if !r.sse {
		r.limit.stop() // an error or a non-streamed body: no first token to wait for
	}
	return resp, nil
}

func isSSE(ct string) bool {
	ct = strings.TrimSpace(ct)
	return len(ct) >= len("text/event-stream") && strings.EqualFold(ct[:len("text/event-stream")], "text/event-stream")
}
