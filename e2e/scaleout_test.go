package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"
)

// The scale-out tests run the shipped two-stage configs as six collectors on
// loopback: 2 agents (config/agent.yaml), 2 trace-assembly gateways
// (config/gateway-trace.yaml) and 2 aggregating gateways
// (config/gateway-aggregate.yaml), beside one collector on the single-node
// config (config/default.yaml) fed the same calls whole. Only addresses,
// paths, the groupbytrace wait, the flush interval and the metrics exporter
// (a file, so a stopped gateway's last flush can be read) are changed.

// groupWait is groupbytrace's wait in these tests; stragglers come later.
const groupWait = 2 * time.Second

// node is one collector of the fleet.
type node struct {
	name             string
	grpc, http, tel  int
	health           int
	dir, cfg, output string
	proc             *process
	// earlier holds the outputs of earlier runs (the file exporter
	// truncates its file when it starts).
	earlier []string
}

// lowPort finds a free loopback port below the kernel's ephemeral range
// (32768 and up), so the fleet's own outgoing connections cannot take a
// listener's port between the test choosing it and the collector binding it.
func lowPort(t *testing.T) int {
	t.Helper()
	for range 1000 {
		p := 20000 + rand.IntN(12000)
		if _, taken := lowPorts.LoadOrStore(p, true); taken {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		return p
	}
	t.Fatal("no free loopback port below 32000")
	return 0
}

var lowPorts sync.Map

func newNode(t *testing.T, name string) *node {
	t.Helper()
	dir := t.TempDir()
	return &node{name: name, grpc: lowPort(t), http: lowPort(t), tel: lowPort(t), health: lowPort(t),
		dir: dir, cfg: filepath.Join(dir, "config.yaml"), output: filepath.Join(dir, "metrics.json")}
}

func (n *node) start(t *testing.T) {
	t.Helper()
	n.proc = startProcess(t, n.name, n.dir, collectorBinary(t), "--config", n.cfg)
	waitFor(t, n.proc, 60*time.Second, n.name+" health", collectorReady(n.proc, fmt.Sprintf("http://127.0.0.1:%d/", n.health)))
}

func (n *node) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.grpc) }

// yamlDoc is a shipped config to adapt.
type yamlDoc map[string]any

func readShipped(t *testing.T, name string) yamlDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "config", name))
	if err != nil {
		t.Fatal(err)
	}
	// Into a plain map: yaml.v3 decodes nested mappings into the outer type.
	var d map[string]any
	if err := yaml.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return yamlDoc(d)
}

// at returns the map at path, failing when the shipped config lacks it (the
// test must follow the shipped configs, not invent its own).
func (d yamlDoc) at(t *testing.T, path ...string) map[string]any {
	t.Helper()
	m := map[string]any(d)
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("shipped config has no %s", strings.Join(path, "::"))
		}
		m = next
	}
	return m
}

func (d yamlDoc) set(t *testing.T, v any, path ...string) {
	t.Helper()
	d.at(t, path[:len(path)-1]...)[path[len(path)-1]] = v
}

