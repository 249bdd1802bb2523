package record

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// WriteRaw and Write are two writers of one contract: they must agree key
// for key and type for type.
func TestWriteRawMatchesWrite(t *testing.T) {
	full := Record{
		TimeToFirstContent: 0.41, HasTimeToFirstContent: true, TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true,
		TimeToHeaders: 0.03, HasTimeToHeaders: true, MaxChunkGap: 1.5, HasMaxChunkGap: true, Duration: 9.1, HasDuration: true,
		ContentChunks: 12, HasContentChunks: true, PromptTokens: 7310, HasPromptTokens: true,
		CachedTokens: 4100, HasCachedTokens: true, OutputTokens: 655, HasOutputTokens: true,
		Streamed: true, StreamedKnown: true, FailedOver: true, FailedOverKnown: true, Outcome: OutcomeComplete, PromptBand: "2k-16k", Attempts: 2,
		MeasuredAt: MeasuredAtFirstContent, Observer: ObserverGateway, Route: "code-assist",
		Provider: "anthropic", Model: "claude-sonnet-4-5", Source: "llm_gateway_log/infro_csv:ttft_ms", StaleKeys: true,
	}
	// Every field but Reread and Invalid (never written) is set, so a field
	// added to the record without its raw writer fails here.
	v := reflect.ValueOf(full)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Type().Field(i); f.Name != "Reread" && f.Name != "Invalid" {
			assert.False(t, v.Field(i).IsZero(), "the full record leaves %s unset", f.Name)
		}
	}
	for name, tc := range map[string]struct {
		rec      Record
		existing map[string]any
	}{
		"every field":                               {rec: full},
		"nothing known":                             {rec: Record{Outcome: OutcomeError}},
		"not streamed, zero attempts":               {rec: Record{Outcome: OutcomeComplete, StreamedKnown: true, Attempts: 0}},
		"producer's target keys win":                {rec: full, existing: map[string]any{KeyProvider: "openai", KeyModel: "gpt-4.1", "log.file.name": "x.jsonl"}},
		"producer's unusable targets filled":        {rec: full, existing: map[string]any{KeyProvider: "", KeyModel: int64(3)}},
		"earlier ttft values are overwritten":       {rec: full, existing: map[string]any{KeyOutcome: "error", KeyAttempts: int64(7)}},
		"an earlier record's keys are removed":      {rec: Record{Outcome: OutcomeError}, existing: map[string]any{KeyOutcome: "complete", KeyTimeToFirstContent: 1e12, KeyRoute: "r"}},
		"stale keys without an outcome are removed": {rec: Record{Outcome: OutcomeComplete, StaleKeys: true}, existing: map[string]any{KeyMaxChunkGap: 2.9, KeyFailedOver: true, KeyRoute: "r"}},
		"without StaleKeys they stay (no pass)":     {rec: Record{Outcome: OutcomeComplete}, existing: map[string]any{KeyMaxChunkGap: 2.9}},
	} {
		t.Run(name, func(t *testing.T) {
			want := pcommon.NewMap()
			assert.NoError(t, want.FromRaw(tc.existing))
			tc.rec.Write(want)
			got := map[string]any{}
			for k, v := range tc.existing {
				got[k] = v
			}
			tc.rec.WriteRaw(got)
			assert.Equal(t, want.AsRaw(), got)
		})
	}
}
