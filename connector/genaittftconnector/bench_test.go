package genaittftconnector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// corpus is n stamped spans over targets × bands × outcomes, with lognormal
// times: deterministic, so runs compare.
func corpus(n, targets int, seed uint64) ptrace.Traces {
	rng := rand.New(rand.NewPCG(seed, 1))
	bands := []string{"<2k", "2k-16k", "16k-64k", ">=64k"}
	reqs := make([]req, n)
	for i := range reqs {
		t := rng.IntN(targets)
		ttft := math.Exp(math.Log(0.8) + 0.6*rng.NormFloat64())
		r := req{
			provider: fmt.Sprintf("provider-%d", t%4), model: fmt.Sprintf("model-%d", t), route: fmt.Sprintf("route-%d", t%3),
			band: bands[rng.IntN(len(bands))], ttft: ttft, chunk: ttft / 4, gap: ttft / 2, duration: ttft + 2 + rng.Float64()*4,
			attempts: 1,
		}
		switch x := rng.Float64(); {
		case x < 0.02:
			r.outcome, r.ttft, r.gap, r.duration = record.OutcomeTimeoutFirstToken, -1, 0, 10
		case x < 0.05:
			r.outcome, r.ttft, r.gap = record.OutcomeError, -1, 0
		case x < 0.07:
			r.attempts = 2
		}
		reqs[i] = r
	}
	return stampedTraces(reqs...)
}

// BenchmarkConsumeTraces reports the connector's cost per stamped span
// (ns/op is per span). The same corpus runs against spanmetrics in bench/.
func BenchmarkConsumeTraces(b *testing.B) {
	const spansPerBatch = 1000
	td := corpus(spansPerBatch, 50, 42)
	c := newTestConnector(b, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
	defer func() { require.NoError(b, c.Shutdown(context.Background())) }()
	ctx := context.Background()
	require.NoError(b, c.ConsumeTraces(ctx, td)) // create the series
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		require.NoError(b, c.ConsumeTraces(ctx, td))
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spansPerBatch), "ns/span")
}

