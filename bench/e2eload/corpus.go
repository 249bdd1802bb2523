package e2eload

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
)

// Mix is the share of GenAI spans in the load.
type Mix struct {
	Name        string
	GenAIShare  float64 // 0 … 1
	Description string
}

// Mixes are the three loads the benchmark runs.
var Mixes = []Mix{
	{Name: "plain", GenAIShare: 0, Description: "100% plain HTTP/DB spans"},
	{Name: "95/5", GenAIShare: 0.05, Description: "95% plain + 5% GenAI spans with 30 ttft.chunk events"},
	{Name: "genai", GenAIShare: 1, Description: "100% GenAI spans with 30 ttft.chunk events"},
}

// MixByName finds a mix.
func MixByName(name string) (Mix, error) {
	for _, m := range Mixes {
		if m.Name == name {
			return m, nil
		}
	}
	return Mix{}, fmt.Errorf("unknown mix %q (plain, 95/5, genai)", name)
}

const (
	// spansPerTrace is the size of one plain trace: SERVER → INTERNAL →
	// {CLIENT db, CLIENT db, CLIENT http}.
	spansPerTrace = 5
	chunkEvents   = 30
	models        = 10
)

// Body is one pre-encoded OTLP/HTTP protobuf request.
type Body struct {
	Data  []byte
	Spans int
	GenAI int
}

// Bodies builds variants distinct request bodies of about spansPerRequest
// spans each at the mix, with timestamps near now. Plain spans come as whole
// traces (parents in the batch); in a mixed body each GenAI span is the child
// of a plain trace's INTERNAL span, as an LLM call made while serving a
// request; in an all-GenAI body their parents are outside the batch.
func Bodies(mix Mix, spansPerRequest, variants int, now time.Time) ([]Body, error) {
	if spansPerRequest < spansPerTrace {
		return nil, fmt.Errorf("spans per request must be at least %d", spansPerTrace)
	}
	var m ptrace.ProtoMarshaler
	out := make([]Body, 0, variants)
	for v := range variants {
		td := request(mix, spansPerRequest, v, now)
		data, err := m.MarshalTraces(td)
		if err != nil {
			return nil, err
		}
		out = append(out, Body{Data: data, Spans: td.SpanCount(), GenAI: genAIIn(td)})
	}
	return out, nil
}

func request(mix Mix, n, variant int, now time.Time) ptrace.Traces {
	genai := int(float64(n)*mix.GenAIShare + 0.5)
	traces := (n - genai) / spansPerTrace
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", "orders-api")
	res.PutStr("service.version", "1.42.0")
	res.PutStr("service.instance.id", "orders-api-7f9c4b-x2k8p")
	res.PutStr("host.name", "node-17")
	res.PutStr("deployment.environment.name", "production")
	res.PutStr("telemetry.sdk.language", "go")
	res.PutStr("telemetry.sdk.name", "opentelemetry")
	res.PutStr("telemetry.sdk.version", "1.38.0")

	start := now.Add(-time.Minute)
	plain := rs.ScopeSpans().AppendEmpty()
	plain.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	plain.Scope().SetVersion("0.63.0")
	plain.Spans().EnsureCapacity(traces * spansPerTrace)
	parents := make([]pcommon.SpanID, 0, traces)
	ids := make([]pcommon.TraceID, 0, traces)
	for t := range traces {
		tid, internal := plainTrace(plain.Spans(), variant, t, start.Add(time.Duration(t)*time.Millisecond))
		ids, parents = append(ids, tid), append(parents, internal)
	}

	if genai > 0 {
		g := derivetest.ChunkedSpans(genai, chunkEvents, models)
		src := g.ResourceSpans().At(0).ScopeSpans().At(0)
		ss := rs.ScopeSpans().AppendEmpty()
		src.Scope().CopyTo(ss.Scope())
		src.Spans().MoveAndAppendTo(ss.Spans())
		for i := 0; i < ss.Spans().Len(); i++ {
			s := ss.Spans().At(i)
			rebase(s, start)
			if len(ids) > 0 {
				// The LLM call of the i-th request served, parent in the batch.
				t := i * len(ids) / genai
				s.SetTraceID(ids[t])
				s.SetParentSpanID(parents[t])
			} else {
				s.SetTraceID(traceID(variant, i))
			}
			s.SetSpanID(spanID(variant, i, 7))
		}
	}
	return td
}