func (d yamlDoc) write(t *testing.T, path string) {
	t.Helper()
	raw, err := yaml.Marshal(map[string]any(d))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// common points the receivers, health check, storage and own telemetry at the node.
func (d yamlDoc) common(t *testing.T, n *node) {
	t.Helper()
	d.set(t, fmt.Sprintf("127.0.0.1:%d", n.grpc), "receivers", "otlp", "protocols", "grpc", "endpoint")
	d.set(t, fmt.Sprintf("127.0.0.1:%d", n.http), "receivers", "otlp", "protocols", "http", "endpoint")
	d.set(t, fmt.Sprintf("127.0.0.1:%d", n.health), "extensions", "health_check", "endpoint")
	if _, ok := d.at(t, "extensions")["file_storage"]; ok {
		d.set(t, filepath.Join(n.dir, "storage"), "extensions", "file_storage", "directory")
	}
	d.at(t, "service")["telemetry"] = map[string]any{"metrics": map[string]any{
		"level": "normal",
		"readers": []any{map[string]any{"pull": map[string]any{"exporter": map[string]any{
			"prometheus": map[string]any{"host": "127.0.0.1", "port": n.tel}}}}},
	}}
}

// toBackends points a load_balancing exporter at fixed backends and lets it
// retry quickly (the shipped 10 minutes stay; only the intervals shrink).
func (d yamlDoc) toBackends(t *testing.T, exporter string, backends ...*node) {
	t.Helper()
	hosts := make([]any, len(backends))
	for i, b := range backends {
		hosts[i] = b.addr()
	}
	d.set(t, map[string]any{"static": map[string]any{"hostnames": hosts}}, "exporters", exporter, "resolver")
	r := d.at(t, "exporters", exporter, "retry_on_failure")
	r["initial_interval"], r["max_interval"] = "100ms", "1s"
}

// toFile replaces the metrics exporters with a file the test reads.
func (d yamlDoc) toFile(t *testing.T, n *node) {
	t.Helper()
	d["exporters"] = map[string]any{"file": map[string]any{"path": n.output, "format": "json", "flush_interval": "100ms"}}
	d.set(t, []any{"file"}, "service", "pipelines", "metrics", "exporters")
	d.set(t, "1s", "connectors", "genai_ttft", "flush_interval")
}

// fleet is the six collectors and the single-node reference.
type fleet struct {
	agents, traceGWs, aggregators [2]*node
	reference                     *node
	csv                           [2]string
}

func startFleet(t *testing.T, csvRows [2][]string) *fleet {
	t.Helper()
	return startFleetWait(t, csvRows, groupWait)
}

func startFleetWait(t *testing.T, csvRows [2][]string, wait time.Duration) *fleet {
	t.Helper()
	f := configureFleet(t, csvRows, wait)
	for _, n := range append(append(f.aggregators[:], f.traceGWs[:]...), append(f.agents[:], f.reference)...) {
		n.start(t)
	}
	return f
}

// configureFleet writes every collector's config; nothing is started.
func configureFleet(t *testing.T, csvRows [2][]string, wait time.Duration) *fleet {
	t.Helper()
	f := &fleet{}
	for i := range 2 {
		f.agents[i] = newNode(t, fmt.Sprintf("agent-%d", i+1))
		f.traceGWs[i] = newNode(t, fmt.Sprintf("trace-gateway-%d", i+1))
		f.aggregators[i] = newNode(t, fmt.Sprintf("aggregating-gateway-%d", i+1))
		f.csv[i] = filepath.Join(f.agents[i].dir, "gateway-export.csv")
		if err := os.WriteFile(f.csv[i], []byte(strings.Join(csvRows[i], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.reference = newNode(t, "single-node")

	aggregate := readShipped(t, "gateway-aggregate.yaml")
	connector := aggregate.at(t, "connectors", "genai_ttft")
	for _, n := range f.aggregators {
		d := readShipped(t, "gateway-aggregate.yaml")
		d.common(t, n)
		d.toFile(t, n)
		d.write(t, n.cfg)
	}
	for _, n := range f.traceGWs {
		d := readShipped(t, "gateway-trace.yaml")
		d.common(t, n)
		d.set(t, wait.String(), "processors", "groupbytrace", "wait_duration")
		d.toBackends(t, "load_balancing/records", f.aggregators[:]...)
		d.write(t, n.cfg)
	}
	for i, n := range f.agents {
		d := readShipped(t, "agent.yaml")
		d.common(t, n)
		d.set(t, []any{f.csv[i]}, "receivers", "llm_gateway_log", "include")
		d.set(t, map[string]any{"timeout": "200ms"}, "processors", "batch")
		d.toBackends(t, "load_balancing/traces", f.traceGWs[:]...)
		d.toBackends(t, "load_balancing/records", f.aggregators[:]...)
		d.write(t, n.cfg)
	}
	ref := readShipped(t, "default.yaml")
	ref.common(t, f.reference)
	ref.set(t, []any{f.csv[0], f.csv[1]}, "receivers", "llm_gateway_log", "include")
	// The same aggregation settings as the aggregating tier.
	ref.set(t, connector, "connectors", "genai_ttft")
	ref.toFile(t, f.reference)
	ref.write(t, f.reference.cfg)

	return f
}

// ---- the calls ----

type target struct{ provider, model, route string }

func (g target) key() string { return g.provider + "|" + g.model + "|" + g.route }

var (
	targetNested    = target{"openai", "gpt-4.1", "chat-default"}
	targetGateway   = target{"anthropic", "claude-sonnet-4-5", "code-assist"}
	targetHTTPFirst = target{"openai", "gpt-4.1-mini", "fast-classify"}
	targetStraggler = target{"openai", "gpt-4.1", "stragglers"}
	targetCSV       = target{"groq", "llama-3.3-70b-versatile", "gateway-export"}
)

// trace is one trace's spans in the order and parts they are sent in: part
// 0 to one agent, part 1 to the other agent in another request.
type trace struct {
	parts [2][]spanSpec
}

type spanSpec struct {
	service, scope string
	name           string
	kind           ptrace.SpanKind
	trace          pcommon.TraceID
	id, parent     pcommon.SpanID
	start, end     time.Time
	attrs          map[string]any
	events         []eventSpec
	status         ptrace.StatusCode
}

type eventSpec struct {
	at   time.Time
	kind string
}

type gen struct {
	rng  *rand.Rand
	base time.Time
	n    uint64
}

func (g *gen) ids() (pcommon.TraceID, func() pcommon.SpanID) {
	g.n++
	var tr pcommon.TraceID
	tr[0], tr[1] = 0x5c, 0xa1
	for i := 0; i < 8; i++ {
		tr[8+i] = byte(g.n >> (8 * i))
	}
	tr[2] = byte(g.rng.Uint32()) // spread over the ring
	tr[3] = byte(g.rng.Uint32())
	var k byte
	return tr, func() pcommon.SpanID {
		k++
		return pcommon.SpanID{tr[2], tr[3], byte(g.n >> 8), byte(g.n), k, 0, 0, 1}
	}
}

func genaiAttrs(tg target, tokens int64) map[string]any {
	return map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": tg.provider, "gen_ai.request.model": tg.model,
		"gen_ai.request.stream": true, "ttft.route": tg.route, "gen_ai.usage.input_tokens": tokens,
		"gen_ai.response.finish_reasons": []any{"stop"},
	}
}

// llmCall is the span that saw the stream: a role chunk, then content from
// ttft on; a timed-out call sees no content and is cut at 8 s.
func (g *gen) llmCall(s *spanSpec, timeout bool) {
	ttft := math.Exp(-0.5 + 0.6*g.rng.NormFloat64()) // lognormal, median ~0.6 s
	s.events = append(s.events, eventSpec{s.start.Add(30 * time.Millisecond), "role"})
	if timeout {
		s.end = s.start.Add(8 * time.Second)
		s.status = ptrace.StatusCodeError
		s.attrs["error.type"] = "TimeoutError"
		delete(s.attrs, "gen_ai.response.finish_reasons")
		return
	}
	at := s.start.Add(time.Duration(ttft * float64(time.Second)))
	for i := 0; i < 4; i++ {
		s.events = append(s.events, eventSpec{at, "content"})
		at = at.Add(time.Duration((0.05 + 0.2*g.rng.Float64()) * float64(time.Second)))
	}
	s.end = at
}

// nested: an instrumentation's span around the SDK's span; half the traces
// send the inner span first. Some calls time out before the first token.
func (g *gen) nested(tg target, timeout bool) trace {
	tr, next := g.ids()
	start := g.base.Add(time.Duration(g.rng.IntN(60_000)) * time.Millisecond)
	outer := spanSpec{service: "chat-app", scope: "example.instrumentation", name: "chat " + tg.model, kind: ptrace.SpanKindInternal,
		trace: tr, id: next(), start: start, attrs: genaiAttrs(tg, 900)}
	inner := spanSpec{service: "chat-app", scope: "openai.sdk", name: "openai.chat", kind: ptrace.SpanKindClient,
		trace: tr, id: next(), parent: outer.id, start: start.Add(2 * time.Millisecond), attrs: genaiAttrs(tg, 900)}
	g.llmCall(&inner, timeout)
	outer.end = inner.end.Add(time.Millisecond)
	if timeout {
		outer.status = ptrace.StatusCodeError
		delete(outer.attrs, "gen_ai.response.finish_reasons")
	}
	if g.n%2 == 0 {
		return trace{parts: [2][]spanSpec{{inner}, {outer}}}
	}
	return trace{parts: [2][]spanSpec{{outer}, {inner}}}
}

// gatewayShaped: an LLM gateway's trace, a plain HTTP SERVER span first,
// then plugin spans, then the CLIENT span of the provider call.
func (g *gen) gatewayShaped(tg target) trace {
	tr, next := g.ids()
	start := g.base.Add(time.Duration(g.rng.IntN(60_000)) * time.Millisecond)
	server := spanSpec{service: "llm-gateway", scope: "gateway", name: "POST /v1/chat/completions", kind: ptrace.SpanKindServer,
		trace: tr, id: next(), start: start, attrs: map[string]any{"http.request.method": "POST", "http.route": "/v1/chat/completions"}}
	plugin := spanSpec{service: "llm-gateway", scope: "gateway", name: "plugin.governance", kind: ptrace.SpanKindInternal,
		trace: tr, id: next(), parent: server.id, start: start.Add(time.Millisecond), end: start.Add(2 * time.Millisecond), attrs: map[string]any{}}
	llm := spanSpec{service: "llm-gateway", scope: "gateway", name: "chat " + tg.model, kind: ptrace.SpanKindClient,
		trace: tr, id: next(), parent: server.id, start: start.Add(3 * time.Millisecond), attrs: genaiAttrs(tg, 5000)}
	g.llmCall(&llm, false)
	server.end = llm.end.Add(time.Millisecond)
	return trace{parts: [2][]spanSpec{{server, plugin}, {llm}}}
}

// httpFirst: an app's HTTP SERVER span, then its LLM call in another batch.
func (g *gen) httpFirst(tg target) trace {
	tr, next := g.ids()
	start := g.base.Add(time.Duration(g.rng.IntN(60_000)) * time.Millisecond)
	server := spanSpec{service: "classifier", scope: "http", name: "GET /classify", kind: ptrace.SpanKindServer,
		trace: tr, id: next(), start: start, attrs: map[string]any{"http.request.method": "GET"}}
	llm := spanSpec{service: "classifier", scope: "openai.sdk", name: "chat " + tg.model, kind: ptrace.SpanKindClient,
		trace: tr, id: next(), parent: server.id, start: start.Add(time.Millisecond), attrs: genaiAttrs(tg, 300)}
	g.llmCall(&llm, false)
	server.end = llm.end.Add(time.Millisecond)
	return trace{parts: [2][]spanSpec{{server}, {llm}}}
}

func buildTraces(specs []spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[string]ptrace.SpanSlice{}
	for _, s := range specs {
		key := s.service + "\x00" + s.scope
		spans, ok := scopes[key]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.service)
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(s.scope)
			spans = ss.Spans()
			scopes[key] = spans
		}
		sp := spans.AppendEmpty()
		sp.SetName(s.name)
		sp.SetKind(s.kind)
		sp.SetTraceID(s.trace)
		sp.SetSpanID(s.id)
		sp.SetParentSpanID(s.parent)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.end))
		sp.Status().SetCode(s.status)
		if err := sp.Attributes().FromRaw(s.attrs); err != nil {
			panic(err)
		}
		for _, e := range s.events {
			ev := sp.Events().AppendEmpty()
			ev.SetName("ttft.chunk")
			ev.SetTimestamp(pcommon.NewTimestampFromTime(e.at))
			ev.Attributes().PutStr("ttft.chunk.kind", e.kind)
		}
	}
	return td
}

