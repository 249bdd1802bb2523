package genaittftprocessor // import "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

type ttftProcessor struct {
	deriver   *derive.Deriver
	dropChunk bool
	tel       *telemetry

	// Built once: method values would allocate per batch.
	traceVisitor derive.TraceVisitor
	logVisitor   derive.LogVisitor
	isChunk      func(ptrace.SpanEvent) bool
}

func newProcessor(set processor.Settings, cfg *Config) (*ttftProcessor, error) {
	d, err := derive.New(cfg.Derive)
	if err != nil {
		return nil, fmt.Errorf("genai_ttft: %w", err)
	}
	tel, err := newTelemetry(set.TelemetrySettings, cfg.SkippedLogInterval)
	if err != nil {
		return nil, fmt.Errorf("genai_ttft: own telemetry: %w", err)
	}
	p := &ttftProcessor{deriver: d, dropChunk: cfg.DropChunkEvents, tel: tel}
	// Records read back (stamped upstream) are kept as they are.
	p.traceVisitor = derive.TraceVisitor{Record: p.stampSpan, Reread: keepSpan, Nested: p.markNested}
	p.logVisitor = derive.LogVisitor{Record: p.stampLog, Reread: keepLog}
	p.isChunk = func(ev ptrace.SpanEvent) bool { return derive.IsChunkEvent(ev.Name()) }
	return p, nil
}

// batchState is per-batch counting the visitors add to; the processor may
// run batches concurrently, so it lives on the stack of each call.
type batchState struct{ dropped int64 }

func (p *ttftProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	var bs batchState
	v := p.traceVisitor
	if p.dropChunk {
		v = derive.TraceVisitor{
			Record: func(res pcommon.Resource, span ptrace.Span, rec *record.Record) {
				p.stampSpan(res, span, rec)
				bs.dropped += p.dropChunkEvents(span)
			},
			Reread: func(_ pcommon.Resource, span ptrace.Span, _ *record.Record) {
				bs.dropped += p.dropChunkEvents(span)
			},
			Nested: func(res pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) {
				p.markNested(res, span, outer)
				bs.dropped += p.dropChunkEvents(span)
			},
			// Folded upstream (ttft.nested_in): its chunk events go as
			// those of a span folded here, or of a record read back.
			RereadNested: func(_ pcommon.Resource, span ptrace.Span) {
				bs.dropped += p.dropChunkEvents(span)
			},
		}
	}
	st := p.deriver.TracesWith(td, v)
	p.tel.report(ctx, signalTraces, &st, bs.dropped)
	return td, nil
}

func (p *ttftProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	st := p.deriver.LogsWith(ld, p.logVisitor)
	p.tel.report(ctx, signalLogs, &st, 0)
	return ld, nil
}

func (p *ttftProcessor) stampSpan(_ pcommon.Resource, span ptrace.Span, rec *record.Record) {
	rec.Write(span.Attributes())
}

func keepSpan(pcommon.Resource, ptrace.Span, *record.Record)   {}
func keepLog(pcommon.Resource, plog.LogRecord, *record.Record) {}

func (p *ttftProcessor) markNested(_ pcommon.Resource, span ptrace.Span, outer pcommon.SpanID) {
	span.Attributes().PutStr(record.KeyNestedIn, outer.String())
}

func (p *ttftProcessor) stampLog(_ pcommon.Resource, lr plog.LogRecord, rec *record.Record) {
	rec.Write(lr.Attributes())
}

// dropChunkEvents removes the per-chunk events of a span already derived.
func (p *ttftProcessor) dropChunkEvents(span ptrace.Span) int64 {
	events := span.Events()
	before := events.Len()
	if before == 0 {
		return 0
	}
	events.RemoveIf(p.isChunk)
	return int64(before - events.Len())
}

func (p *ttftProcessor) shutdown(context.Context) error { return nil }