// derivetest builds its spans from a fixed date; move them near now, keeping
// every offset, so no component sees them as stale.
func rebase(s ptrace.Span, start time.Time) {
	shift := start.Sub(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	at := func(t pcommon.Timestamp) pcommon.Timestamp {
		return pcommon.NewTimestampFromTime(t.AsTime().Add(shift))
	}
	s.SetStartTimestamp(at(s.StartTimestamp()))
	s.SetEndTimestamp(at(s.EndTimestamp()))
	for j := 0; j < s.Events().Len(); j++ {
		e := s.Events().At(j)
		e.SetTimestamp(at(e.Timestamp()))
	}
}

func traceID(variant, t int) pcommon.TraceID {
	return pcommon.TraceID{0xe2, byte(variant), byte(t >> 16), byte(t >> 8), byte(t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
}

func spanID(variant, t, k int) pcommon.SpanID {
	return pcommon.SpanID{0xe2, byte(variant), byte(t >> 16), byte(t >> 8), byte(t), byte(k), 0, 1}
}

// plainTrace appends one ordinary request's trace: an HTTP SERVER span, the
// handler's INTERNAL span, two database calls and one outbound HTTP call,
// each with 12 attributes and one event. It returns the trace id and the
// INTERNAL span's id.
func plainTrace(spans ptrace.SpanSlice, variant, t int, start time.Time) (pcommon.TraceID, pcommon.SpanID) {
	tid := traceID(variant, t)
	ts := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(start.Add(d)) }
	newSpan := func(k int, parent int, name string, kind ptrace.SpanKind, from, to time.Duration) ptrace.Span {
		s := spans.AppendEmpty()
		s.SetTraceID(tid)
		s.SetSpanID(spanID(variant, t, k))
		if parent >= 0 {
			s.SetParentSpanID(spanID(variant, t, parent))
		}
		s.SetName(name)
		s.SetKind(kind)
		s.SetStartTimestamp(ts(from))
		s.SetEndTimestamp(ts(to))
		s.Attributes().EnsureCapacity(12)
		return s
	}
	event := func(s ptrace.Span, name string, at time.Duration, key, value string) {
		e := s.Events().AppendEmpty()
		e.SetName(name)
		e.SetTimestamp(ts(at))
		e.Attributes().PutStr(key, value)
	}
	order := fmt.Sprintf("ord-%d-%d", variant, t)

	srv := newSpan(1, -1, "GET /api/orders/{id}", ptrace.SpanKindServer, 0, 48*time.Millisecond)
	a := srv.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/api/orders/{id}")
	a.PutStr("url.path", "/api/orders/"+order)
	a.PutStr("url.scheme", "https")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("server.address", "orders.example.com")
	a.PutInt("server.port", 443)
	a.PutStr("client.address", "10.1.7.23")
	a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
	a.PutStr("network.protocol.version", "2")
	a.PutInt("http.request.body.size", 0)
	a.PutInt("http.response.body.size", 1843)
	event(srv, "request.authenticated", time.Millisecond, "enduser.id", "user-4821")

	in := newSpan(2, 1, "OrderService.Get", ptrace.SpanKindInternal, time.Millisecond, 47*time.Millisecond)
	a = in.Attributes()
	a.PutStr("code.function.name", "github.com/example/orders/service.(*OrderService).Get")
	a.PutStr("code.file.path", "/src/service/orders.go")
	a.PutInt("code.line.number", 118)
	a.PutStr("app.order.id", order)
	a.PutStr("app.tenant", "acme")
	a.PutStr("app.user.id", "user-4821")
	a.PutBool("app.cache.hit", false)
	a.PutStr("app.region", "eu-west-1")
	a.PutStr("app.feature_flags", "new-pricing,fast-checkout")
	a.PutStr("app.version", "1.42.0")
	a.PutInt("thread.id", 42)
	a.PutStr("app.request.id", "req-"+order)
	event(in, "cache.miss", 2*time.Millisecond, "cache.key", "order:"+order)

	for k, q := range []string{"SELECT * FROM orders WHERE id = $1", "SELECT * FROM order_items WHERE order_id = $1"} {
		db := newSpan(3+k, 2, "SELECT orders", ptrace.SpanKindClient, time.Duration(3+10*k)*time.Millisecond, time.Duration(11+10*k)*time.Millisecond)
		a = db.Attributes()
		a.PutStr("db.system.name", "postgresql")
		a.PutStr("db.namespace", "orders")
		a.PutStr("db.collection.name", "orders")
		a.PutStr("db.operation.name", "SELECT")
		a.PutStr("db.query.text", q)
		a.PutStr("db.query.summary", "SELECT orders")
		a.PutStr("server.address", "orders-db.internal")
		a.PutInt("server.port", 5432)
		a.PutStr("network.peer.address", "10.2.0.15")
		a.PutInt("network.peer.port", 5432)
		a.PutInt("db.response.returned_rows", int64(1+k*4))
		a.PutStr("db.client.connection.pool.name", "orders-pool")
		event(db, "connection.acquired", time.Duration(3+10*k)*time.Millisecond, "db.client.connection.state", "idle")
	}

	out := newSpan(5, 2, "GET", ptrace.SpanKindClient, 25*time.Millisecond, 45*time.Millisecond)
	a = out.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutStr("url.full", "https://inventory.internal/api/stock?order="+order)
	a.PutStr("url.scheme", "https")
	a.PutStr("server.address", "inventory.internal")
	a.PutInt("server.port", 443)
	a.PutInt("http.response.status_code", 200)
	a.PutStr("network.protocol.version", "1.1")
	a.PutInt("http.request.resend_count", 0)
	a.PutStr("user_agent.original", "orders-api/1.42.0")
	a.PutStr("network.peer.address", "10.3.1.9")
	a.PutInt("network.peer.port", 443)
	a.PutInt("http.response.body.size", 312)
	event(out, "http.response.headers", 38*time.Millisecond, "http.response.header.content-type", "application/json")

	return tid, in.SpanID()
}

// genAIIn counts spans that carry a GenAI operation.
func genAIIn(td ptrace.Traces) int {
	n := 0
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if _, ok := spans.At(k).Attributes().Get("gen_ai.operation.name"); ok {
					n++
				}
			}
		}
	}
	return n
}
