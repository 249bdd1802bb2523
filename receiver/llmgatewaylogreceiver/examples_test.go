package llmgatewaylogreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// TestReadmeGenericExamples runs the README's csv and json examples with the
// configurations in testdata/config.yaml.
func TestReadmeGenericExamples(t *testing.T) {
	t.Run("csv", func(t *testing.T) {
		cfg := loadConfig(t, "generic_csv")
		cfg.InputConfig.Include = []string{testdata("generic.tsv")}
		cfg.InputConfig.PollInterval = 20 * time.Millisecond
		h := newHarness(t, cfg)
		h.start(t)
		lrs := h.waitRecords(t, 2)
		h.stop(t)
		byOutcome := map[string]record.Record{}
		for _, r := range readRecords(t, lrs) {
			byOutcome[r.Outcome] = r
		}
		done := byOutcome[record.OutcomeComplete]
		assert.InDelta(t, 0.84, done.TimeToFirstContent, 1e-12)
		assert.Equal(t, "2k-16k", done.PromptBand)
		assert.Equal(t, "support", done.Route)
		assert.Equal(t, "gpt-4.1", done.Model)
		cut := byOutcome[record.OutcomeTimeoutFirstToken]
		assert.False(t, cut.HasTimeToFirstContent)
		assert.Equal(t, "<2k", cut.PromptBand)
	})
	t.Run("json", func(t *testing.T) {
		cfg := loadConfig(t, "generic_json")
		cfg.InputConfig.Include = []string{testdata("generic.jsonl")}
		cfg.InputConfig.PollInterval = 20 * time.Millisecond
		h := newHarness(t, cfg)
		h.start(t)
		lrs := h.waitRecords(t, 1)
		h.stop(t)
		r := readRecords(t, lrs)[0]
		assert.InDelta(t, 0.25, r.TimeToFirstChunk, 1e-12)
		assert.Equal(t, record.MeasuredAtFirstChunk, r.MeasuredAt)
		assert.Equal(t, "unknown", r.PromptBand)
		assert.Equal(t, "openai", r.Provider)
		assert.Equal(t, time.UnixMilli(1796083201120).UTC(), lrs[0].Timestamp().AsTime())
		assert.Equal(t, "gpt-4.1-mini", lrs[0].Body().Map().AsRaw()["target"].(map[string]any)["model"], "keep_row keeps the parsed row")
	})
}
