package llmgatewaylogreceiver

import (
	"context"
	"math"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// captureOutput collects what the mapping emits.
type captureOutput struct {
	helper.OutputOperator
	got []*entry.Entry
}

func (c *captureOutput) Process(_ context.Context, e *entry.Entry) error {
	c.got = append(c.got, e)
	return nil
}

func (c *captureOutput) ProcessBatch(_ context.Context, es []*entry.Entry) error {
	c.got = append(c.got, es...)
	return nil
}

// rowPipeline is the receiver's pipeline after the file input: the stanza
// parser and the mapping, ending in a capture output.
type rowPipeline struct {
	first operator.Operator
	mapOp *mapOperator
	out   *captureOutput
	stop  func() error
}

// release emits the rows the mapping holds for their fallback rows, so
// that each fuzz input is judged on what it alone produced.
func (p *rowPipeline) release() {
	if p.mapOp != nil && p.mapOp.fallbacks != nil {
		if rel := p.mapOp.fallbacks.drain(nil); len(rel) > 0 {
			p.mapOp.writeReleased(context.Background(), rel)
		}
	}
}

func newRowPipeline(t testing.TB, format string) *rowPipeline {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.Format = format
	// Held Bifrost rows are released on this clock only: never while fuzzing.
	cfg.clock = clockwork.NewFakeClock()
	if format == FormatCSV || format == FormatJSON {
		cfg.Mapping = MappingConfig{TTFT: "ttft", StartTime: "start", Status: "status", PromptTokens: "prompt", Model: "model"}
	}
	ops, err := operators(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := componenttest.NewNopTelemetrySettings()
	o, err := helper.NewOutputConfig("capture", "capture").Build(set)
	if err != nil {
		t.Fatal(err)
	}
	out := &captureOutput{OutputOperator: o}
	pipe, err := pipeline.Config{Operators: ops, DefaultOutput: out}.Build(set)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipe.Start(storage.NewNopClient()); err != nil {
		t.Fatal(err)
	}
	p := &rowPipeline{first: pipe.Operators()[0], out: out, stop: pipe.Stop}
	for _, op := range pipe.Operators() {
		if m, ok := op.(*mapOperator); ok {
			p.mapOp = m
		}
	}
	if p.mapOp == nil {
		t.Fatal("the pipeline has no mapping operator")
	}
	return p
}

var fuzzFormats = []string{FormatInfroCSV, FormatBifrost, FormatLiteLLM, FormatCSV, FormatJSON}

// FuzzRowMapping feeds arbitrary header and row text through the parser and
// the mapping: nothing panics, and whatever is emitted is a valid request
// record (known outcome, finite non-negative times, a band).
func FuzzRowMapping(f *testing.F) {
	f.Add(uint8(0), "request_id,created_at,route_slug,provider,model,status,ttft_ms,latency_ms,prompt_tokens,cached_tokens,completion_tokens,attempts",
		"req-1,2026-11-30T00:00:01.120Z,chat-default,openai,gpt-4.1-mini,ok,412.5,1630,1180,0,212,1")
	f.Add(uint8(0), "ttft_ms,status", "-1,ok")
	f.Add(uint8(0), `"ttft_ms";"status"`, `"12";"timeout"`)
	f.Add(uint8(1), "", `{"timestamp":"2026-11-30T00:00:01Z","provider":"openai","model":"m","latency":10,"ttft_ms":5,"status":"success","stream":true,"number_of_retries":2,"fallback_index":1,"attempt_trail":"[1,2,3]"}`)
	f.Add(uint8(2), "", `{"startTime":1e9,"completionStartTime":1e9,"endTime":1e30,"status":"failure","stream":null}`)
	f.Add(uint8(3), "ttft,start,status,prompt,model", `1e308,1,complete,9e18,x`)
	f.Add(uint8(4), "", `{"ttft":{"a":1},"start":"2026-11-30 00:00:00","prompt":-0}`)
	// Rows that map, one per format the seeds above do not cover.
	f.Add(uint8(2), "", `{"startTime":"2026-11-30T00:00:00Z","completionStartTime":"2026-11-30T00:00:00.4Z","endTime":"2026-11-30T00:00:02Z","status":"success","stream":true,"model":"m","api_provider":"openai"}`)
	f.Add(uint8(4), "", `{"ttft":120,"start":"2026-11-30T00:00:00Z","status":"429","prompt":1200,"model":"m"}`)
	pipes := map[string]*rowPipeline{}
	f.Cleanup(func() {
		for _, p := range pipes {
			_ = p.stop()
		}
	})
	f.Fuzz(func(t *testing.T, which uint8, header, line string) {
		format := fuzzFormats[int(which)%len(fuzzFormats)]
		p, ok := pipes[format]
		if !ok {
			p = newRowPipeline(t, format)
			pipes[format] = p
		}
		p.out.got = p.out.got[:0]
		e := entry.New()
		e.Body = line
		if header != "" {
			// What the header reader stores for a CSV file.
			hp := &headerOperator{delimiter: ','}
			he := entry.New()
			he.Body = header
			hp.parseInto(he)
			e.Attributes = he.Attributes
		}
		_ = p.first.ProcessBatch(context.Background(), []*entry.Entry{e})
		p.release() // a held row is this input's record too, and must not meet the next input's
		if len(p.out.got) > 1 {
			t.Fatalf("one row emitted %d records", len(p.out.got))
		}
		for _, got := range p.out.got {
			attrs := pcommon.NewMap()
			if err := attrs.FromRaw(got.Attributes); err != nil {
				t.Fatal(err)
			}
			r, ok := recordtest.Read(attrs)
			if !ok {
				t.Fatalf("emitted an invalid record: %v", got.Attributes)
			}
			if r.PromptBand == "" || r.Observer != record.ObserverGateway || r.Attempts < 1 {
				t.Fatalf("incomplete record: %+v", r)
			}
			if v, has := r.TTFT(); has && (v < 0 || math.IsInf(v, 0) || math.IsNaN(v)) {
				t.Fatalf("bad ttft %v", v)
			}
		}
	})
}