// BenchmarkConsumeSmallBatches is the cost per span of batches as an agent
// without a batch processor hands them on, one request at a time: 10 plain
// spans, or 10 stamped ones (ns/op is per batch).
func BenchmarkConsumeSmallBatches(b *testing.B) {
	for _, bt := range []struct {
		name string
		td   ptrace.Traces
	}{
		{"plain", derivetest.PlainSpans(10)},
		{"stamped", corpus(10, 5, 42)},
	} {
		b.Run(bt.name, func(b *testing.B) {
			c := newTestConnector(b, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
			defer func() { require.NoError(b, c.Shutdown(context.Background())) }()
			ctx := context.Background()
			require.NoError(b, c.ConsumeTraces(ctx, bt.td)) // create the series
			b.ReportAllocs()
			for b.Loop() {
				// Not require.NoError: its t.Helper() would cost more than
				// a batch of plain spans.
				if err := c.ConsumeTraces(ctx, bt.td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bt.td.SpanCount()), "ns/span")
		})
	}
}

// BenchmarkFlush is the cost of one flush of the corpus' series.
func BenchmarkFlush(b *testing.B) {
	c := newTestConnector(b, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
	defer func() { require.NoError(b, c.Shutdown(context.Background())) }()
	for range 10 {
		require.NoError(b, c.ConsumeTraces(context.Background(), corpus(10_000, 50, 7)))
	}
	b.ReportAllocs()
	for b.Loop() {
		c.flush(context.Background())
	}
	b.ReportMetric(float64(c.agg.seriesCounts()[kindHistograms]), "hist-series")
}

// Memory depends on the series, not on how many requests they counted.
func TestMemoryFlatInRequestCount(t *testing.T) {
	total := 1_000_000
	if raceEnabled || testing.Short() {
		total = 200_000
	}
	const batch = 10_000
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	td := corpus(batch, 50, 42)
	ctx := context.Background()

	base := heapInUse()
	var atTenth uint64
	for i := 0; i < total/batch; i++ {
		require.NoError(t, c.ConsumeTraces(ctx, td))
		if i == total/batch/10-1 {
			atTenth = heapInUse()
		}
	}
	after := heapInUse()
	runtime.KeepAlive(td) // the corpus is in base: keep it in after too
	counts := c.agg.seriesCounts()
	series := counts[kindHistograms] + counts[kindRequests] + counts[kindWindows]
	t.Logf("%d spans: heap +%.2f MiB after %d, +%.2f MiB after %d; %d series %v: %.0f bytes/series",
		total, mib(atTenth)-mib(base), total/10, mib(after)-mib(base), total, series, counts,
		float64(after-base)/float64(series))
	assert.Less(t, math.Abs(mib(after)-mib(atTenth)), 1.0, "heap is flat in request count")
}

// BenchmarkConsumeParallel feeds spans the connector derives itself from
// every CPU at once, as concurrent pipelines do: run with -cpu 1,2 and
// compare ns/span. Derivation runs outside the aggregation lock, so it
// scales with the CPUs; only aggregation is serial.
func BenchmarkConsumeParallel(b *testing.B) {
	const spansPerBatch = 1000
	td := derivetest.ChunkedSpans(spansPerBatch, 30, 20) // derived by the connector itself
	c := newTestConnector(b, defaultConfig(), clockwork.NewFakeClockAt(testStart), consumertest.NewNop())
	defer func() { require.NoError(b, c.Shutdown(context.Background())) }()
	ctx := context.Background()
	require.NoError(b, c.ConsumeTraces(ctx, td))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.ConsumeTraces(ctx, td); err != nil {
				b.Error(err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spansPerBatch), "ns/span")
}

// BenchmarkRecordsTraces is traces→logs per span on 200 traces of an app's
// request: a server span, a handler span and a streamed call span (30
// ttft.chunk events). calls_under_app_spans has the call under the handler,
// so the batch's ancestor index is built and each call's ancestors are
// remembered (a late enclosing call is then known); root_calls has the
// same spans with the call as a root of its own, so neither runs. Every
// iteration gives the spans fresh trace ids: no call is a repeat.
func BenchmarkRecordsTraces(b *testing.B) {
	for _, nested := range []bool{false, true} {
		name := "root_calls"
		if nested {
			name = "calls_under_app_spans"
		}
		b.Run(name, func(b *testing.B) {
			const traces = 200
			td, spans := newSpans("app")
			for i := 0; i < traces; i++ {
				tr := byte(i)
				server := spans.AppendEmpty()
				server.SetName("GET /answer")
				server.SetKind(ptrace.SpanKindServer)
				server.SetTraceID(pcommon.TraceID{tr, 1})
				server.SetSpanID(pcommon.SpanID{tr, 1})
				server.Attributes().PutStr("http.request.method", "GET")
				handler := spans.AppendEmpty()
				handler.SetName("answer")
				handler.SetTraceID(pcommon.TraceID{tr, 1})
				handler.SetSpanID(pcommon.SpanID{tr, 2})
				handler.SetParentSpanID(pcommon.SpanID{tr, 1})
				var parent byte
				if nested {
					parent = 2
				}
				callSpan(spans, tr, 3, parent, "gpt-4.1", 0.8, 30)
			}
			set := connectortest.NewNopSettings(metadata.Type)
			c, err := NewFactory().CreateTracesToLogs(clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(testStart)),
				set, defaultConfig(), consumertest.NewNop())
			require.NoError(b, err)
			require.NoError(b, c.Start(context.Background(), componenttest.NewNopHost()))
			defer func() { require.NoError(b, c.Shutdown(context.Background())) }()
			ctx := context.Background()
			b.ReportAllocs()
			var n uint64
			for b.Loop() {
				n++
				for i := 0; i < spans.Len(); i++ {
					s := spans.At(i)
					id := s.TraceID()
					binary.LittleEndian.PutUint64(id[8:], n)
					s.SetTraceID(id)
				}
				require.NoError(b, c.ConsumeTraces(ctx, td))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans.Len()), "ns/span")
		})
	}
}
