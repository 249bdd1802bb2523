package genaittftconnector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A downstream exporter that retries a refused export (otlp_http's
// retry_on_failure without a sending queue) blocks in ConsumeMetrics until
// its context ends or it is shut down itself, which the collector does only
// after this connector stopped. The collector shuts down with
// context.Background() (otelcol: col.shutdown(context.Background())).
// Shutdown must not wait for ever on the flush loop's send.
func TestShutdownWithBlockedDownstreamReturns(t *testing.T) {
	cfg := defaultConfig()
	cfg.FlushInterval = time.Second
	clock := clockwork.NewFakeClockAt(testStart)
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	defer close(release)
	next, err := consumer.NewMetrics(func(ctx context.Context, _ pmetric.Metrics) error {
		entered <- struct{}{}
		select {
		case <-ctx.Done(): // the exporter's retry gives up when its context ends
			return ctx.Err()
		case <-release: // or when the exporter is shut down
			return context.Canceled
		}
	})
	require.NoError(t, err)
	c := newTestConnector(t, cfg, clock, next)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
	require.NoError(t, clock.BlockUntilContext(context.Background(), 1))
	clock.Advance(cfg.FlushInterval)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the tick's flush never reached the consumer")
	}
	done := make(chan error, 1)
	go func() { done <- c.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown still blocked 30s later: it waits for the flush loop, whose send can only end with its context, which nothing cancels")
	}
}

// TestRefusedFlushIsCounted: a flush the next consumer refuses is counted
// in points_refused. Under cumulative temporality the next flush carries
// its records again; under delta its interval is lost (documented), and
// the count is how a user sees it.
func TestRefusedFlushIsCounted(t *testing.T) {
	for _, tc := range []struct {
		temporality string
		delivered   int64 // ttft.requests the backend ends up with
	}{{"cumulative", 4}, {"delta", 1}} {
		t.Run(tc.temporality, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.AggregationTemporality = tc.temporality
			clock := clockwork.NewFakeClockAt(testStart)
			tel := componenttest.NewTelemetry()
			defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
			var delivered, refusedPoints int64
			refuse := true
			next, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
				if refuse {
					refusedPoints = int64(md.DataPointCount())
					return errors.New("the backend is down")
				}
				if tc.temporality == "delta" {
					delivered += requestCount(md)
				} else {
					delivered = requestCount(md)
				}
				return nil
			})
			require.NoError(t, err)
			c := newTestConnectorWith(t, testSettings(tel), cfg, clock, next)
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt, gpt, gpt)))
			c.flush(context.Background()) // refused
			refuse = false
			require.NoError(t, c.ConsumeTraces(context.Background(), stampedTraces(gpt)))
			c.flush(context.Background())
			require.NoError(t, c.Shutdown(context.Background()))
			assert.Equal(t, tc.delivered, delivered)
			m, err := tel.GetMetric("otelcol_connector_genai_ttft_points_refused")
			require.NoError(t, err)
			assert.Positive(t, refusedPoints)
			assert.Equal(t, refusedPoints, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		})
	}
}
