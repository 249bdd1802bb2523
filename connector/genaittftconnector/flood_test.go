package genaittftconnector

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A flood of distinct model names must not grow memory past the cardinality
// limit: the overflow series absorbs it and the series that existed before
// keep exact counts.
func TestCardinalityFloodIsBounded(t *testing.T) {
	floodModels := 1_000_000
	if raceEnabled || testing.Short() {
		floodModels = 100_000
	}
	const batch = 1000
	const normalPerBatch = 10
	cfg := defaultConfig() // aggregation_cardinality_limit 5000
	limit := cfg.AggregationCardinalityLimit
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, cfg, clockwork.NewFakeClockAt(testStart), sink)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	// One batch reused: its first spans are renamed to a new model each time.
	reqs := repeat(gpt, batch+normalPerBatch)
	td := stampedTraces(reqs...)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	ctx := context.Background()

	// The normal target exists before the flood.
	require.NoError(t, c.ConsumeTraces(ctx, stampedTraces(gpt)))
	before := heapInUse()
	var atTenth uint64
	for b := 0; b < floodModels/batch; b++ {
		for i := 0; i < batch; i++ {
			spans.At(i).Attributes().PutStr(record.KeyModel, fmt.Sprintf("flood-%d", b*batch+i))
		}
		require.NoError(t, c.ConsumeTraces(ctx, td))
		if b == floodModels/batch/10-1 {
			atTenth = heapInUse()
		}
	}
	after := heapInUse()
	runtime.KeepAlive(td)
	counts := c.agg.seriesCounts()
	t.Logf("flood of %d model names, limit %d: heap %.1f MiB before, %.1f MiB after %d, %.1f MiB after all (delta %.1f MiB); series %v",
		floodModels, limit, mib(before), mib(atTenth), floodModels/10, mib(after), mib(after)-mib(before), counts)

	assert.Equal(t, [numSeriesKinds]int64{int64(limit) + 1, int64(limit) + 1, int64(limit)}, counts,
		"histograms and requests: limit + 1 overflow series; windows: limit")
	// Generous bound: far below what 1M series would take (hundreds of MiB).
	assert.Less(t, mib(after)-mib(before), 64.0, "heap grows with the limit, not the flood")
	assert.Less(t, mib(after)-mib(atTenth), 4.0, "no growth once the limit is reached")

	md := flushNow(t, c, sink)
	overflow := map[string]any{attrOverflow: true}
	normal := map[string]any{record.KeyModel: "gpt-4o"}
	wantNormal := float64(1 + floodModels/batch*normalPerBatch)
	wantOverflow := float64(floodModels - (limit - 1))
	for _, name := range []string{"ttft.requests", "ttft.time_to_first_token", "ttft.duration"} {
		assert.Equal(t, wantOverflow, value(t, md, name, overflow), "%s: the overflow series counts the rest", name)
		assert.Equal(t, wantNormal, value(t, md, name, normal), "%s: the normal series is unharmed", name)
	}
	assert.Equal(t, wantNormal, value(t, md, "ttft.window.samples", map[string]any{record.KeyModel: "gpt-4o", attrCensored: false}))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
