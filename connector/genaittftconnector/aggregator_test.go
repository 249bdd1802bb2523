package genaittftconnector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

var (
	testOutcomes = []string{
		record.OutcomeComplete, record.OutcomeError, record.OutcomeClosed,
		record.OutcomeTimeoutFirstToken, record.OutcomeTimeoutIdle, record.OutcomeTimeoutDeadline,
	}
	testMeasuredAt = []string{"", record.MeasuredAtFirstContent, record.MeasuredAtFirstChunk}
	testObservers  = []string{"", record.ObserverClient, record.ObserverGateway, record.ObserverServer}
)

// Every combination of the four fields has a code of its own.
func TestHistCodeIsOneToOne(t *testing.T) {
	seen := map[byte]string{}
	for _, o := range testOutcomes {
		for _, m := range testMeasuredAt {
			for _, obs := range testObservers {
				for _, fo := range []bool{false, true} {
					rec := record.Record{Outcome: o, MeasuredAt: m, Observer: obs}
					code, ok := histCode(&rec, fo)
					require.True(t, ok, "%s %q %q %v", o, m, obs, fo)
					desc := o + "/" + m + "/" + obs
					if fo {
						desc += "/failed_over"
					}
					prev, dup := seen[code]
					require.False(t, dup, "%s and %s share code %d", prev, desc, code)
					seen[code] = desc
				}
			}
		}
	}
	assert.Len(t, seen, 6*3*4*2)
	for _, rec := range []record.Record{
		{Outcome: "ok"},
		{Outcome: record.OutcomeComplete, MeasuredAt: "headers"},
		{Outcome: record.OutcomeComplete, Observer: "proxy"},
	} {
		_, ok := histCode(&rec, false)
		assert.False(t, ok, "%+v", rec)
	}
}

// Records go to one histogram series per distinct set of the key's fields,
// whether the key holds them coded or, outside their sets, as strings.
func TestHistogramSeriesPerKey(t *testing.T) {
	a, err := newAggregator(defaultConfig(), testInstanceID)
	require.NoError(t, err)
	empty := pcommon.NewMap()
	var st batchStats
	var recs []record.Record
	for _, o := range append(testOutcomes, "ok", "") {
		for _, m := range append(testMeasuredAt, "headers") {
			for _, obs := range append(testObservers, "proxy") {
				recs = append(recs, record.Record{
					Model: "m", Outcome: o, MeasuredAt: m, Observer: obs,
					TimeToFirstChunk: 0.5, HasTimeToFirstChunk: true,
				})
			}
		}
	}
	for range 3 {
		for i := range recs {
			a.observe(&recs[i], empty, empty, testStart, &st)
		}
	}
	require.Equal(t, len(recs), a.hist.len())
	for i := range recs {
		got := map[string]string{}
		var series *histSeries
		a.hist.each(func(s *histSeries) {
			if v, _ := s.attrs.Get(record.KeyOutcome); v.Str() != recs[i].Outcome {
				return
			}
			for _, k := range []string{record.KeyMeasuredAt, record.KeyObserver} {
				v, _ := s.attrs.Get(k)
				got[k] = v.Str()
			}
			if got[record.KeyMeasuredAt] == recs[i].MeasuredAt && got[record.KeyObserver] == recs[i].Observer {
				require.Nil(t, series, "%+v: two series", recs[i])
				series = s
			}
		})
		require.NotNil(t, series, "%+v: no series", recs[i])
		assert.Equal(t, uint64(3), series.h[sigFirstChunk].Count(), "%+v", recs[i])
	}
}
