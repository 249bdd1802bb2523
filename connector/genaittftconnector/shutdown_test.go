package genaittftconnector

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func requestCount(md pmetric.Metrics) int64 {
	var n int64
	for _, p := range points(md, "ttft.requests") {
		n += int64(p.value)
	}
	return n
}

func TestShutdownFlushesWhatWasAggregated(t *testing.T) {
	for _, temporality := range []string{"cumulative", "delta"} {
		t.Run(temporality, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.AggregationTemporality = temporality
			clock := clockwork.NewFakeClockAt(testStart)
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, clock, sink)
			require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(repeat(gpt, 7)...)))
			// No tick yet: without the final flush these seven would be lost.
			require.Empty(t, sink.AllMetrics())
			require.NoError(t, c.Shutdown(context.Background()))
			require.Len(t, sink.AllMetrics(), 1)
			assert.Equal(t, int64(7), requestCount(sink.AllMetrics()[0]))
			// Idempotent: a second Shutdown sends nothing more.
			require.NoError(t, c.Shutdown(context.Background()))
			assert.Len(t, sink.AllMetrics(), 1)
		})
	}
}

func TestShutdownWithoutStartSendsNothing(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, defaultConfig(), clockwork.NewFakeClockAt(testStart), sink)
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Empty(t, sink.AllMetrics())
}

func TestFlushLetsIngestInBetweenSeries(t *testing.T) {
	// Many series, a flush running while batches keep arriving: every record
	// is counted exactly once across the delta flushes (none lost, none twice).
	cfg := defaultConfig()
	cfg.AggregationTemporality = "delta"
	cfg.AggregationCardinalityLimit = 100_000
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	var batches []req
	for i := range 3000 {
		batches = append(batches, with(gpt, func(r *req) {
			r.model = "m" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		}))
	}
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(batches...)))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	sent := int64(len(batches))
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(batches[:50]...)))
			mu.Lock()
			sent += 50
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for range 5 {
		c.flush(context.Background())
	}
	close(stop)
	wg.Wait()
	c.flush(context.Background())
	var got int64
	for _, md := range sink.AllMetrics() {
		got += requestCount(md)
	}
	assert.Equal(t, sent, got)
}
