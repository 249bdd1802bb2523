package ttftstream

import (
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans this package starts.
const ScopeName = "github.com/otelcol-ttft/otelcol-ttft/instrumentation/go/ttftstream"

// Version of this instrumentation, reported as the scope version.
const Version = "0.1.0"

// Default event bounds (the README's "What it records").
const (
	DefaultEventsBeforeContent = 100
	DefaultEventsAfterContent  = 0
	// MaxChunkEvents bounds the ttft.chunk events of one call whatever the
	// options say: the OpenTelemetry SDKs keep 128 events a span and drop
	// the oldest past that, the first content with them, and the
	// derivation then reads no time from the events at all.
	MaxChunkEvents = 120
)

// EventCountLimitEnv is the OpenTelemetry SDKs' setting of how many events
// a span keeps (default 128). Set lower, it lowers the bound a call applies
// (MaxChunkEvents itself stays 120).
const EventCountLimitEnv = "OTEL_SPAN_EVENT_COUNT_LIMIT"

// chunkEventBound is the most ttft.chunk events a call records under the
// SDK's event limit env (EventCountLimitEnv's value): MaxChunkEvents, or,
// where the SDK keeps fewer than 128 events a span, 8 under its limit as
// 120 is under 128 (room for other libraries' events on the span), never
// under 2 (the first chunk and the first content; a first error event is
// recorded on top). A value that is no
// integer, negative (no limit) or 128 and over leaves MaxChunkEvents.
func chunkEventBound(env string) int {
	n, err := strconv.Atoi(strings.TrimSpace(env))
	if err != nil || n < 0 || n >= 128 {
		return MaxChunkEvents
	}
	return max(n-8, 2)
}

type config struct {
	tracer        trace.Tracer
	provider      string
	attrs         []attribute.KeyValue
	beforeContent int
	afterContent  int           // < 0: every chunk
	firstToken    time.Duration // > 0: WithFirstTokenTimeout
	maxEvents     int           // chunkEventBound when the config was built
	now           func() time.Time
}

// Option configures Middleware, NewTransport and WrapClient.
type Option func(*config)

// WithTracerProvider sets the provider of the spans started here (default:
// the global one, read when the transport or middleware is built).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tracer = tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
		}
	}
}

// WithProvider overrides gen_ai.provider.name, which otherwise follows the
// endpoint's format: openai (Chat Completions, Responses), anthropic
// (Messages), gcp.gemini (generateContent), gcp.vertex_ai (Claude on Vertex
// AI). Set it for OpenAI-compatible servers of other vendors.
func WithProvider(name string) Option {
	return func(c *config) { c.provider = name }
}

// WithAttributes adds attributes to every span this package starts (for
// instance the route: attribute.String("ttft.route", "support-chat")).
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, kv...) }
}

// WithEventsBeforeContent bounds the ttft.chunk events recorded before the
// first content chunk, which is always recorded, as is the first chunk
// (default 100; role, keep-alive and lifecycle chunks past it are counted
// only).
func WithEventsBeforeContent(n int) Option {
	return func(c *config) {
		if n >= 0 {
			c.beforeContent = n
		}
	}
}

// WithEventsAfterContent sets how many ttft.chunk events are recorded after
// the first content chunk (default 0: the summary attributes carry the rest);
// n < 0 records one event per chunk. Either way a call records at most
// MaxChunkEvents (fewer under a lower OTEL_SPAN_EVENT_COUNT_LIMIT, read when
// the transport or middleware is built), the rest counted in
// ttft.chunk.unrecorded.
func WithEventsAfterContent(n int) Option {
	return func(c *config) { c.afterContent = n }
}

// WithFirstTokenTimeout cuts a streamed call that has delivered no content,
// reasoning or tool-call chunk within d of the request (the moment TTFT is
// measured from): the request's context is cancelled with a cause, the
// round trip or the SDK's pending (or next) body read returns an error that
// errors.Is ErrFirstTokenTimeout and is a net.Error whose Timeout() is true,
// and the span gets ttft.stream.end=timeout, error.type=timeout, so the
// processor derives ttft.outcome=timeout_first_token. The bytes read before
// are unchanged. The timer is stopped at the first content, at the end of
// the call, when parsing stops and for a response that is no stream; the
// caller's own cancel or deadline wins. d <= 0: no limit (the default). A
// call that asked for no stream gets none. Unlike a context deadline, the
// limit ends at the first content: the rest of the stream may take as long as
// it takes.
func WithFirstTokenTimeout(d time.Duration) Option {
	return func(c *config) { c.firstToken = max(d, 0) }
}

func newConfig(opts []Option) *config {
	c := &config{
		beforeContent: DefaultEventsBeforeContent, afterContent: DefaultEventsAfterContent, now: time.Now,
		maxEvents: chunkEventBound(os.Getenv(EventCountLimitEnv)),
	}
	for _, o := range opts {
		o(c)
	}
	if c.tracer == nil {
		c.tracer = otel.GetTracerProvider().Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
	}
	return c
}
