package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
}

func newNode(t *testing.T, name string) *node {
	t.Helper()
	dir := t.TempDir()
	return &node{name: name, grpc: freePort(t), http: freePort(t), tel: freePort(t), health: freePort(t),
		dir: dir, cfg: filepath.Join(dir, "config.yaml"), output: filepath.Join(dir, "metrics.json")}
}

func (n *node) start(t *testing.T) {
	t.Helper()
	n.proc = startProcess(t, n.name, n.dir, collectorBinary(t), "--config", n.cfg)
	waitFor(t, n.proc, 60*time.Second, n.name+" health", httpOK(fmt.Sprintf("http://127.0.0.1:%d/", n.health)))
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
		d.set(t, groupWait.String(), "processors", "groupbytrace", "wait_duration")
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

	for _, n := range append(append(f.aggregators[:], f.traceGWs[:]...), append(f.agents[:], f.reference)...) {
		n.start(t)
	}
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
		mds, err := readOutput(n.output)
		if err != nil {
			return per, 0, err
		}
		per[i] = flatten(mds)
		total += sum(per[i].requests)
	}
	return per, total, nil
}

// waitForTotal waits until the fleet and the reference count want requests
// and stay there for three flushes.
func waitForTotal(t *testing.T, f *fleet, want int) (per [2]series, ref series) {
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
		if total < float64(want) || time.Since(stableSince) < 3*time.Second {
			return fmt.Errorf("fleet counts %v requests", total)
		}
		return nil
	})
	return per, ref
}

var splitRe = regexp.MustCompile(`(?m)^otelcol_genai_ttft_connector_split_calls(?:_total)?\{([^}]*)\} ([0-9.e+]+)$`)

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
		if len(refG) == 0 {
			t.Errorf("target %s: the single node emits no quantile or recommendation", key)
		}
		for k, rv := range refG {
			fv, ok := fleetG[k]
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
		t.Logf("target %s on aggregating gateway %d: %d gauges equal the single node's", key, on[0], len(refG))
	}
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
