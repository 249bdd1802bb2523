package llmgatewaylogreceiver

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

// groupKey is a target and prompt band, the practitioners' unit of analysis.
type groupKey struct{ provider, model, route, band string }

// practitionerQuantiles reads the export the way the practitioners do,
// independently of the receiver: successful rows of one attempt (status
// ok, ttft_ms present, attempts 1), grouped by target and prompt band, exact nearest-rank quantile
// k = ceil(q·n) on the sorted values, in seconds.
func practitionerQuantiles(t *testing.T, path string, qs []float64) (quantiles map[groupKey][]float64, successes, cut map[groupKey]int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	values := map[groupKey][]float64{}
	cut = map[groupKey]int{}
	for _, r := range rows[1:] {
		status := r[col["status"]]
		if status != "ok" && status != "timeout_first_token" {
			continue
		}
		if r[col["attempts"]] != "1" {
			// A failed-over request's TTFT spans the failed attempt; the
			// windows hold requests of one attempt (docs/architecture.md §2).
			continue
		}
		band := "unknown"
		if p, err := strconv.Atoi(r[col["prompt_tokens"]]); err == nil && p > 0 {
			switch {
			case p < 2000:
				band = "<2k"
			case p < 16000:
				band = "2k-16k"
			case p < 64000:
				band = "16k-64k"
			default:
				band = ">=64k"
			}
		}
		k := groupKey{r[col["provider"]], r[col["model"]], r[col["route_slug"]], band}
		if status == "timeout_first_token" {
			cut[k]++
			continue
		}
		if r[col["ttft_ms"]] == "" {
			continue
		}
		ms, err := strconv.ParseFloat(r[col["ttft_ms"]], 64)
		require.NoError(t, err)
		values[k] = append(values[k], ms/1000)
	}
	quantiles = map[groupKey][]float64{}
	successes = map[groupKey]int{}
	for k, v := range values {
		sort.Float64s(v)
		successes[k] = len(v)
		for _, q := range qs {
			rank := int(math.Ceil(q * float64(len(v))))
			quantiles[k] = append(quantiles[k], v[max(rank, 1)-1])
		}
	}
	return quantiles, successes, cut
}

