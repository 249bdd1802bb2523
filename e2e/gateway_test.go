package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestRealBifrostTracesOneRecordPerRequest sends the real Bifrost capture
// (testdata/fixtures/bifrost-gateway) and spans of two producers added as
// rows of the producer table through the built distribution: otlp →
// genai_ttft processor → file exporter and the genai_ttft connector →
// prometheus exporter. Every client request is one record with the answer
// key's outcome, attempts and failover, no TTFT from Bifrost's attributes,
// and ttft_requests_total counts the client requests.
func TestRealBifrostTracesOneRecordPerRequest(t *testing.T) {
	httpPort, promPort := freePort(t), freePort(t)
	out := filepath.Join(t.TempDir(), "traces.json")
	col := startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  genai_ttft:
connectors:
  genai_ttft:
    flush_interval: 1s
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
  prometheus:
    endpoint: 127.0.0.1:%d
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [genai_ttft]
      exporters: [file, genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus]
`, httpPort, out, promPort))

	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort)
	post := func(what string, body []byte) {
		t.Helper()
		postOTLP(t, col, url, "application/json", what, body)
	}

	dir := filepath.Join("..", "testdata", "fixtures", "bifrost-gateway")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]struct {
		Requests     int      `json:"requests"`
		OutcomeAnyOf []string `json:"outcome_any_of"`
		AttemptsMin  *int64   `json:"attempts_min"`
		FailedOver   *bool    `json:"failed_over"`
	}
	if err := json.Unmarshal(raw, &answers); err != nil {
		t.Fatal(err)
	}
	requests := 0
	for scenario, want := range answers {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(mustRead(t, filepath.Join(dir, scenario+".traces.json")))
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans().All() {
			rs.Resource().Attributes().PutStr("test.scenario", scenario)
		}
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		post(scenario, body)
		requests += want.Requests
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(newProducerSpans())
	if err != nil {
		t.Fatal(err)
	}
	post("new producers", body)

	// Records by scenario, as the file exporter wrote them.
	type stamped struct {
		name  string
		attrs map[string]any
	}
	var byScenario map[string][]stamped
	waitFor(t, col, 30*time.Second, "the exported file to hold every record", func() error {
		byScenario = map[string][]stamped{}
		n := 0
		err := readExported(out, func(res pcommon.Resource, span ptrace.Span) {
			if _, ok := span.Attributes().Get("ttft.outcome"); !ok {
				return
			}
			sc := "producers"
			if v, ok := res.Attributes().Get("test.scenario"); ok {
				sc = v.Str()
			}
			byScenario[sc] = append(byScenario[sc], stamped{span.Name(), span.Attributes().AsRaw()})
			n++
		})
		if err != nil {
			return err
		}
		if n < requests+2 {
			return fmt.Errorf("%d records exported, want %d", n, requests+2)
		}
		return nil
	})

	for scenario, want := range answers {
		recs := byScenario[scenario]
		if len(recs) != want.Requests {
			t.Errorf("%s: %d records, want one per client request (%d)", scenario, len(recs), want.Requests)
		}
		for _, r := range recs {
			if !strings.HasPrefix(r.name, "/") {
				t.Errorf("%s: record on %q, want the SERVER span of the request", scenario, r.name)
			}
			for _, k := range []string{"ttft.measured_at", "ttft.time_to_first_chunk", "ttft.time_to_first_content"} {
				if v, ok := r.attrs[k]; ok {
					t.Errorf("%s: %s = %v; Bifrost's span attributes are no TTFT", scenario, k, v)
				}
			}
			if o, _ := r.attrs["ttft.outcome"].(string); !slices.Contains(want.OutcomeAnyOf, o) {
				t.Errorf("%s: outcome %q, want one of %v", scenario, o, want.OutcomeAnyOf)
			}
			attempts, _ := r.attrs["ttft.attempts"].(int64)
			if want.AttemptsMin != nil && attempts < *want.AttemptsMin {
				t.Errorf("%s: ttft.attempts %d, want >= %d", scenario, attempts, *want.AttemptsMin)
			}
			if want.FailedOver != nil {
				if fo, _ := r.attrs["ttft.failed_over"].(bool); fo != *want.FailedOver {
					t.Errorf("%s: ttft.failed_over %v, want %v", scenario, fo, *want.FailedOver)
				}
			}
			if r.attrs["ttft.observer"] != "gateway" {
				t.Errorf("%s: ttft.observer %v, want gateway", scenario, r.attrs["ttft.observer"])
			}
		}
	}

	// The two producers added as table rows.
	got := map[string]map[string]any{}
	for _, r := range byScenario["producers"] {
		got[r.name] = r.attrs
	}
	if a := got["chat gpt-4o"]; a["ttft.measured_at"] != "first_chunk" || a["ttft.time_to_first_chunk"] != 0.04 {
		t.Errorf("openai-go compile-time instrumentation (µs): got %v", a)
	}
	if a := got["openai.chat.completion"]; a["ttft.measured_at"] != "first_content" || a["ttft.time_to_first_content"] != 0.3 {
		t.Errorf("langsmith-go new_token: got %v", a)
	}

	// The connector counts client requests, not spans.
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)
	waitFor(t, col, 30*time.Second, "ttft_requests_total to count every request", func() error {
		total, err := sumFamily(metrics, "ttft_requests_total")
		if err != nil {
			return err
		}
		if total != float64(requests+2) {
			return fmt.Errorf("ttft_requests_total = %v, want %d", total, requests+2)
		}
		return nil
	})
}

// newProducerSpans builds one span of each producer added as a row: the
// OpenTelemetry Go compile-time instrumentation of openai-go (µs at the
// first data: line) and langsmith-go (event new_token at the first content).
func newProducerSpans() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "go-app")
	start := time.Now().Add(-5 * time.Second)
	add := func(scope, name string, kind ptrace.SpanKind, id byte) ptrace.Span {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(scope)
		s := ss.Spans().AppendEmpty()
		s.SetName(name)
		s.SetKind(kind)
		s.SetTraceID(pcommon.TraceID{0xe2, id})
		s.SetSpanID(pcommon.SpanID{0xe2, id})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Second)))
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
		s.Attributes().PutStr("gen_ai.system", "openai")
		return s
	}
	s := add("github.com/open-telemetry/opentelemetry-go-compile-instrumentation/instrumentation/github.com/openai/openai-go/v3",
		"chat gpt-4o", ptrace.SpanKindClient, 1)
	s.Attributes().PutBool("gen_ai.request.is_stream", true)
	s.Attributes().PutInt("gen_ai.response.time_to_first_token", 40_000)
	s.Attributes().PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")

	s = add("github.com/sashabaranov/go-openai", "openai.chat.completion", ptrace.SpanKindInternal, 2)
	s.Status().SetCode(ptrace.StatusCodeOk)
	ev := s.Events().AppendEmpty()
	ev.SetName("new_token")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(300 * time.Millisecond)))
	return td
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readExported calls fn for every span of a file exporter's JSON lines.
func readExported(path string, fn func(pcommon.Resource, ptrace.Span)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		if err != nil {
			return fmt.Errorf("exported line is not OTLP/JSON: %w", err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					fn(rs.Resource(), span)
				}
			}
		}
	}
	return sc.Err()
}

// sumFamily adds up every sample of one metric family in a Prometheus
// text exposition.
func sumFamily(url, family string) (float64, error) {
	resp, err := http.Get(url) //nolint:gosec // loopback
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, family+"{") && !strings.HasPrefix(line, family+" ") {
			continue
		}
		rest := strings.TrimPrefix(line, family)
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}
