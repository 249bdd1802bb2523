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