func postTraces(t *testing.T, n *node, specs []spanSpec) {
	t.Helper()
	if len(specs) == 0 {
		return
	}
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(buildTraces(specs))
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", n.http)
	for attempt := 0; ; attempt++ {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body)) //nolint:gosec // loopback
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("POST %s: %s", url, resp.Status)
		}
		if attempt == 50 {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// workload is every call the tests send.
type workload struct {
	traces     []trace
	stragglers []trace
	csvRows    [2][]string
	calls      map[string]int // by target key
	total      int
}

func newWorkload(base time.Time) *workload {
	g := &gen{rng: rand.New(rand.NewPCG(14, 2026)), base: base}
	w := &workload{calls: map[string]int{}}
	add := func(tg target, tr trace) {
		w.traces = append(w.traces, tr)
		w.calls[tg.key()]++
	}
	for i := 0; i < 1100; i++ {
		add(targetNested, g.nested(targetNested, i%40 == 7)) // 2.5% cut by a first-token timeout
		if i < 300 {
			add(targetGateway, g.gatewayShaped(targetGateway))
			add(targetHTTPFirst, g.httpFirst(targetHTTPFirst))
		}
	}
	// Small targets, so both aggregating gateways get some.
	for r := 0; r < 8; r++ {
		tg := target{"openai", "gpt-4.1-nano", fmt.Sprintf("batch-%d", r)}
		for i := 0; i < 20; i++ {
			add(tg, g.httpFirst(tg))
		}
	}
	// Mix the shapes, as a real stream would.
	g.rng.Shuffle(len(w.traces), func(i, j int) { w.traces[i], w.traces[j] = w.traces[j], w.traces[i] })
	for i := 0; i < 40; i++ {
		w.stragglers = append(w.stragglers, g.nested(targetStraggler, false))
		w.calls[targetStraggler.key()]++
	}
	header := "request_id,created_at,route_slug,provider,model,status,ttft_ms,latency_ms,prompt_tokens,cached_tokens,completion_tokens,attempts"
	w.csvRows = [2][]string{{header}, {header}}
	for i := 0; i < 400; i++ {
		ttft := 1000 * math.Exp(-1+0.5*g.rng.NormFloat64())
		row := fmt.Sprintf("csv-%d,%s,%s,%s,%s,ok,%.1f,%.0f,%d,0,%d,1", i, base.Add(time.Duration(i)*time.Second).UTC().Format("2006-01-02T15:04:05.000Z"),
			targetCSV.route, targetCSV.provider, targetCSV.model, ttft, ttft+800+g.rng.Float64()*2000, 400+g.rng.IntN(1000), 50+g.rng.IntN(400))
		w.csvRows[i%2] = append(w.csvRows[i%2], row)
		w.calls[targetCSV.key()]++
	}
	for _, n := range w.calls {
		w.total += n
	}
	return w
}

// send spreads each trace over both agents and two requests, 50 traces a
// request; the reference gets every trace whole. between runs after each
// request pair (the restart test stops a gateway there).
func (w *workload) send(t *testing.T, f *fleet, traces []trace, between func(i int)) {
	t.Helper()
	const per = 50
	for i := 0; i*per < len(traces); i++ {
		chunk := traces[i*per : min((i+1)*per, len(traces))]
		var first, second, whole []spanSpec
		for _, tr := range chunk {
			first = append(first, tr.parts[0]...)
			second = append(second, tr.parts[1]...)
			whole = append(whole, tr.parts[0]...)
			whole = append(whole, tr.parts[1]...)
		}
		postTraces(t, f.agents[i%2], first)
		postTraces(t, f.agents[(i+1)%2], second)
		postTraces(t, f.reference, whole)
		if between != nil {
			between(i)
		}
	}
}

// sendStragglers sends the first part of each straggler, then the second
// after groupbytrace has released the first.
func (w *workload) sendStragglers(t *testing.T, f *fleet) {
	t.Helper()
	var first, second, whole []spanSpec
	for _, tr := range w.stragglers {
		first = append(first, tr.parts[0]...)
		second = append(second, tr.parts[1]...)
		whole = append(whole, tr.parts[0]...)
		whole = append(whole, tr.parts[1]...)
	}
	postTraces(t, f.agents[0], first)
	postTraces(t, f.reference, whole)
	time.Sleep(2*groupWait + time.Second)
	postTraces(t, f.agents[1], second)
}

// ---- reading the results ----

// series is one collector instance's last flush, flattened.
type series struct {
	requests  map[string]float64            // target → requests
	gauges    map[string]map[string]float64 // target → "metric|band|clock|quantile-or-policy" → value
	instances []string
}

// readOutput reads a file exporter's output: the last flush of each
// collector instance that wrote to it (a restarted gateway is a new one).
func readOutput(path string) (map[string]pmetric.Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	last := map[string]pmetric.Metrics{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(sc.Bytes())
		if err != nil {
			continue // a line being written
		}
		if id := instanceOf(md); id != "" {
			last[id] = md
		}
	}
	return last, sc.Err()
}

func instanceOf(md pmetric.Metrics) string {
	id := ""
	eachPoint(md, func(_ string, attrs pcommon.Map, _ float64) {
		if v, ok := attrs.Get("collector.instance.id"); ok {
			id = v.Str()
		}
	})
	return id
}

func eachPoint(md pmetric.Metrics, fn func(name string, attrs pcommon.Map, v float64)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				default:
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					dp := dps.At(l)
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					fn(m.Name(), dp.Attributes(), v)
				}
			}
		}
	}
}

