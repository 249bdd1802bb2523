package ttftstream

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The tests record spans with the API alone, so the module's go.mod keeps
// no SDK dependency.

type fakeEvent struct {
	name  string
	t     time.Time
	attrs map[attribute.Key]attribute.Value
}

type fakeSpan struct {
	noop.Span
	mu         sync.Mutex
	name       string
	kind       trace.SpanKind
	start, end time.Time
	ended      int
	attrs      map[attribute.Key]attribute.Value
	events     []fakeEvent
	status     codes.Code
	statusMsg  string
}

func (s *fakeSpan) IsRecording() bool        { return true }
func (s *fakeSpan) SpanKind() trace.SpanKind { return s.kind }

func (s *fakeSpan) Attributes() []attribute.KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]attribute.KeyValue, 0, len(s.attrs))
	for k, v := range s.attrs {
		out = append(out, attribute.KeyValue{Key: k, Value: v})
	}
	return out
}

func (s *fakeSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range kv {
		s.attrs[a.Key] = a.Value
	}
}

func (s *fakeSpan) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	ev := fakeEvent{name: name, t: cfg.Timestamp(), attrs: map[attribute.Key]attribute.Value{}}
	for _, a := range cfg.Attributes() {
		ev.attrs[a.Key] = a.Value
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
}

func (s *fakeSpan) RecordError(err error, opts ...trace.EventOption) {
	s.AddEvent("exception", append(opts, trace.WithAttributes(attribute.String("exception.message", err.Error())))...)
}

func (s *fakeSpan) SetStatus(c codes.Code, msg string) {
	s.mu.Lock()
	s.status, s.statusMsg = c, msg
	s.mu.Unlock()
}

func (s *fakeSpan) End(opts ...trace.SpanEndOption) {
	cfg := trace.NewSpanEndConfig(opts...)
	s.mu.Lock()
	s.end = cfg.Timestamp()
	s.ended++
	s.mu.Unlock()
}

func (s *fakeSpan) attr(k string) attribute.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attrs[attribute.Key(k)]
}

// chunkKinds lists the kinds of the span's ttft.chunk events in order.
func (s *fakeSpan) chunkKinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		if e.name == EventChunk {
			out = append(out, e.attrs[AttrChunkKind].AsString())
		}
	}
	return out
}

type fakeTracer struct {
	noop.Tracer
	mu    sync.Mutex
	spans []*fakeSpan
}

func (t *fakeTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	s := &fakeSpan{name: name, kind: cfg.SpanKind(), start: cfg.Timestamp(), attrs: map[attribute.Key]attribute.Value{}}
	s.SetAttributes(cfg.Attributes()...)
	t.mu.Lock()
	t.spans = append(t.spans, s)
	t.mu.Unlock()
	return trace.ContextWithSpan(ctx, s), s
}

func (t *fakeTracer) all() []*fakeSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*fakeSpan(nil), t.spans...)
}

type fakeProvider struct {
	noop.TracerProvider
	tr *fakeTracer
}

func (p fakeProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.tr }

func newFakeProvider() (fakeProvider, *fakeTracer) {
	tr := &fakeTracer{}
	return fakeProvider{tr: tr}, tr
}

// fakeClock is advanced by the test; every reading is the current value.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
