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

// metrics_expiration shorter than flush_interval passes Validate, and every
// series whose last record came more than metrics_expiration before a tick
// was dropped at that tick before it was ever exported: the records were
// lost without a count or a log line. README: "Exported series idle for
// longer are dropped": a series is now exported before it can be dropped.
func TestExpirationShorterThanFlushIntervalKeepsRecords(t *testing.T) {
	for _, temporality := range []string{"cumulative", "delta"} {
		t.Run(temporality, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.FlushInterval = 15 * time.Second
			cfg.MetricsExpiration = 5 * time.Second
			cfg.AggregationTemporality = temporality
			if err := cfg.Validate(); err != nil {
				t.Logf("Validate refuses it (fine): %v", err)
				return
			}
			clock := clockwork.NewFakeClockAt(testStart)
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, cfg, clock, sink)
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt, gpt, gpt)))
			clock.Advance(cfg.FlushInterval) // the next tick
			c.flush(context.Background())
			var got int64
			for _, md := range sink.AllMetrics() {
				got = requestCount(md)
			}
			assert.Equal(t, int64(3), got, "ttft.requests exported at the first tick after the records")
			require.NoError(t, c.Shutdown(context.Background()))
		})
	}
}

// Even with metrics_expiration == flush_interval (Validate's own examples are
// 15s and 1h, nothing ties them), a record that arrived just after a tick was
// dropped at the next one when that tick came a little late.
func TestExpirationEqualToFlushIntervalLateTick(t *testing.T) {
	cfg := defaultConfig()
	cfg.FlushInterval = 15 * time.Second
	cfg.MetricsExpiration = 15 * time.Second
	require.NoError(t, cfg.Validate())
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	c.flush(context.Background()) // a tick
	clock.Advance(time.Millisecond)
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	clock.Advance(cfg.FlushInterval + 10*time.Millisecond) // the next tick, 11 ms late (a GC pause, a loaded machine)
	c.flush(context.Background())
	var got int64
	for _, md := range sink.AllMetrics() {
		got = requestCount(md)
	}
	assert.Equal(t, int64(1), got, "ttft.requests exported at the first tick after the record")
	require.NoError(t, c.Shutdown(context.Background()))
}
