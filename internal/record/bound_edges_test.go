package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Bounds and clocks of a read-back record that TestValidate's cases left
// open: each case is on the edge of its rule.
func TestValidateEdges(t *testing.T) {
	lim := &Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"}}
	cases := []struct {
		name   string
		mutate func(*Record)
		want   Invalid
	}{
		{"first chunk is the first content", func(r *Record) { r.TimeToFirstChunk = r.TimeToFirstContent }, Valid},
		{"101 attempts", func(r *Record) { r.Attempts = MaxAttempts + 1 }, InvalidAttempts},
		{"a first chunk without a clock", func(r *Record) {
			r.HasTimeToFirstContent, r.MeasuredAt = false, ""
		}, InvalidMeasuredAt},
		{"gap above max_chunk_gap_seconds within a longer request", func(r *Record) { r.MaxChunkGap, r.Duration = 4000, 5000 }, InvalidGapBound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fullRecord()
			c.mutate(&r)
			assert.Equal(t, c.want, Validate(&r, lim))
		})
	}
}

// An idle timeout is a stream that had started: its first content was seen
// even when its source measured only a first chunk (ttft.requests'
// ttft.first_content_seen).
func TestFirstContentSeenOfAnIdleTimeoutWithoutContentTime(t *testing.T) {
	r := Record{Outcome: OutcomeTimeoutIdle, TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true, MeasuredAt: MeasuredAtFirstChunk, Attempts: 1}
	assert.True(t, r.FirstContentSeen())
	r.Outcome = OutcomeTimeoutFirstToken
	assert.False(t, r.FirstContentSeen())
}
