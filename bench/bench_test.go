package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
)

const (
	spansPerBatch = 1000
	targets       = 50
)

// Dimensions both connectors split by: genai_ttft's defaults plus the fixed
// attributes it adds (ttft.attempts stands in for ttft.failed_over).
var dims = []string{
	"gen_ai.provider.name", "gen_ai.request.model", "ttft.route",
	"ttft.outcome", "ttft.prompt_band", "ttft.measured_at", "ttft.observer", "ttft.attempts",
}

func newGenAITTFT(tb testing.TB) connector.Traces {
	f := genaittftconnector.NewFactory()
	cfg := f.CreateDefaultConfig()
	ctx := clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(corpusStart))
	c, err := f.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	return c
}

func newSpanmetrics(tb testing.TB) connector.Traces {
	f := spanmetricsconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*spanmetricsconnector.Config)
	for _, d := range dims[3:] {
		cfg.Dimensions = append(cfg.Dimensions, spanmetricsconnector.Dimension{Name: d})
	}
	// The first three are genai_ttft's dimensions proper.
	for _, d := range dims[:3] {
		cfg.Dimensions = append(cfg.Dimensions, spanmetricsconnector.Dimension{Name: d})
	}
	require.NoError(tb, cfg.Histogram.Unit.UnmarshalText([]byte("s")))
	cfg.Histogram.Exponential = configoptional.Some(spanmetricsconnector.ExponentialHistogramConfig{MaxSize: 160})
	cfg.AggregationCardinalityLimit = 5000
	cfg.MetricsFlushInterval = 15 * time.Second
	require.NoError(tb, cfg.Validate())
	ctx := clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(corpusStart))
	c, err := f.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	return c
}

var impls = []struct {
	name string
	new  func(testing.TB) connector.Traces
}{
	{"genai_ttft", newGenAITTFT},
	{"spanmetrics", newSpanmetrics},
}

// BenchmarkConsumeTraces: ns/span for the same stamped spans through each
// connector (aggregation only; flushes are not in the loop).
func BenchmarkConsumeTraces(b *testing.B) {
	td := Corpus(spansPerBatch, targets, 42)
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			c := impl.new(b)
			ctx := context.Background()
			require.NoError(b, c.Start(ctx, nopHost{}))
			defer func() { require.NoError(b, c.Shutdown(ctx)) }()
			require.NoError(b, c.ConsumeTraces(ctx, td)) // create the series
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				require.NoError(b, c.ConsumeTraces(ctx, td))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spansPerBatch), "ns/span")
		})
	}
}

// BenchmarkBytesPerSeries: heap held per series after a corpus of 100k
// spans (one op = build a connector and feed it).
func BenchmarkBytesPerSeries(b *testing.B) {
	td := Corpus(10_000, 500, 7)
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			ctx := context.Background()
			var perSpanSeries float64
			for b.Loop() {
				base := heap()
				c := impl.new(b)
				for range 10 {
					require.NoError(b, c.ConsumeTraces(ctx, td))
				}
				perSpanSeries = float64(heap()-base) / float64(seriesIn(td))
				runtime.KeepAlive(c)
				require.NoError(b, c.Shutdown(ctx))
			}
			b.ReportMetric(perSpanSeries, "B/series")
		})
	}
}

// seriesIn counts distinct histogram attribute sets in td: the series both
// connectors create (genai_ttft also keeps a counter and a window per target).
func seriesIn(td ptrace.Traces) int {
	seen := map[string]bool{}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		k := ""
		for _, d := range dims {
			v, _ := spans.At(i).Attributes().Get(d)
			k += v.AsString() + "\x00"
		}
		seen[k] = true
	}
	return len(seen)
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

type nopHost struct{}

func (nopHost) GetExtensions() map[component.ID]component.Component { return nil }

