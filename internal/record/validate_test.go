package record

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestValidate(t *testing.T) {
	lim := &Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"}}
	cases := []struct {
		name   string
		mutate func(*Record)
		want   Invalid
	}{
		{"a derived record", func(*Record) {}, Valid},
		{"no times at all", func(r *Record) {
			r.HasTimeToFirstContent, r.HasTimeToFirstChunk, r.HasTimeToHeaders, r.HasMaxChunkGap, r.HasDuration = false, false, false, false, false
			r.MeasuredAt = ""
		}, Valid},
		{"cut before content, clock named", func(r *Record) {
			r.Outcome, r.HasTimeToFirstContent = OutcomeTimeoutFirstToken, false
		}, Valid},
		{"first chunk only", func(r *Record) { r.HasTimeToFirstContent, r.MeasuredAt = false, MeasuredAtFirstChunk }, Valid},
		{"TTFT at the end within 1 ms", func(r *Record) { r.TimeToFirstContent = r.Duration + 0.0009 }, Valid},
		{"TTFT at max_ttft_seconds", func(r *Record) { r.TimeToFirstContent, r.Duration = 3600, 4000 }, Valid},
		{"100 attempts", func(r *Record) { r.Attempts = 100 }, Valid},

		{"unknown outcome", func(r *Record) { r.Outcome = "pwned" }, InvalidOutcome},
		{"missing outcome", func(r *Record) { r.Outcome = "" }, InvalidOutcome},
		{"NaN TTFT", func(r *Record) { r.TimeToFirstContent = math.NaN() }, InvalidValue},
		{"infinite duration", func(r *Record) { r.Duration = math.Inf(1) }, InvalidValue},
		{"negative gap", func(r *Record) { r.MaxChunkGap = -1 }, InvalidValue},
		{"negative tokens", func(r *Record) { r.PromptTokens = -1 }, InvalidValue},
		{"measured_at unknown", func(r *Record) { r.MeasuredAt = "first_byte" }, InvalidMeasuredAt},
		{"first_chunk clock with a content time", func(r *Record) { r.MeasuredAt = MeasuredAtFirstChunk }, InvalidMeasuredAt},
		{"first_chunk clock without a chunk time", func(r *Record) {
			r.MeasuredAt, r.HasTimeToFirstContent, r.HasTimeToFirstChunk = MeasuredAtFirstChunk, false, false
		}, InvalidMeasuredAt},
		{"times without a clock", func(r *Record) { r.MeasuredAt = "" }, InvalidMeasuredAt},
		{"observer admin", func(r *Record) { r.Observer = "admin" }, InvalidObserver},
		{"no observer", func(r *Record) { r.Observer = "" }, InvalidObserver},
		{"no band", func(r *Record) { r.PromptBand = "" }, InvalidPromptBand},
		{"band pwned", func(r *Record) { r.PromptBand = "pwned" }, InvalidPromptBand},
		{"1 MiB band", func(r *Record) { r.PromptBand = strings.Repeat("<2k", 1<<18) }, InvalidPromptBand},
		{"band of another configuration", func(r *Record) { r.PromptBand = "<4k" }, InvalidPromptBand},
		{"attempts 0", func(r *Record) { r.Attempts = 0 }, InvalidAttempts},
		{"attempts 4.6e18", func(r *Record) { r.Attempts = 4_600_000_000_000_000_000 }, InvalidAttempts},
		{"TTFT 1e12", func(r *Record) { r.TimeToFirstContent, r.Duration = 1e12, 1e12 }, InvalidTTFTBound},
		{"TTFT 4000 s", func(r *Record) { r.TimeToFirstContent, r.Duration = 4000, 5000 }, InvalidTTFTBound},
		{"first chunk 4000 s", func(r *Record) {
			r.HasTimeToFirstContent, r.MeasuredAt, r.TimeToFirstChunk, r.Duration = false, MeasuredAtFirstChunk, 4000, 5000
		}, InvalidTTFTBound},
		{"headers 4000 s", func(r *Record) { r.TimeToHeaders, r.Duration = 4000, 5000 }, InvalidTTFTBound},
		{"duration 1e300", func(r *Record) { r.Duration = 1e300 }, InvalidDurationBound},
		{"duration just above the bound", func(r *Record) { r.Duration = 86400.5 }, InvalidDurationBound},
		{"gap 1e15", func(r *Record) { r.MaxChunkGap = 1e15 }, InvalidGapBound},
		{"gap longer than the request", func(r *Record) { r.MaxChunkGap = r.Duration + 1 }, InvalidGapBound},
		{"TTFT 50 s, duration 1 s", func(r *Record) { r.TimeToFirstContent, r.Duration, r.MaxChunkGap = 50, 1, 0.1 }, InvalidTTFTAfterEnd},
		{"headers after the end", func(r *Record) { r.TimeToHeaders = r.Duration + 1 }, InvalidTTFTAfterEnd},
		{"first chunk after first content", func(r *Record) { r.TimeToFirstChunk = r.TimeToFirstContent + 0.1 }, InvalidChunkAfterContent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fullRecord()
			c.mutate(&r)
			assert.Equal(t, c.want, Validate(&r, lim))
		})
	}
}

