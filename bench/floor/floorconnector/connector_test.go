package floorconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-ttft/otelcol-ttft/bench/floor/floorprocessor"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
)

// TestReadsEveryRecord: of 30 stamped GenAI spans among 60 plain ones the
// connector reads 30 records and sums their times to first content.
func TestReadsEveryRecord(t *testing.T) {
	td := derivetest.ChunkedSpans(30, 30, 3)
	derivetest.PlainSpans(60).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	_, err := floorprocessor.Process(context.Background(), td)
	require.NoError(t, err)
	var want float64
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if v, ok := s.Attributes().Get("ttft.time_to_first_content"); ok {
					want += v.Double()
				}
			}
		}
	}
	require.Positive(t, want)

	f := NewFactory()
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.ConsumeTraces(context.Background(), td))
	require.NoError(t, c.Shutdown(context.Background()))
	n, sum := c.(*Connector).Records()
	assert.Equal(t, int64(60), n)
	assert.InDelta(t, 2*want, sum, 1e-9)
}