// BenchmarkInterleaved alternates batches between the two connectors inside
// one loop and times each call, so load from other processes on a shared
// machine hits both alike. It reports each one's ns/span and the speedup,
// and on Linux the same in the thread's CPU time (cpu-ns/span,
// cpu-speedup): that leaves out the time the thread waited for a core,
// which on a loaded machine is most of the wall clock's spread, but not
// what another job did to the caches meanwhile. Both count the garbage
// collection each call does itself (assists, write barriers), neither the
// background collector's threads.
func BenchmarkInterleaved(b *testing.B) {
	td := Corpus(spansPerBatch, targets, 42)
	ctx := context.Background()
	ours, theirs := newGenAITTFT(b), newSpanmetrics(b)
	for _, c := range []connector.Traces{ours, theirs} {
		require.NoError(b, c.Start(ctx, nopHost{}))
		require.NoError(b, c.ConsumeTraces(ctx, td))
	}
	defer func() {
		require.NoError(b, ours.Shutdown(ctx))
		require.NoError(b, theirs.Shutdown(ctx))
	}()
	runtime.LockOSThread() // threadCPU reads this goroutine's thread
	defer runtime.UnlockOSThread()
	var oursNs, theirsNs, oursCPU, theirsCPU time.Duration
	n := 0
	for b.Loop() {
		t0, c0 := time.Now(), threadCPU()
		require.NoError(b, ours.ConsumeTraces(ctx, td))
		t1, c1 := time.Now(), threadCPU()
		require.NoError(b, theirs.ConsumeTraces(ctx, td))
		oursNs += t1.Sub(t0)
		theirsNs += time.Since(t1)
		c2 := threadCPU()
		oursCPU += c1 - c0
		theirsCPU += c2 - c1
		n++
	}
	spans := float64(n * spansPerBatch)
	b.ReportMetric(float64(oursNs.Nanoseconds())/spans, "genai_ttft-ns/span")
	b.ReportMetric(float64(theirsNs.Nanoseconds())/spans, "spanmetrics-ns/span")
	b.ReportMetric(float64(theirsNs)/float64(oursNs), "speedup")
	if haveThreadCPU {
		b.ReportMetric(float64(oursCPU.Nanoseconds())/spans, "genai_ttft-cpu-ns/span")
		b.ReportMetric(float64(theirsCPU.Nanoseconds())/spans, "spanmetrics-cpu-ns/span")
		b.ReportMetric(float64(theirsCPU)/float64(oursCPU), "cpu-speedup")
	}
}

// BenchmarkInterleavedPartner alternates our connector with a partner, as
// BenchmarkInterleaved alternates it with spanmetrics, and reports our
// calls' time (ns/span, cpu-ns/span) after each partner: none; one that
// walks 4 MiB (cache: more than a core's L2, and no allocation); one that
// allocates what a batch of spanmetrics allocates, 3,000 objects and ~360 KB,
// and keeps none (garbage); and spanmetrics itself. What the garbage alone
// adds to our calls is garbage collection that another component's
// allocations started: in one process both share one heap.
func BenchmarkInterleavedPartner(b *testing.B) {
	td := Corpus(spansPerBatch, targets, 42)
	ctx := context.Background()
	lines := make([]byte, 4<<20)
	var kept []*[112]byte
	partners := []struct {
		name string
		new  func(testing.TB) func()
	}{
		{"none", func(testing.TB) func() { return func() {} }},
		{"cache", func(testing.TB) func() {
			return func() {
				for i := 0; i < len(lines); i += 64 {
					lines[i]++
				}
			}
		}},
		{"garbage", func(testing.TB) func() {
			return func() {
				s := make([]*[112]byte, 0, 2999)
				for range cap(s) {
					s = append(s, new([112]byte))
				}
				kept = s // the next call's garbage
			}
		}},
		{"spanmetrics", func(tb testing.TB) func() {
			c := newSpanmetrics(tb)
			require.NoError(tb, c.Start(ctx, nopHost{}))
			tb.Cleanup(func() { require.NoError(tb, c.Shutdown(ctx)) })
			return func() { require.NoError(tb, c.ConsumeTraces(ctx, td)) }
		}},
	}
	for _, p := range partners {
		b.Run(p.name, func(b *testing.B) {
			ours := newGenAITTFT(b)
			require.NoError(b, ours.Start(ctx, nopHost{}))
			defer func() { require.NoError(b, ours.Shutdown(ctx)) }()
			require.NoError(b, ours.ConsumeTraces(ctx, td))
			partner := p.new(b)
			partner()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ns, cpu time.Duration
			n := 0
			for b.Loop() {
				t0, c0 := time.Now(), threadCPU()
				require.NoError(b, ours.ConsumeTraces(ctx, td))
				ns += time.Since(t0)
				cpu += threadCPU() - c0
				partner()
				n++
			}
			spans := float64(n * spansPerBatch)
			b.ReportMetric(float64(ns.Nanoseconds())/spans, "genai_ttft-ns/span")
			if haveThreadCPU {
				b.ReportMetric(float64(cpu.Nanoseconds())/spans, "genai_ttft-cpu-ns/span")
			}
			runtime.KeepAlive(kept)
		})
	}
}
