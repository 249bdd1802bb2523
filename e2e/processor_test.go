package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestProcessorStampsFixtures sends real captured spans through the built
// distribution (otlp receiver → genai_ttft → file exporter) and reads the
// request records back from the exported file.
func TestProcessorStampsFixtures(t *testing.T) {
	httpPort := freePort(t)
	out := filepath.Join(t.TempDir(), "traces.json")
	col := startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  genai_ttft:
    derive:
      prompt_bands: [2000, 16000, 64000]
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [genai_ttft]
      exporters: [file]
`, httpPort, out))

	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort)
	fixtures := filepath.Join("..", "testdata", "fixtures")
	for _, f := range []string{"openinference-anthropic/normal.traces.json", "vercel-ai/reasoning.traces.json", "openlit-openai/nonstream.traces.json"} {
		body, err := os.ReadFile(filepath.Join(fixtures, f))
		if err != nil {
			t.Fatal(err)
		}
		postOTLP(t, col, url, "application/json", f, body)
	}

	// Spans by name, as the file exporter wrote them.
	spans := map[string]ptrace.Span{}
	waitFor(t, col, 30*time.Second, "the exported file to hold every span", func() error {
		clear(spans)
		if err := readExported(out, func(_ pcommon.Resource, span ptrace.Span) { spans[span.Name()] = span }); err != nil {
			return err
		}
		for _, name := range []string{"Anthropic Messages", "anthropic.messages.create", "ai.streamText", "ai.streamText.doStream", "chat scn-normal"} {
			if _, ok := spans[name]; !ok {
				return fmt.Errorf("span %q not exported yet (have %d spans)", name, len(spans))
			}
		}
		return nil
	})

	attr := func(span, key string) any {
		v, ok := spans[span].Attributes().Get(key)
		if !ok {
			return nil
		}
		return v.AsRaw()
	}
	expect := func(span, key string, want any) {
		t.Helper()
		if got := attr(span, key); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s = %v, want %v", span, key, got, want)
		}
	}

	// Nested Anthropic call: the outer span carries the SDK's content-exact TTFT.
	expect("Anthropic Messages", "ttft.time_to_first_content", 0.32)
	expect("Anthropic Messages", "ttft.measured_at", "first_content")
	expect("Anthropic Messages", "ttft.outcome", "complete")
	expect("Anthropic Messages", "ttft.prompt_band", "<2k")
	expect("Anthropic Messages", "ttft.observer", "client")
	expect("anthropic.messages.create", "ttft.nested_in", spans["Anthropic Messages"].SpanID().String())
	expect("anthropic.messages.create", "ttft.outcome", nil)

	// Vercel reasoning call: only a first-chunk bound (~58 ms, not the 1.2 s of content).
	if v, ok := attr("ai.streamText", "ttft.time_to_first_chunk").(float64); !ok || v < 0.05 || v > 0.07 {
		t.Errorf("ai.streamText: ttft.time_to_first_chunk = %v, want ~0.058", attr("ai.streamText", "ttft.time_to_first_chunk"))
	}
	expect("ai.streamText", "ttft.measured_at", "first_chunk")
	expect("ai.streamText", "ttft.time_to_first_content", nil)

	// Non-streamed OpenLIT call: a record, never a TTFT.
	expect("chat scn-normal", "ttft.outcome", "complete")
	expect("chat scn-normal", "ttft.streamed", false)
	expect("chat scn-normal", "ttft.time_to_first_chunk", nil)
	expect("chat scn-normal", "ttft.time_to_first_content", nil)

	if t.Failed() {
		raw, _ := os.ReadFile(out)
		var pretty bytes.Buffer
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			_ = json.Indent(&pretty, []byte(line), "", " ")
		}
		t.Logf("exported:\n%s", tail(pretty.String(), 6000))
	}
}
