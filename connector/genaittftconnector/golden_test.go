package genaittftconnector

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
)

// -update rewrites every golden output.yaml from what the connector emits;
// review the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/golden/*/output.yaml")

var compareOpts = []pmetrictest.CompareMetricsOption{
	pmetrictest.IgnoreTimestamp(),
	pmetrictest.IgnoreStartTimestamp(),
	pmetrictest.IgnoreMetricDataPointsOrder(),
	pmetrictest.IgnoreMetricsOrder(),
}

// goldenRun feeds a case's inputs to a fresh connector and flushes once.
func goldenRun(t *testing.T, dir string) (*ttftConnector, pmetric.Metrics) {
	t.Helper()
	cfg := loadConfig(t, testdataPath("golden", dir, "config.yaml"))
	clock := clockwork.NewFakeClockAt(testStart)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clock, sink)
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	feedGoldenInputs(t, c, dir)
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 1, "one flush, one batch of metrics")
	return c, sink.AllMetrics()[0]
}

func feedGoldenInputs(t *testing.T, c *ttftConnector, dir string) {
	t.Helper()
	fed := false
	for _, name := range []string{"traces.yaml", "traces.json"} {
		if _, err := os.Stat(testdataPath("golden", dir, name)); err == nil {
			td, err := golden.ReadTraces(testdataPath("golden", dir, name))
			require.NoError(t, err)
			require.NoError(t, c.ConsumeTraces(context.Background(), td))
			fed = true
		}
	}
	if _, err := os.Stat(testdataPath("golden", dir, "logs.yaml")); err == nil {
		ld, err := golden.ReadLogs(testdataPath("golden", dir, "logs.yaml"))
		require.NoError(t, err)
		require.NoError(t, c.ConsumeLogs(context.Background(), ld))
		fed = true
	}
	require.True(t, fed, "case %s has no input", dir)
}

func TestGolden(t *testing.T) {
	for _, dir := range []string{"stamped_spans", "derived_spans", "gateway_logs", "delta"} {
		t.Run(dir, func(t *testing.T) {
			_, got := goldenRun(t, dir)
			want := testdataPath("golden", dir, "output.yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, want, got))
				return
			}
			expected, err := golden.ReadMetrics(want)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(expected, got, compareOpts...))
		})
	}
}

// In delta temporality a flush after re-feeding the same input equals the
// first flush (state was reset), and a flush with no input emits nothing.
func TestGoldenDeltaResetsAfterFlush(t *testing.T) {
	c, first := goldenRun(t, "delta")
	sink := c.next.(*consumertest.MetricsSink)

	// An idle interval: no histogram or counter points, only the window gauges.
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 2)
	idle := sink.AllMetrics()[1]
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.duration"} {
		_, ok := findMetric(idle, name)
		assert.False(t, ok, "%s after an idle delta interval", name)
	}
	_, ok := findMetric(idle, "ttft.window.samples")
	assert.True(t, ok, "window gauges do not depend on temporality")

	feedGoldenInputs(t, c, "delta")
	c.flush(context.Background())
	require.Len(t, sink.AllMetrics(), 3)
	// The windows now hold both feeds; only the delta metrics must repeat.
	got := sink.AllMetrics()[2]
	deltaMetrics := []string{"ttft.requests", "ttft.time_to_first_token", "ttft.time_to_first_chunk", "ttft.max_chunk_gap", "ttft.duration"}
	require.NoError(t, pmetrictest.CompareMetrics(subset(first, deltaMetrics...), subset(got, deltaMetrics...), compareOpts...))
}

// subset copies the named metrics of md into a new Metrics.
func subset(md pmetric.Metrics, names ...string) pmetric.Metrics {
	out := pmetric.NewMetrics()
	ms := out.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	for _, n := range names {
		if m, ok := findMetric(md, n); ok {
			m.CopyTo(ms.AppendEmpty())
		}
	}
	return out
}
