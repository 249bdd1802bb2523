package genaittftconnector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// spreadHeapPerSeries feeds `series` targets two spans per target per
// window slice over a whole default window (24 h in 24 slices, driven by a
// fake clock), with TTFT, gap and duration drawn by value, and returns the
// live heap per series once the window is full.
func spreadHeapPerSeries(t *testing.T, series int, value func(r *rand.Rand, i int) float64) float64 {
	t.Helper()
	cfg := defaultConfig()
	cfg.MinSamples = 1
	clock := clockwork.NewFakeClockAt(testStart)
	c := newTestConnector(t, cfg, clock, consumertest.NewNop())
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	reqs := make([]req, series)
	for i := range reqs {
		reqs[i] = with(gpt, func(r *req) { r.model = fmt.Sprintf("model-%05d", i) })
	}
	td := stampedTraces(reqs...)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	r := rand.New(rand.NewPCG(1, 2))
	before := heapInUse()
	n := 0
	for slice := 0; slice < 24; slice++ {
		for rep := 0; rep < 2; rep++ {
			for i := 0; i < spans.Len(); i++ {
				setTimes(spans.At(i), value(r, n), value(r, n+1), value(r, n+2))
				n++
			}
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
		}
		c.flush(context.Background())
		clock.Advance(time.Hour)
	}
	return float64(heapInUse()-before) / float64(series)
}

// setTimes stamps a consistent record: first content ttft, gap ≤ duration.
func setTimes(s ptrace.Span, ttft, gap, extra float64) {
	a := s.Attributes()
	a.PutDouble(record.KeyTimeToFirstContent, ttft)
	a.PutDouble(record.KeyTimeToFirstChunk, ttft)
	a.PutDouble(record.KeyMaxChunkGap, gap)
	a.PutDouble(record.KeyDuration, ttft+gap+extra)
}

func TestWindowMemoryPerSeriesIsBoundedWhateverTheValues(t *testing.T) {
	series := 5000
	if raceEnabled || testing.Short() {
		series = 500
	}
	// The attack of the issue: every value alternates between 1 µs and 3,000 s.
	adversarial := spreadHeapPerSeries(t, series, func(_ *rand.Rand, i int) float64 {
		if i%2 == 0 {
			return 1e-6
		}
		return 3000
	})
	// Realistic: lognormal TTFT around 0.8 s.
	realistic := spreadHeapPerSeries(t, series, func(r *rand.Rand, _ int) float64 {
		return 0.8 * (1 + r.ExpFloat64())
	})
	t.Logf("%d series, 2 spans per series per slice over 24 slices: %.1f KB live per series adversarial, %.1f KB realistic",
		series, adversarial/1e3, realistic/1e3)
	// Before sparse slices the adversarial spread held ~295 KB per series.
	assert.Less(t, adversarial, 64e3, "adversarial bytes per series")
	assert.Less(t, realistic, 64e3, "realistic bytes per series")
}

