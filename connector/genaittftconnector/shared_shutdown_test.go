package genaittftconnector

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
)

// The collector shuts its components down in topological order
// (service/internal/graph ShutdownAll: topo.Sort, which does not order
// independent nodes). The traces→metrics and logs→metrics nodes of one
// connector are independent: the traces node may be shut down while the logs
// pipeline's batch processor still holds a batch, which it hands on when it is
// shut down next. config/default.yaml is such a graph (a batch processor on
// both pipelines). Every record handed to the connector before its last
// instance stops must reach the metrics pipeline (README "A graceful stop
// flushes").
func TestSharedShutdownKeepsOtherPipelinesLastBatch(t *testing.T) {
	cfg := defaultConfig()
	set := connectortest.NewNopSettings(metadata.Type)
	sink := new(consumertest.MetricsSink)
	ctx := clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(testStart))
	f := NewFactory()
	tc, err := f.CreateTracesToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	lc, err := f.CreateLogsToMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, lc.Start(context.Background(), host))
	require.NoError(t, tc.Start(context.Background(), host))

	require.NoError(t, tc.ConsumeTraces(context.Background(), stampedTraces(gpt, gpt)))
	// The traces pipeline is done: its connector node stops first.
	require.NoError(t, tc.Shutdown(context.Background()))
	// The logs pipeline's batch processor flushes its last batch on its own
	// Shutdown, after that; the metrics exporters are stopped only after
	// every connector node.
	require.NoError(t, lc.ConsumeLogs(context.Background(), stampedLogs(gpt, gpt, gpt)))
	require.NoError(t, lc.Shutdown(context.Background()))

	var last int64
	for _, md := range sink.AllMetrics() {
		last = requestCount(md) // cumulative: the last export holds everything
	}
	assert.Equal(t, int64(5), last, "ttft.requests in the last export: the logs pipeline's last batch was aggregated after the final flush and never exported")
}
