package recommend

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Records WindowUse keeps out that TestWindowUse left open.
func TestWindowUseKeepsOut(t *testing.T) {
	content := func(o string) record.Record {
		return record.Record{Outcome: o, TimeToFirstContent: 0.4, HasTimeToFirstContent: true, MeasuredAt: record.MeasuredAtFirstContent, Duration: 2, HasDuration: true, Attempts: 1}
	}
	for _, c := range []struct {
		name string
		rec  record.Record
	}{
		// A retry of the same target is no failover, but still a second
		// attempt: its TTFT spans the first one (docs/architecture.md §2).
		{"a retry the source says was no failover", with(content(record.OutcomeComplete), func(r *record.Record) {
			r.Attempts, r.FailedOver, r.FailedOverKnown = 2, false, true
		})},
		{"a retried first-token cut the source says was no failover", record.Record{Outcome: record.OutcomeTimeoutFirstToken, Duration: 10, HasDuration: true, Attempts: 2, FailedOverKnown: true}},
		// An idle timeout is a stream cut after its first token: one
		// without a first token is no observation of a pause after it.
		{"an idle timeout without a first token", record.Record{Outcome: record.OutcomeTimeoutIdle, MaxChunkGap: 30, HasMaxChunkGap: true, Duration: 40, HasDuration: true, Attempts: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			use, clock, _, hasCut := WindowUse(&c.rec, true)
			assert.Equal(t, UseNone, use)
			assert.Equal(t, "", clock)
			assert.False(t, hasCut)
		})
	}
}
