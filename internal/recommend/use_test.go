package recommend

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func TestWindowUse(t *testing.T) {
	content := func(o string) record.Record {
		return record.Record{Outcome: o, TimeToFirstContent: 0.4, HasTimeToFirstContent: true, MeasuredAt: record.MeasuredAtFirstContent, Duration: 2, HasDuration: true}
	}
	for _, c := range []struct {
		name      string
		rec       record.Record
		censoring bool
		use       Use
		clock     string
		cut       float64
		hasCut    bool
	}{
		{"complete with TTFT is a sample", content(record.OutcomeComplete), true, UseSample, record.MeasuredAtFirstContent, 0, false},
		{"complete without TTFT stays out", record.Record{Outcome: record.OutcomeComplete, Duration: 2, HasDuration: true}, true, UseNone, "", 0, false},
		{"errors stay out", content(record.OutcomeError), true, UseNone, "", 0, false},
		{"an idle timeout without a pause stays out", content(record.OutcomeTimeoutIdle), true, UseNone, "", 0, false},
		{"an idle timeout is censored at its longest pause", with(content(record.OutcomeTimeoutIdle), func(r *record.Record) { r.MaxChunkGap, r.HasMaxChunkGap = 30, true }), true, UseIdleCut, record.MeasuredAtFirstContent, 30, true},
		{"censoring off: idle timeouts stay out", with(content(record.OutcomeTimeoutIdle), func(r *record.Record) { r.MaxChunkGap, r.HasMaxChunkGap = 30, true }), false, UseNone, "", 0, false},
		{"a failed-over idle timeout stays out", with(content(record.OutcomeTimeoutIdle), func(r *record.Record) { r.MaxChunkGap, r.HasMaxChunkGap, r.Attempts = 30, true, 2 }), true, UseNone, "", 0, false},
		{"first-token timeout is censored at its duration", record.Record{Outcome: record.OutcomeTimeoutFirstToken, Duration: 10, HasDuration: true}, true, UseCensored, record.MeasuredAtFirstContent, 10, true},
		{"first-token timeout after a first chunk of a source blind to content is censored at it", record.Record{Outcome: record.OutcomeTimeoutFirstToken, TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true, MeasuredAt: record.MeasuredAtFirstChunk, Duration: 10, HasDuration: true}, true, UseCensored, record.MeasuredAtFirstChunk, 0.04, true},
		{"first-token timeout after chunk events that carried nothing is first_content data, censored at its duration", record.Record{Outcome: record.OutcomeTimeoutFirstToken, TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true, MeasuredAt: record.MeasuredAtFirstChunk, Source: record.SourceChunkEvent, Duration: 10, HasDuration: true}, true, UseCensored, record.MeasuredAtFirstContent, 10, true},
		{"the same without a duration: censored at the first chunk", record.Record{Outcome: record.OutcomeTimeoutFirstToken, TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true, MeasuredAt: record.MeasuredAtFirstChunk, Source: record.SourceChunkEvent}, true, UseCensored, record.MeasuredAtFirstContent, 0.04, true},
		{"without a cut time it counts nowhere", record.Record{Outcome: record.OutcomeTimeoutFirstToken}, true, UseCensored, record.MeasuredAtFirstContent, 0, false},
		{"a failed-over success stays out: its TTFT spans the earlier attempts", with(content(record.OutcomeComplete), func(r *record.Record) { r.Attempts, r.FailedOver, r.FailedOverKnown = 2, true, true }), true, UseNone, "", 0, false},
		{"a second attempt on the same target stays out too", with(content(record.OutcomeComplete), func(r *record.Record) { r.Attempts = 2 }), true, UseNone, "", 0, false},
		{"a failed-over cut stays out", record.Record{Outcome: record.OutcomeTimeoutFirstToken, Duration: 10, HasDuration: true, Attempts: 3}, true, UseNone, "", 0, false},
		{"one attempt, said so, is a sample", with(content(record.OutcomeComplete), func(r *record.Record) { r.Attempts, r.FailedOverKnown = 1, true }), true, UseSample, record.MeasuredAtFirstContent, 0, false},
		{"censoring off: timeouts stay out", record.Record{Outcome: record.OutcomeTimeoutFirstToken, Duration: 10, HasDuration: true}, false, UseNone, "", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			use, clock, cut, hasCut := WindowUse(&c.rec, c.censoring)
			assert.Equal(t, c.use, use)
			assert.Equal(t, c.clock, clock)
			assert.Equal(t, c.cut, cut)
			assert.Equal(t, c.hasCut, hasCut)
		})
	}
}

func with(r record.Record, f func(*record.Record)) record.Record { f(&r); return r }
