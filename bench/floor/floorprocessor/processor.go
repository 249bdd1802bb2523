// Package floorprocessor is the ttft_floor processor of the end-to-end
// benchmark's floor pipeline (see package floor): a key pass on every span
// and, on GenAI spans, the chunk loop and the stamping, with no rule.
package floorprocessor // import "github.com/otelcol-ttft/otelcol-ttft/bench/floor/floorprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-ttft/otelcol-ttft/bench/floor"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// NewFactory returns the ttft_floor processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(floor.Type,
		floor.NewConfig,
		processor.WithTraces(createTraces, component.StabilityLevelDevelopment))
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	return processorhelper.NewTraces(ctx, set, cfg, next, Process,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

// genaiPrefix starts the key that makes a span a GenAI span here.
const genaiPrefix = "gen_ai."

// template is the record's constant part: what genai_ttft derives for a
// complete streamed call seen by its client (TestStampsTheKeysGenAITTFTDoes
// checks that the keys are the same).
var template = record.Record{
	HasTimeToFirstContent: true, HasTimeToFirstChunk: true, HasMaxChunkGap: true, HasDuration: true,
	HasContentChunks: true,
	PromptTokens:     1000, HasPromptTokens: true,
	OutputTokens: 200, HasOutputTokens: true,
	Streamed: true, StreamedKnown: true,
	Outcome:    record.OutcomeComplete,
	PromptBand: "<2000",
	Attempts:   1,
	MeasuredAt: record.MeasuredAtFirstContent,
	Observer:   record.ObserverClient,
	Route:      "support",
	Source:     derive.EventChunk,
}

// Process stamps every span that has a gen_ai.* key.
func Process(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				stamp(spans.At(k))
			}
		}
	}
	return td, nil
}

func stamp(span ptrace.Span) {
	attrs := span.Attributes()
	genai := false
	// Map.Range with a literal, as genai_ttft's own key pass.
	attrs.Range(func(k string, _ pcommon.Value) bool {
		genai = len(k) > len(genaiPrefix) && k[:len(genaiPrefix)] == genaiPrefix
		return !genai
	})
	if !genai {
		return
	}
	start, end := uint64(span.StartTimestamp()), uint64(span.EndTimestamp())
	firstAny, firstContent, maxGap, content, _ := derive.ChunkSums(span.Events(), start, end+1e6)
	rec := template
	rec.TimeToFirstContent = float64(firstContent+1-start) / 1e9
	rec.TimeToFirstChunk = float64(firstAny+1-start) / 1e9
	rec.MaxChunkGap = float64(maxGap) / 1e9
	rec.Duration = float64(end-start) / 1e9
	rec.ContentChunks = content
	rec.Write(attrs)
}