// BenchmarkFlushStall measures the longest ingest stall a flush causes at
// 5,000 adversarial series: one-span batches are consumed in a loop while
// the flush runs, so a batch's latency is the time it waited for the
// aggregation lock (plus a few µs). The same loop without a flush gives the
// floor of the machine. Reported: stall-max-ns (during flushes),
// floor-max-ns, and lock-hold-max-ns (the longest stretch a flush held the
// lock, scheduling included).
//
//	go test -run '^$' -bench FlushStall -benchtime 5x ./connector/genaittftconnector
func BenchmarkFlushStall(b *testing.B) {
	cfg := defaultConfig()
	cfg.MinSamples = 1
	clock := clockwork.NewFakeClockAt(testStart)
	c := newTestConnector(b, cfg, clock, consumertest.NewNop())
	defer func() { _ = c.Shutdown(context.Background()) }()
	reqs := make([]req, 5000)
	for i := range reqs {
		reqs[i] = with(gpt, func(r *req) { r.model = fmt.Sprintf("model-%05d", i) })
	}
	td := stampedTraces(reqs...)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for slice := 0; slice < 24; slice++ {
		for rep := 0; rep < 2; rep++ {
			for i := 0; i < spans.Len(); i++ {
				v := 1e-6
				if (i+rep)%2 == 1 {
					v = 3000
				}
				setTimes(spans.At(i), v, v, 1)
			}
			require.NoError(b, c.ConsumeTraces(context.Background(), td))
		}
		clock.Advance(time.Hour)
	}
	one := stampedTraces(reqs[:1]...)
	longest := func(during func()) time.Duration {
		return longestWhile(func() { _ = c.ConsumeTraces(context.Background(), one) }, during)
	}
	var stall, floor, hold time.Duration
	var took time.Duration
	b.ResetTimer()
	for b.Loop() {
		stall = max(stall, longest(func() {
			s := time.Now()
			c.flush(context.Background())
			took = time.Since(s)
			hold = max(hold, c.lastFlushHold)
		}))
		floor = max(floor, longest(func() { time.Sleep(took) }))
	}
	b.ReportMetric(float64(stall.Nanoseconds()), "stall-max-ns")
	b.ReportMetric(float64(floor.Nanoseconds()), "floor-max-ns")
	b.ReportMetric(float64(hold.Nanoseconds()), "lock-hold-max-ns")
}

// BenchmarkFlushStallHistograms is BenchmarkFlushStall for the windows of
// histogram inputs: 2,000 targets, each fed a 1,024-bucket exponential
// point in each of 24 slices, while one-point batches are consumed in a
// loop. Before the flush paused between these windows too, it held the lock
// for their whole build (415 ms at 2,000 targets).
//
//	go test -run '^$' -bench FlushStallHistograms -benchtime 3x ./connector/genaittftconnector
func BenchmarkFlushStallHistograms(b *testing.B) {
	cfg := defaultConfig()
	clock := clockwork.NewFakeClockAt(testStart)
	c, _ := newMetricsConnector(b, cfg, clock, nil)
	const targets = 2000
	wide := make([]uint64, 1024)
	for i := range wide {
		wide[i] = 1
	}
	md := pmetric.NewMetrics()
	for i := 0; i < targets; i++ {
		dp := clientExpoPoint(md, "app", fmt.Sprintf("model-%05d", i))
		dp.SetScale(8)
		dp.Positive().SetOffset(-512)
		dp.Positive().BucketCounts().FromRaw(wide)
		dp.SetCount(uint64(len(wide)))
	}
	for slice := 0; slice < 24; slice++ {
		require.NoError(b, c.ConsumeMetrics(context.Background(), md))
		clock.Advance(time.Hour - time.Minute)
	}
	one := pmetric.NewMetrics()
	dp := clientExpoPoint(one, "app", "model-00000")
	dp.SetScale(8)
	dp.Positive().BucketCounts().FromRaw([]uint64{1})
	dp.SetCount(1)
	var stall, hold time.Duration
	b.ResetTimer()
	for b.Loop() {
		stall = max(stall, longestWhile(func() { _ = c.ConsumeMetrics(context.Background(), one) }, func() {
			c.flush(context.Background())
			hold = max(hold, c.lastFlushHold)
		}))
	}
	b.ReportMetric(float64(stall.Nanoseconds()), "stall-max-ns")
	b.ReportMetric(float64(hold.Nanoseconds()), "lock-hold-max-ns")
}

// longestWhile runs consume in a loop on another goroutine while during
// runs, and returns the longest one consume call took.
func longestWhile(consume, during func()) time.Duration {
	stop, done := make(chan struct{}), make(chan time.Duration)
	go func() {
		var m time.Duration
		for {
			select {
			case <-stop:
				done <- m
				return
			default:
			}
			s := time.Now()
			consume()
			m = max(m, time.Since(s))
		}
	}()
	during()
	close(stop)
	return <-done
}
