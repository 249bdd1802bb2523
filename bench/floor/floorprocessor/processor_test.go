package floorprocessor

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"
)

// genaiTTFT stamps td with the genai_ttft processor as pipeline (b) runs it
// (bench/e2eload/collector.go).
func genaiTTFT(t *testing.T, td ptrace.Traces) {
	f := genaittftprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"derive": map[string]any{
		"prompt_bands": []any{2000, 16000, 64000}, "route_attribute": "ttft.route",
	}}).Unmarshal(cfg))
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
}

func floorStamp(t *testing.T, td ptrace.Traces) {
	f := NewFactory()
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
}

func keys(m pcommon.Map) []string {
	var ks []string
	for k, v := range m.All() {
		ks = append(ks, k+":"+v.Type().String())
	}
	sort.Strings(ks)
	return ks
}

func spans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestStampsTheKeysGenAITTFTDoes: on the benchmark's GenAI spans the floor
// writes the keys, with the types, that genai_ttft writes, and the same
// times; plain spans pass as they came. Otherwise (f) would not be the
// floor of (b).
func TestStampsTheKeysGenAITTFTDoes(t *testing.T) {
	build := func() ptrace.Traces {
		td := derivetest.ChunkedSpans(20, 30, 4)
		derivetest.PlainSpans(40).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		return td
	}
	want, got := build(), build()
	genaiTTFT(t, want)
	floorStamp(t, got)
	ws, gs := spans(want), spans(got)
	require.Len(t, gs, len(ws))
	plain := build()
	ps := spans(plain)
	stamped := 0
	for i := range ws {
		wa, ga := ws[i].Attributes(), gs[i].Attributes()
		require.Equal(t, keys(wa), keys(ga), "span %d", i)
		if wa.Len() == ps[i].Attributes().Len() {
			assert.Equal(t, ps[i].Attributes().AsRaw(), ga.AsRaw(), "plain span %d changed", i)
			continue
		}
		stamped++
		for _, k := range []string{"ttft.time_to_first_content", "ttft.time_to_first_chunk", "ttft.max_chunk_gap", "ttft.duration", "ttft.content_chunks"} {
			w, _ := wa.Get(k)
			g, _ := ga.Get(k)
			assert.Equal(t, w.AsRaw(), g.AsRaw(), "span %d %s", i, k)
		}
	}
	assert.Equal(t, 20, stamped)
}
