package record // import "github.com/otelcol-ttft/otelcol-ttft/internal/record"

// WriteRaw stamps the record on a raw attribute map (a stanza entry's
// attributes, converted to pdata once by the receiver adapter) exactly as
// Write stamps a pcommon.Map: the same keys, types and rules.
func (r *Record) WriteRaw(attrs map[string]any) {
	if _, stamped := attrs[KeyOutcome]; stamped || r.StaleKeys {
		for k := range attrs {
			if IsRecordKey(k) {
				delete(attrs, k) // as Write: no forged value outlives its record
			}
		}
	}
	rawDouble(attrs, KeyTimeToFirstContent, r.TimeToFirstContent, r.HasTimeToFirstContent)
	rawDouble(attrs, KeyTimeToFirstChunk, r.TimeToFirstChunk, r.HasTimeToFirstChunk)
	rawDouble(attrs, KeyTimeToHeaders, r.TimeToHeaders, r.HasTimeToHeaders)
	rawDouble(attrs, KeyMaxChunkGap, r.MaxChunkGap, r.HasMaxChunkGap)
	rawDouble(attrs, KeyDuration, r.Duration, r.HasDuration)
	rawInt(attrs, KeyContentChunks, r.ContentChunks, r.HasContentChunks)
	rawInt(attrs, KeyPromptTokens, r.PromptTokens, r.HasPromptTokens)
	rawInt(attrs, KeyCachedTokens, r.CachedTokens, r.HasCachedTokens)
	rawInt(attrs, KeyOutputTokens, r.OutputTokens, r.HasOutputTokens)
	if r.StreamedKnown {
		attrs[KeyStreamed] = r.Streamed
	}
	if r.FailedOverKnown {
		attrs[KeyFailedOver] = r.FailedOver
	}
	rawStr(attrs, KeyOutcome, r.Outcome)
	rawStr(attrs, KeyPromptBand, r.PromptBand)
	attrs[KeyAttempts] = max(r.Attempts, 1)
	rawStr(attrs, KeyMeasuredAt, r.MeasuredAt)
	rawStr(attrs, KeyObserver, r.Observer)
	rawStr(attrs, KeyRoute, r.Route)
	rawStr(attrs, KeySource, r.Source)
	// As Write: a producer's target is kept unless absent, empty or not a
	// string.
	if cur, _ := attrs[KeyProvider].(string); cur == "" && r.Provider != "" {
		attrs[KeyProvider] = r.Provider
	}
	if cur, _ := attrs[KeyModel].(string); cur == "" && r.Model != "" {
		attrs[KeyModel] = r.Model
	}
}

func rawDouble(attrs map[string]any, key string, v float64, has bool) {
	if has {
		attrs[key] = v
	}
}

func rawInt(attrs map[string]any, key string, v int64, has bool) {
	if has {
		attrs[key] = v
	}
}

func rawStr(attrs map[string]any, key, v string) {
	if v != "" {
		attrs[key] = v
	}
}