// TestParityWithPractitionersNearestRank runs a generated 100k-row export
// through the receiver and the genai_ttft connector and compares the
// connector's ttft.quantile gauges with exact nearest-rank quantiles of the
// same export's successful rows, per target and prompt band.
func TestParityWithPractitionersNearestRank(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 100k-row export")
	}
	const rows = 100_000
	qs := []float64{0.5, 0.99, 0.999}
	const minSamples = 200

	path := filepath.Join(t.TempDir(), "export.csv")
	fh, err := os.Create(path)
	require.NoError(t, err)
	_, err = gatewayexport.Write(fh, gatewayexport.Options{Rows: rows, Seed: 20261130, Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Header: true})
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	want, counts, cut := practitionerQuantiles(t, path, qs)

	// The connector, on a fake clock so its flush is driven by the test.
	ctx := context.Background()
	clock := clockwork.NewFakeClock()
	cf := genaittftconnector.NewFactory()
	ccfg := cf.CreateDefaultConfig().(*genaittftconnector.Config)
	ccfg.Quantiles = qs
	ccfg.MinSamples = minSamples
	ccfg.FlushInterval = time.Minute
	// The practitioners' method ignores timed-out requests; the connector's
	// censored estimate (docs/architecture.md §2) would answer a different question.
	ccfg.Censoring = false
	ccfg.IncludeCollectorInstanceID = false
	require.NoError(t, ccfg.Validate())
	metrics := new(consumertest.MetricsSink)
	conn, err := cf.CreateLogsToMetrics(clockwork.AddToContext(ctx, clock), connectortest.NewNopSettings(cf.Type()), ccfg, metrics)
	require.NoError(t, err)
	require.NoError(t, conn.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(t, conn.Shutdown(ctx)) }()

	var delivered atomic.Int64
	next, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		delivered.Add(int64(ld.LogRecordCount()))
		return conn.ConsumeLogs(ctx, ld)
	})
	require.NoError(t, err)
	cfg := testConfig(t, FormatInfroCSV, path)
	rcv, err := NewFactory().CreateLogs(ctx, receivertest.NewNopSettings(typeStr), cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(ctx, componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return delivered.Load() == rows }, 5*time.Minute, 20*time.Millisecond,
		"receiver delivered %d of %d rows", delivered.Load(), rows)
	require.NoError(t, rcv.Shutdown(ctx))

	require.NoError(t, clock.BlockUntilContext(ctx, 1)) // the connector's flush ticker
	clock.Advance(ccfg.FlushInterval)
	require.Eventually(t, func() bool { return len(metrics.AllMetrics()) > 0 }, 30*time.Second, 10*time.Millisecond)

	got := map[groupKey]map[string]float64{}
	samples := map[groupKey]map[bool]int64{}
	for _, md := range metrics.AllMetrics() {
		forEachGauge(md, "ttft.window.samples", func(dp pmetric.NumberDataPoint) {
			a := dp.Attributes().AsRaw()
			k := groupKey{str2(a["gen_ai.provider.name"]), str2(a["gen_ai.request.model"]), str2(a["ttft.route"]), str2(a["ttft.prompt_band"])}
			if samples[k] == nil {
				samples[k] = map[bool]int64{}
			}
			censored, _ := a["ttft.censored"].(bool)
			samples[k][censored] = dp.IntValue()
		})
		forEachGauge(md, "ttft.quantile", func(dp pmetric.NumberDataPoint) {
			a := dp.Attributes().AsRaw()
			assert.Equal(t, "first_content", a["ttft.measured_at"], "an infro export measures first content")
			k := groupKey{str2(a["gen_ai.provider.name"]), str2(a["gen_ai.request.model"]), str2(a["ttft.route"]), str2(a["ttft.prompt_band"])}
			if got[k] == nil {
				got[k] = map[string]float64{}
			}
			got[k][str2(a["quantile"])] = dp.DoubleValue()
		})
	}

	var compared, tooFew int
	var worst float64
	for k, exact := range want {
		for i, q := range qs {
			label := strconv.FormatFloat(q, 'f', -1, 64)
			v, ok := got[k][label]
			need := max(minSamples, int(math.Ceil(1/(1-q)-1e-9)))
			if counts[k] < need {
				assert.False(t, ok, "%v q=%s: %d successes are too few, nothing may be reported", k, label, counts[k])
				tooFew++
				continue
			}
			if !assert.True(t, ok, "%v q=%s missing with %d successes", k, label, counts[k]) {
				continue
			}
			rel := math.Abs(v-exact[i]) / exact[i]
			worst = math.Max(worst, rel)
			assert.LessOrEqual(t, rel, 0.01, "%v q=%s: connector %.6fs, nearest-rank %.6fs (n=%d)", k, label, v, exact[i], counts[k])
			compared++
		}
	}
	for k := range got {
		_, ok := want[k]
		assert.True(t, ok, "connector reports a group the export has no successes for: %v", k)
	}
	// Every successful row is counted once, and nothing else is.
	var totalOK, totalCut int64
	for k, n := range counts {
		assert.Equal(t, int64(n), samples[k][false], "%v successful samples", k)
		totalOK += samples[k][false]
	}
	for k, n := range cut {
		// With censoring off a first-token timeout is neither a success nor a censored sample.
		assert.Zero(t, samples[k][true], "%v censored samples", k)
		totalCut += int64(n)
	}
	t.Logf("groups=%d successful=%d first-token timeouts=%d quantiles compared=%d too-few=%d worst relative error=%.4f%%",
		len(want), totalOK, totalCut, compared, tooFew, worst*100)
	require.Positive(t, compared)
}

func forEachGauge(md pmetric.Metrics, name string, f func(pmetric.NumberDataPoint)) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if m := ms.At(k); m.Name() == name && m.Type() == pmetric.MetricTypeGauge {
					dps := m.Gauge().DataPoints()
					for l := 0; l < dps.Len(); l++ {
						f(dps.At(l))
					}
				}
			}
		}
	}
}

func str2(v any) string {
	s, _ := v.(string)
	return s
}