func attr(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

func flatten(mds map[string]pmetric.Metrics) series {
	s := series{requests: map[string]float64{}, gauges: map[string]map[string]float64{}}
	for id, md := range mds {
		s.instances = append(s.instances, id)
		eachPoint(md, func(name string, a pcommon.Map, v float64) {
			tg := attr(a, "gen_ai.provider.name") + "|" + attr(a, "gen_ai.request.model") + "|" + attr(a, "ttft.route")
			switch name {
			case "ttft.requests":
				s.requests[tg] += v
			case "ttft.quantile", "ttft.timeout.recommended":
				if s.gauges[tg] == nil {
					s.gauges[tg] = map[string]float64{}
				}
				s.gauges[tg][strings.Join([]string{name, attr(a, "ttft.prompt_band"), attr(a, "ttft.measured_at"), attr(a, "quantile") + attr(a, "ttft.policy")}, "|")] = v
			}
		})
	}
	sort.Strings(s.instances)
	return s
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// fleetSeries reads both aggregating gateways; where reports which gateway
// holds each target's series.
func (f *fleet) read() (per [2]series, total float64, err error) {
	for i, n := range f.aggregators {
		mds := map[string]pmetric.Metrics{}
		for _, out := range append(n.earlier, n.output) {
			m, err := readOutput(out)
			if err != nil {
				return per, 0, err
			}
			for id, md := range m {
				mds[id] = md
			}
		}
		per[i] = flatten(mds)
		total += sum(per[i].requests)
	}
	return per, total, nil
}

// waitForTotal waits until the reference counts want requests and the
// fleet at least want (or, with settle, any count), both unchanged for three
// flushes.
func waitForTotal(t *testing.T, f *fleet, want int, settle ...bool) (per [2]series, ref series) {
	t.Helper()
	var stableSince time.Time
	var last float64 = -1
	waitFor(t, nil, 90*time.Second, fmt.Sprintf("%d requests on the fleet and the single node", want), func() error {
		var total float64
		var err error
		per, total, err = f.read()
		if err != nil {
			return err
		}
		mds, err := readOutput(f.reference.output)
		if err != nil {
			return err
		}
		ref = flatten(mds)
		if total != last {
			last, stableSince = total, time.Now()
		}
		if sum(ref.requests) != float64(want) {
			return fmt.Errorf("single node counts %v requests", sum(ref.requests))
		}
		if (total < float64(want) && len(settle) == 0) || time.Since(stableSince) < 3*time.Second {
			return fmt.Errorf("fleet counts %v requests", total)
		}
		return nil
	})
	return per, ref
}

var splitRe = regexp.MustCompile(`(?m)^otelcol_connector_genai_ttft_split_calls(?:_total)?\{([^}]*)\} ([0-9.e+]+)$`)

// ownCounter sums an own-telemetry counter with part=<part> on a node.
func ownSplit(t *testing.T, n *node, part string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", n.tel)) //nolint:gosec // loopback
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	total := 0.0
	for _, m := range splitRe.FindAllStringSubmatch(buf.String(), -1) {
		if strings.Contains(m[1], `part="`+part+`"`) {
			v, _ := strconv.ParseFloat(m[2], 64)
			total += v
		}
	}
	return total
}

// TestScaleOutSixCollectors: every call counted exactly once over the
// fleet, each target on exactly one aggregating gateway, and its quantiles
// and recommendations those of one collector fed the same calls.
func TestScaleOutSixCollectors(t *testing.T) {
	collectorBinary(t)
	w := newWorkload(time.Now().Add(-2 * time.Minute))
	f := startFleet(t, w.csvRows)
	started := time.Now()
	w.send(t, f, w.traces, nil)
	w.sendStragglers(t, f)
	per, ref := waitForTotal(t, f, w.total)
	t.Logf("%d calls (%d traces over 2 agents, %d stragglers, %d gateway-export rows) counted in %s",
		w.total, len(w.traces), len(w.stragglers), len(w.csvRows[0])+len(w.csvRows[1])-2, time.Since(started).Round(100*time.Millisecond))

	var maxRel float64
	total := sum(per[0].requests) + sum(per[1].requests)
	if total != float64(w.total) {
		t.Errorf("the fleet counts %v requests, want %d", total, w.total)
	}
	for key, want := range w.calls {
		var on []int
		got := 0.0
		for i := range per {
			if v, ok := per[i].requests[key]; ok {
				on = append(on, i+1)
				got += v
			}
			if _, ok := per[i].gauges[key]; ok && (len(on) == 0 || on[len(on)-1] != i+1) {
				on = append(on, i+1)
			}
		}
		if len(on) != 1 {
			t.Errorf("target %s has series on aggregating gateways %v, want exactly one", key, on)
		}
		if got != float64(want) {
			t.Errorf("target %s: %v requests on the fleet, want %d", key, got, want)
		}
		if ref.requests[key] != float64(want) {
			t.Errorf("target %s: %v requests on the single node, want %d", key, ref.requests[key], want)
		}
		if key == targetStraggler.key() || len(on) != 1 {
			continue // a straggler's record keeps only the part that came first
		}
		fleetG, refG := per[on[0]-1].gauges[key], ref.gauges[key]
		if len(refG) == 0 && want >= 200 {
			t.Errorf("target %s: the single node emits no quantile or recommendation", key)
		}
		for k, rv := range refG {
			fv, ok := fleetG[k]
			if ok && rv != 0 {
				maxRel = max(maxRel, math.Abs(fv-rv)/math.Abs(rv))
			}
			switch {
			case !ok:
				t.Errorf("target %s: %s = %v on the single node, absent on the fleet", key, k, rv)
			case math.Abs(fv-rv) > 0.01*math.Abs(rv):
				t.Errorf("target %s: %s = %v on the fleet, %v on the single node (more than 1%% apart)", key, k, fv, rv)
			}
		}
		for k := range fleetG {
			if _, ok := refG[k]; !ok {
				t.Errorf("target %s: %s on the fleet only", key, k)
			}
		}
		t.Logf("target %s (%d calls) on aggregating gateway %d: %d gauges equal the single node's", key, want, on[0], len(refG))
	}
	t.Logf("largest relative difference of a gauge from the single node's: %.2g", maxRel)
	// The stragglers' second parts came after groupbytrace released the
	// first: the trace-assembly tier counted them and did not emit them.
	late := 0.0
	for _, n := range f.traceGWs {
		late += ownSplit(t, n, "inner") + ownSplit(t, n, "outer")
	}
	if late != float64(len(w.stragglers)) {
		t.Errorf("split_calls{part=inner|outer} = %v over the trace-assembly tier, want %d (one per straggler)", late, len(w.stragglers))
	}
}

// TestScaleOutAggregatorRestart: the same run with an aggregating gateway
// stopped (SIGTERM) mid-stream and started again. The senders' persistent
// queues hold what the stopped gateway cannot take and retry; the retries
// re-send whole batches, whose parts for the healthy gateway it drops as
// repeats. What the stopped gateway had aggregated survives as far as its
// last flush reached the exporter. Counts are summed over every instance
// that wrote (a restarted gateway is a new collector.instance.id), as a
// backend summing replicas would.
func TestScaleOutAggregatorRestart(t *testing.T) {
	collectorBinary(t)
	w := newWorkload(time.Now().Add(-2 * time.Minute))
	f := startFleet(t, w.csvRows)
	// Mid-stream: the calls go out over ~9 s; the gateway that holds the
	// largest target is stopped once its first records arrived and started
	// again 3 s later, while the rest keeps coming.
	start := time.Now()
	type stop struct {
		at  time.Time
		idx int
	}
	stopped := make(chan stop, 1)
	go func() {
		for {
			per, _, err := f.read()
			for i := range per {
				if err == nil && per[i].requests[targetNested.key()] > 0 {
					f.aggregators[i].proc.Stop(t)
					stopped <- stop{time.Now(), i}
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	w.send(t, f, w.traces, func(int) { time.Sleep(250 * time.Millisecond) })
	var st stop
	select {
	case st = <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("no aggregating gateway received the first records")
	}
	time.Sleep(time.Until(st.at.Add(3 * time.Second)))
	restarted := f.aggregators[st.idx]
	d := readShipped(t, "gateway-aggregate.yaml")
	restarted.earlier = append(restarted.earlier, restarted.output)
	restarted.output = filepath.Join(restarted.dir, "metrics-after-restart.json")
	d.common(t, restarted)
	d.toFile(t, restarted)
	d.write(t, restarted.cfg)
	restarted.start(t)
	t.Logf("sent for %s; aggregating gateway %d stopped at %s, down for %s",
		time.Since(start).Round(100*time.Millisecond), st.idx+1, st.at.Sub(start).Round(100*time.Millisecond), time.Since(st.at).Round(100*time.Millisecond))
	w.sendStragglers(t, f)
	per, _ := waitForTotal(t, f, w.total, true)

	var lost, twice float64
	for key, want := range w.calls {
		got := per[0].requests[key] + per[1].requests[key]
		where := "the gateway that kept running"
		if _, ok := per[st.idx].requests[key]; ok {
			where = "the restarted gateway"
		}
		lost += max(0, float64(want)-got)
		twice += max(0, got-float64(want))
		switch {
		case got < float64(want):
			// The connector flushes what it aggregated at shutdown, and the
			// senders' queues keep the rest: nothing may be lost.
			t.Errorf("target %s on %s: %v requests, want %d: %v lost", key, where, got, want, float64(want)-got)
		case got > float64(want):
			t.Errorf("target %s on %s: %v requests, want %d: %v counted twice", key, where, got, want, got-float64(want))
		default:
			t.Logf("target %s on %s: %d requests, none lost or duplicated", key, where, want)
		}
	}
	repeats := 0.0
	for _, n := range f.aggregators {
		repeats += ownSplit(t, n, "repeat")
	}
	t.Logf("restart: %v of %d calls lost, %v counted twice; %v re-sent records dropped as repeats", lost, w.total, twice, repeats)
	if len(per[st.idx].instances) != 2 {
		t.Errorf("the restarted gateway wrote as %d instances, want 2 (before and after the restart)", len(per[st.idx].instances))
	}
}

// TestScaleOutThroughput (TTFT_SCALE_BENCH=1, not part of make test): the
// same calls sent as fast as four senders can to the fleet, then to the
// single node; wall time until every call is counted, CPU per process from
// /proc, and the trace-assembly gateways' peak heap while groupbytrace
// holds the traces. TTFT_SCALE_TRACES (default 20000) and
// TTFT_SCALE_WAIT (default 2s) size the run.
func TestScaleOutThroughput(t *testing.T) {
	if os.Getenv("TTFT_SCALE_BENCH") != "1" {
		t.Skip("set TTFT_SCALE_BENCH=1 to measure the fleet's throughput")
	}
	collectorBinary(t)
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("TTFT_SCALE_TRACES")); err == nil {
		n = v
	}
	wait := groupWait
	if v, err := time.ParseDuration(os.Getenv("TTFT_SCALE_WAIT")); err == nil {
		wait = v
	}
	g := &gen{rng: rand.New(rand.NewPCG(1, 2)), base: time.Now().Add(-2 * time.Minute)}
	var traces []trace
	for i := 0; i < n; i++ {
		traces = append(traces, g.nested(targetNested, false))
	}
	f := startFleetWait(t, [2][]string{{"request_id"}, {"request_id"}}, wait)

	readCPU := func(nodes []*node) map[string]float64 {
		out := map[string]float64{}
		for _, nd := range nodes {
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", nd.proc.cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
			ut, _ := strconv.ParseFloat(fields[11], 64)
			st, _ := strconv.ParseFloat(fields[12], 64)
			out[nd.name] = (ut + st) / 100 // USER_HZ
		}
		return out
	}
	heap := func(nd *node) float64 {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", nd.tel)) //nolint:gosec // loopback
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		m := regexp.MustCompile(`(?m)^otelcol_process_runtime_heap_alloc_bytes(?:\{[^}]*\})? ([0-9.e+]+)$`).FindStringSubmatch(buf.String())
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	sendAll := func(targets []*node, whole bool) time.Duration {
		start := time.Now()
		const per = 100
		work := make(chan int)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					chunk := traces[i*per : min((i+1)*per, len(traces))]
					var a, b []spanSpec
					for _, tr := range chunk {
						a = append(a, tr.parts[0]...)
						b = append(b, tr.parts[1]...)
					}
					if whole {
						postTraces(t, targets[0], append(a, b...))
						continue
					}
					postTraces(t, targets[i%2], a)
					postTraces(t, targets[(i+1)%2], b)
				}
			}()
		}
		for i := 0; i*per < len(traces); i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		return time.Since(start)
	}
	countOn := func(nodes []*node) float64 {
		total := 0.0
		for _, nd := range nodes {
			mds, err := readOutput(nd.output)
			if err != nil {
				continue
			}
			total += sum(flatten(mds).requests)
		}
		return total
	}
	measure := func(name string, nodes, senders, counters []*node, whole bool) (time.Duration, map[string]float64, float64) {
		before := readCPU(nodes)
		idle := heap(f.traceGWs[0]) + heap(f.traceGWs[1])
		peak := 0.0
		done := make(chan struct{})
		if !whole {
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(200 * time.Millisecond):
						peak = max(peak, heap(f.traceGWs[0])+heap(f.traceGWs[1]))
					}
				}
			}()
		}
		start := time.Now()
		sent := sendAll(senders, whole)
		waitFor(t, nil, 10*time.Minute, name+" to count every call", func() error {
			if c := countOn(counters); c < float64(n) {
				return fmt.Errorf("%v of %d", c, n)
			}
			return nil
		})
		took := time.Since(start)
		close(done)
		after := readCPU(nodes)
		used := map[string]float64{}
		for k, v := range after {
			used[k] = v - before[k]
		}
		t.Logf("%s: %d calls (%d spans) sent in %s, all counted after %s (%.0f calls/s including the %s wait and a flush)",
			name, n, 2*n, sent.Round(10*time.Millisecond), took.Round(10*time.Millisecond), float64(n)/took.Seconds(), wait)
		if !whole {
			t.Logf("%s: trace-assembly gateways' heap %.1f MiB idle, %.1f MiB at peak", name, idle/(1<<20), peak/(1<<20))
		}
		return took, used, float64(n) / sent.Seconds()
	}
	fleetNodes := append(append(f.agents[:], f.traceGWs[:]...), f.aggregators[:]...)
	fleetTook, fleetCPU, fleetRate := measure("fleet", fleetNodes, f.agents[:], f.aggregators[:], false)
	refTook, refCPU, refRate := measure("single node", []*node{f.reference}, []*node{f.reference}, []*node{f.reference}, true)
	var fleetTotal float64
	names := make([]string, 0, len(fleetCPU))
	for k := range fleetCPU {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fleetTotal += fleetCPU[k]
		t.Logf("CPU %-22s %6.2f s  %6.1f µs/call", k, fleetCPU[k], 1e6*fleetCPU[k]/float64(n))
	}
	t.Logf("CPU %-22s %6.2f s  %6.1f µs/call", "fleet total", fleetTotal, 1e6*fleetTotal/float64(n))
	t.Logf("CPU %-22s %6.2f s  %6.1f µs/call", "single node", refCPU["single-node"], 1e6*refCPU["single-node"]/float64(n))
	t.Logf("accepted rate: fleet %.0f calls/s, single node %.0f calls/s (ratio %.2f); CPU per call fleet/single %.2f; wall to counted %.2f",
		fleetRate, refRate, fleetRate/refRate, fleetTotal/refCPU["single-node"], fleetTook.Seconds()/refTook.Seconds())
}

