package genaittftconnector

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// Delta temporality: a series idle for one flush must continue its stream,
// its next point starting where its previous point ended. ttft.requests
// did (start moves only when a point is written); the four histograms moved
// their start at every flush, written or not, and now each moves its own
// when it writes a point. contrib's prometheus exporter
// (v0.165.1, accumulateExponentialHistogram) accumulates a delta point only
// when its start equals the previous point's timestamp, and otherwise
// "treats misalignment as restart and reset": the native histogram's count
// falls back to the new interval's, while ttft_requests_total keeps
// counting.
func TestDeltaHistogramStartFollowsItsLastPoint(t *testing.T) {
	cfg := defaultConfig()
	cfg.AggregationTemporality = "delta"
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	noGap := with(gpt, func(r *req) { r.gap = 0 })

	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	clock.Advance(15 * time.Second)
	first := flushNow(t, c, sink)
	clock.Advance(15 * time.Second)
	flushNow(t, c, sink) // idle: nothing to write
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(noGap)))
	clock.Advance(15 * time.Second)
	third := flushNow(t, c, sink)

	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.max_chunk_gap"} {
		p1 := points(first, name)
		require.Len(t, p1, 1, name)
		p3 := points(third, name)
		if name == "ttft.max_chunk_gap" {
			// noGap had none: the gap histogram writes nothing now, and
			// its next point must still start at p1's end.
			require.Empty(t, p3, name)
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
			clock.Advance(15 * time.Second)
			p3 = points(flushNow(t, c, sink), name)
		}
		require.Len(t, p3, 1, name)
		assert.Equal(t, p1[0].ts.AsTime(), p3[0].start.AsTime(), "%s: the point after an idle flush starts where the previous point ended", name)
	}
}
