package genaittftconnector

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Points as the prometheus receiver (contrib v0.165.1) builds them from a
// classic histogram in a text exposition without _created lines, such as
// Bifrost's /metrics:
//   - no start time: internal/metricfamily.go:216 sets StartTimestamp only
//     from a _created sample; the receiver has no start time adjuster any
//     more, and the scrape loop passes a start time only behind the alpha
//     gate receiver.prometheusreceiver.EnableCreatedTimestampZeroIngestion
//     (metrics_receiver.go:223; prometheus scrape/scrape_append_v2.go:261);
//   - a failed scrape is an empty one (prometheus scrape/scrape.go:1611-1621):
//     every series of the previous scrape gets a stale NaN
//     (scrape_append_v2.go:68-71), which the receiver turns into a point with
//     the same attributes, zero buckets and NoRecordedValue
//     (internal/metricfamily.go:157-206);
//   - a series the target does not expose yet (Bifrost creates a label set
//     at its first request) just appears in a later scrape.
//
// One resource (job/instance) per target: internal/transaction.go:564.
func scraped(res string, ts time.Time, points ...hp) pmetric.Metrics {
	for i := range points {
		points[i].start = time.Time{}
		points[i].ts = ts
	}
	md := histMetrics(points...)
	r := md.ResourceMetrics().At(0).Resource().Attributes()
	r.PutStr("service.name", "bifrost")
	r.PutStr("service.instance.id", res)
	return md
}

// TestScrapedSeriesKeepTheirBaselineAcrossStalenessMarkers: one failed
// scrape marks every series stale. What grew meanwhile must still count, and
// a restart (a count went down) must count from zero, once.
func TestScrapedSeriesKeepTheirBaselineAcrossStalenessMarkers(t *testing.T) {
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, nil)
	ctx := context.Background()
	scrape := func(points ...hp) {
		t.Helper()
		require.NoError(t, c.ConsumeMetrics(ctx, scraped("bifrost:8080", clock.Now(), points...)))
		clock.Advance(15 * time.Second)
	}
	scrape(hp{model: "m", counts: counts17(7, 100)}) // history from before the collector: baseline
	scrape(hp{model: "m", counts: counts17(7, 150)}) // +50
	scrape(hp{model: "m", counts: counts17(7, 0), staleMarker: true})
	scrape(hp{model: "m", counts: counts17(7, 210)}) // +60 since the last point
	assert.Equal(t, 110.0, windowSamples(t, flushNow(t, c, sink), "m"), "one failed scrape must not lose an interval")

	// Bifrost restarts: the series is absent (stale), then back from zero.
	scrape(hp{model: "m", counts: counts17(7, 0), staleMarker: true})
	scrape(hp{model: "m", counts: counts17(6, 3)}) // all after the restart
	scrape(hp{model: "m", counts: counts17(6, 5)}) // +2
	assert.Equal(t, 115.0, windowSamples(t, flushNow(t, c, sink), "m"), "a restart counts from zero, once")
}

// TestScrapedSeriesFirstSeenLaterCount: without a start time, a series that
// a target's earlier scrape did not hold began after that scrape, so all of
// its samples are newer than the collector and were never counted. A
// series of the target's first scrape seen here stays a baseline, however
// its points are batched.
func TestScrapedSeriesFirstSeenLaterCount(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	clock := clockwork.NewFakeClockAt(testStart)
	c, sink := newMetricsConnector(t, defaultConfig(), clock, tel)
	ctx := context.Background()
	t0 := clock.Now()
	require.NoError(t, c.ConsumeMetrics(ctx, scraped("a:8080", t0, hp{model: "old", counts: counts17(7, 100)})))
	clock.Advance(time.Second)
	// The rest of the same scrape in a later batch: same timestamp, baseline.
	require.NoError(t, c.ConsumeMetrics(ctx, scraped("a:8080", t0, hp{model: "old2", counts: counts17(7, 40)})))
	clock.Advance(14 * time.Second)
	// The next scrape: a model first used since the last one.
	require.NoError(t, c.ConsumeMetrics(ctx, scraped("a:8080", clock.Now(),
		hp{model: "old", counts: counts17(7, 101)}, hp{model: "old2", counts: counts17(7, 40)}, hp{model: "new", counts: counts17(7, 4)})))
	// Another target's first scrape holds history: baseline.
	require.NoError(t, c.ConsumeMetrics(ctx, scraped("b:8080", clock.Now(), hp{model: "other", counts: counts17(7, 9)})))
	md := flushNow(t, c, sink)
	assert.Equal(t, 4.0, windowSamples(t, md, "new"), "a series first exposed after the target's first scrape counts whole")
	assert.Equal(t, 1.0, windowSamples(t, md, "old"))
	assert.Equal(t, 0.0, windowSamples(t, md, "old2"), "part of the first scrape: baseline")
	assert.Equal(t, 0.0, windowSamples(t, md, "other"), "a target's first scrape: baseline")
}

// TestScrapedSeriesSeenBeforeStayBaselines: the inference above never
// counts a series that may have been exposed before: one forgotten by
// stale_after (its tombstone), or one of a target whose new series were
// dropped by source_series_limit.
func TestScrapedSeriesSeenBeforeStayBaselines(t *testing.T) {
	for _, limit := range []bool{false, true} {
		cfg := defaultConfig()
		if limit {
			cfg.Histograms.SourceSeriesLimit = 2
		}
		clock := clockwork.NewFakeClockAt(testStart)
		c, sink := newMetricsConnector(t, cfg, clock, nil)
		ctx := context.Background()
		scrape := func(points ...hp) {
			t.Helper()
			require.NoError(t, c.ConsumeMetrics(ctx, scraped("a:8080", clock.Now(), points...)))
			clock.Advance(5 * time.Minute)
			c.flush(ctx)
		}
		// With the limit, s3 does not fit: dropped, though the target exposes it.
		scrape(hp{model: "s1", counts: counts17(7, 10)}, hp{model: "s2", counts: counts17(7, 20)}, hp{model: "s3", counts: counts17(7, 30)})
		for i := 0; i < 4; i++ { // s2 (and s3) silent past stale_after: forgotten
			scrape(hp{model: "s1", counts: counts17(7, 10)})
		}
		back := "s2"
		if limit {
			back = "s3" // takes the place s2 left
		}
		scrape(hp{model: "s1", counts: counts17(7, 10)}, hp{model: back, counts: counts17(7, 35)})
		md := flushNow(t, c, sink)
		assert.Equal(t, 0.0, windowSamples(t, md, back), "limit %v: %s was exposed before: its history is not new", limit, back)
	}
}