// TestScaleOutSendersRestartWithQueuedData: the aggregating gateways are not
// up yet, so every record waits in the senders' persistent queues; right
// after the last calls were sent (groupbytrace still holds them) an agent
// and a trace-assembly gateway are stopped (SIGTERM) and started again with
// their queues on disk, then the aggregating gateways start. Every call
// arrives, once.
func TestScaleOutSendersRestartWithQueuedData(t *testing.T) {
	collectorBinary(t)
	w := newWorkload(time.Now().Add(-2 * time.Minute))
	w.stragglers = nil
	w.calls[targetStraggler.key()] = 0
	delete(w.calls, targetStraggler.key())
	w.total = 0
	for _, n := range w.calls {
		w.total += n
	}
	f := configureFleet(t, w.csvRows, groupWait)
	for _, n := range append(f.traceGWs[:], append(f.agents[:], f.reference)...) {
		n.start(t)
	}
	w.send(t, f, w.traces, nil)
	// Within groupbytrace's wait: the trace-assembly gateway still holds the
	// last traces when it is stopped, and flushes them into its queue.
	time.Sleep(500 * time.Millisecond)
	for _, n := range []*node{f.agents[0], f.traceGWs[0]} {
		n.proc.Stop(t)
		n.start(t)
	}
	for _, n := range f.aggregators {
		n.start(t)
	}
	per, _ := waitForTotal(t, f, w.total, true)
	for key, want := range w.calls {
		if got := per[0].requests[key] + per[1].requests[key]; got != float64(want) {
			t.Errorf("target %s: %v requests after the senders' restart, want %d", key, got, want)
		}
	}
	repeats := ownSplit(t, f.aggregators[0], "repeat") + ownSplit(t, f.aggregators[1], "repeat")
	t.Logf("%d calls queued on disk across a restart of an agent and a trace-assembly gateway; %v re-sent records dropped as repeats", w.total, repeats)
}