func TestValidateDoesNotAllocate(t *testing.T) {
	lim := &Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: []string{"<2k", "unknown"}}
	r := fullRecord()
	assert.Zero(t, testing.AllocsPerRun(100, func() { Validate(&r, lim) }))
}

func TestInspectNamesWhyARecordIsUnreadable(t *testing.T) {
	for _, c := range []struct {
		key  string
		val  any
		want Invalid
	}{
		{KeyOutcome, int64(3), InvalidOutcome},
		{KeyTimeToFirstContent, "fast", InvalidValue},
		{KeyDuration, -2.0, InvalidValue},
		{KeyAttempts, -1.0, InvalidValue},
		{KeyMeasuredAt, "first_byte", InvalidMeasuredAt},
	} {
		r := fullRecord()
		attrs := pcommonMap(&r)
		_ = attrs.FromRaw(merge(attrs.AsRaw(), c.key, c.val))
		var got Record
		state, why := Inspect(attrs, &got)
		assert.Equal(t, StateInvalid, state, c.key)
		assert.Equal(t, c.want, why, c.key)
	}
}

func pcommonMap(r *Record) pcommon.Map {
	m := pcommon.NewMap()
	r.Write(m)
	return m
}

func merge(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func TestWriteOverAStampedRecordRemovesItsKeys(t *testing.T) {
	attrs := pcommon.NewMap()
	attrs.PutStr(KeyRoute, "support")
	forged := Record{Outcome: OutcomeComplete, PromptBand: "pwned", TimeToFirstContent: 1e12, HasTimeToFirstContent: true,
		MaxChunkGap: 1e15, HasMaxChunkGap: true, Attempts: 7, Source: "forged"}
	forged.Write(attrs)
	fresh := Record{Outcome: OutcomeClosed, PromptBand: "unknown", Attempts: 1, Observer: ObserverClient}
	fresh.Write(attrs)
	assert.Equal(t, map[string]any{
		KeyRoute: "support", KeyOutcome: OutcomeClosed, KeyPromptBand: "unknown", KeyAttempts: int64(1), KeyObserver: ObserverClient,
	}, attrs.AsRaw())
}

func TestValidateRefusesFirstTokenTimeoutWithContent(t *testing.T) {
	lim := &Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: []string{"<2k", "unknown"}}
	r := Record{Outcome: OutcomeTimeoutFirstToken, TimeToFirstContent: 0.3, HasTimeToFirstContent: true,
		Duration: 10, HasDuration: true, MeasuredAt: MeasuredAtFirstContent, Observer: ObserverGateway, PromptBand: "<2k", Attempts: 1}
	assert.NotEqual(t, Valid, Validate(&r, lim), "timeout_first_token with a first-content time")
}
