package derive

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The edges of the row rules: each bound as the README states it (±1 ms,
// "larger", "more than 100", "100 or more"), and the conditions that keep
// one rule from firing on another's rows.

// A first-token time exactly 1 ms from the end is LiteLLM's fallback too
// ("equal to the end time (±1 ms)"); 1 ms and a little more is a first chunk.
func TestRowFirstTokenExactlyOneMillisecondBeforeTheEnd(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	for name, tc := range map[string]struct {
		first   string
		hasTTFT bool
		reject  string
	}{
		"exactly 1 ms before the end": {"2026-12-01T00:00:00.999Z", false, GatewayTTFTStampedAtEnd},
		"1.1 ms before the end":       {"2026-12-01T00:00:00.9989Z", true, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
				Start: "2026-12-01T00:00:00Z", FirstToken: tc.first, FirstTokenName: "first", End: "2026-12-01T00:00:01Z", Stream: true,
			}, &out))
			_, has := out.Record.TTFT()
			assert.Equal(t, tc.hasTTFT, has)
			assert.Equal(t, tc.reject, out.Rejected)
		})
	}
}

// A first token at the start is a TTFT of zero, not a negative one.
func TestRowFirstTokenAtTheStartIsZeroTTFT(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
		Start: "2026-12-01T00:00:00Z", FirstToken: "2026-12-01T00:00:00Z", FirstTokenName: "first", End: "2026-12-01T00:00:01Z", Stream: true,
	}, &out), "zero is no negative value")
	v, has := out.Record.TTFT()
	assert.True(t, has)
	assert.Zero(t, v)
}

// derive::max_ttft_seconds and max_duration_seconds refuse what is larger;
// the bound itself is kept.
func TestRowValuesAtTheirBoundAreKept(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	maxTTFT, maxDur := DefaultConfig().MaxTTFTSeconds, DefaultConfig().MaxDurationSeconds

	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: maxTTFT * 1000, Stream: true}, &out), "a TTFT of max_ttft_seconds is no absurd_ttft")
	v, has := out.Record.TTFT()
	assert.True(t, has)
	assert.InDelta(t, maxTTFT, v, 1e-9)
	assert.Equal(t, GatewayAbsurdTTFT, d.FromGatewayRow(f, &GatewayRow{TTFT: maxTTFT*1000 + 1, Stream: true}, &out))

	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: "500", Duration: maxDur * 1000}, &out))
	assert.True(t, out.Record.HasDuration, "a duration of max_duration_seconds is kept")
	assert.InDelta(t, maxDur, out.Record.Duration, 1e-9)
	var refused []string
	out.RefusedValues(func(reason string) { refused = append(refused, reason) })
	assert.Empty(t, refused)
}

// A TTFT taken from the TTFT field is not rejected by a first-token time
// that equals the end: only a TTFT made from that time is.
func TestRowTTFTFieldBesideAFirstTokenAtTheEnd(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{Name: "litellm", TimeFormat: "unix_s"})
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, litellmRow(func(r *GatewayRow) {
		r.TTFT, r.TTFTName, r.FirstToken = 400.0, "ttft_ms", r.End
	}), &out))
	v, has := out.Record.TTFT()
	assert.True(t, has)
	assert.InDelta(t, 0.4, v, 1e-9)
	assert.Empty(t, out.Rejected, "the TTFT kept is not counted as rejected")
}

// An end without a start says nothing about the duration: no duration, and
// no duration_above_max counted for the end time since year 1.
func TestRowEndWithoutStartIsNoDuration(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: "400", Stream: true, End: "2026-12-01T00:00:01Z"}, &out))
	assert.False(t, out.Record.HasDuration)
	var refused []string
	out.RefusedValues(func(reason string) { refused = append(refused, reason) })
	assert.Empty(t, refused)
}

// "An attempts field or a trail of more than 100, retries or a fallback
// index of 100 or more is refused": each at its bound.
func TestRowAttemptBoundsAtTheirEdge(t *testing.T) {
	d := testDeriver(t)
	lim := d.readBackLimits()
	f := testRowFormat(t, GatewayFormatConfig{})
	for name, tc := range map[string]struct {
		in       GatewayRow
		attempts int64
		refused  []string
	}{
		"100 attempts are kept":         {GatewayRow{Attempts: "100"}, 100, nil},
		"a trail of 100 is kept":        {GatewayRow{Trail: make([]any, record.MaxAttempts)}, 100, nil},
		"99 retries are kept":           {GatewayRow{Retries: 99.0}, 100, nil},
		"100 retries are refused":       {GatewayRow{Retries: 100.0}, 1, []string{GatewayRetriesAboveMax}},
		"fallback index 99 is kept":     {GatewayRow{FallbackIndex: 99.0}, 100, nil},
		"fallback index 100 is refused": {GatewayRow{FallbackIndex: 100.0}, 1, []string{GatewayFallbackIndexAboveMax}},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(f, &tc.in, &out))
			assert.Equal(t, tc.attempts, out.Record.Attempts)
			var refused []string
			out.RefusedValues(func(reason string) { refused = append(refused, reason) })
			assert.Equal(t, tc.refused, refused)
			assert.Equal(t, record.Valid, record.Validate(&out.Record, &lim))
		})
	}
}

// A count of 2^40 is bad_number, as on spans (units.go); one less is a count.
func TestRowCountBound(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	var out GatewayRecord
	assert.Equal(t, GatewayBadNumber, d.FromGatewayRow(f, &GatewayRow{TTFT: "5", PromptTokens: float64(maxCount)}, &out))
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: "5", PromptTokens: float64(maxCount - 1)}, &out))
	assert.Equal(t, int64(maxCount-1), out.Record.PromptTokens)
}

// An attempt trail kept as JSON text past maxTrailText is not read: it
// counts nothing.
func TestRowTrailTextPastItsBoundCountsNothing(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	trail := `[{"attempt":0},` + strings.Repeat(" ", maxTrailText) + `{"attempt":1},{"attempt":2}]`
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{Trail: trail}, &out))
	assert.Equal(t, int64(1), out.Record.Attempts)
}

// Only a first attempt (fallback index 0) waits for a fallback row: a failed
// row that is itself a later provider's attempt, without a parent, is a
// request on its own.
func TestRowWithAFallbackIndexDoesNotAwaitAFallback(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{ID: "r", Outcome: record.OutcomeError, FallbackIndex: 1.0}, &out))
	assert.False(t, out.AwaitsFallback())
	_, linked := out.Linked()
	assert.False(t, linked)
}

// foldRows are a request's own row (failed, fallback index 0) and its
// fallback rows as a mapping without fallback_index gives them: every row
// at index 0, linked by parent_request_id only.
func foldRows(t *testing.T, d *Deriver) (parent, child GatewayRecord) {
	t.Helper()
	f := testRowFormat(t, GatewayFormatConfig{})
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
		ID: "p", Start: "2026-12-01T00:00:00Z", Duration: 100.0, Outcome: record.OutcomeError,
		Provider: "openai", Model: "gpt-a", Route: "client-route", PromptTokens: 5000.0, CachedTokens: 1000.0,
	}, &parent))
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
		ID: "c", ParentID: "p", Start: "2026-12-01T00:00:00.2Z", Duration: 500.0, Outcome: record.OutcomeComplete,
		Provider: "anthropic", Model: "claude-b", Route: "fallback-route",
	}, &child))
	return parent, child
}

// Without a fallback index (every row at 0) the fallback row, which
// started later, is the attempt that served, in either order.
func TestFoldWithoutFallbackIndex(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	for name, rows := range map[string][]*GatewayRecord{
		"parent first": {&parent, &child},
		"child first":  {&child, &parent},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			d.FoldFallbacks(rows, &out)
			r := out.Record
			assert.Equal(t, record.OutcomeComplete, r.Outcome, "the fallback served")
			assert.True(t, r.FailedOverKnown && r.FailedOver, "a fallback row folded in is a failover")
			assert.Equal(t, int64(2), r.Attempts)
		})
	}
}

// The request's own row gives the route and, where the row that served
// has none, the tokens; provider and model come as a pair from the row
// that served.
func TestFoldTakesRouteAndMissingValuesFromTheRequestsRow(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	child.FallbackIndex = 1
	child.Record.Model = "" // a row that names only its provider
	var out GatewayRecord
	d.FoldFallbacks([]*GatewayRecord{&parent, &child}, &out)
	r := out.Record
	assert.Equal(t, "client-route", r.Route, "the route the client was sent by")
	assert.Equal(t, "anthropic", r.Provider, "the provider that served")
	assert.Empty(t, r.Model, "no model of another provider")
	assert.True(t, r.HasPromptTokens)
	assert.Equal(t, int64(5000), r.PromptTokens)
	assert.Equal(t, "2k-16k", r.PromptBand)
	assert.True(t, r.HasCachedTokens)
	assert.Equal(t, int64(1000), r.CachedTokens)
}

// Fallback rows whose request's row never came: the request starts with
// the earliest of them.
func TestFoldWithoutTheRequestsRowStartsWithTheEarliestRow(t *testing.T) {
	d := testDeriver(t)
	_, c1 := foldRows(t, d)
	c1.FallbackIndex = 1
	c2 := c1
	c2.ID, c2.FallbackIndex, c2.Start = "c2", 2, c1.Start.Add(time.Second)
	c1.Record.Outcome = record.OutcomeError
	var out GatewayRecord
	d.FoldFallbacks([]*GatewayRecord{&c1, &c2}, &out)
	assert.Equal(t, c1.Start, out.Start)
	assert.InDelta(t, 1.5, out.Record.Duration, 1e-9, "from the first fallback's start to the second's end")
}

// README, Fallback rows: "either row may come first". Without a fallback
// index the request is whole once its row and a successful fallback row
// are there, in either order; it was whole only when the fallback row came
// first, and otherwise waited out fallbacks::wait (expired, not matched).
func TestRowsCompleteWithoutFallbackIndexInEitherOrder(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	assert.True(t, GatewayRowsComplete([]*GatewayRecord{&child, &parent}))
	assert.True(t, GatewayRowsComplete([]*GatewayRecord{&parent, &child}))
	failed := child
	failed.Record.Outcome = record.OutcomeError
	assert.False(t, GatewayRowsComplete([]*GatewayRecord{&parent, &failed}), "a failed fallback may be followed by another")
}

// The served attempt's TTFT on the client's clock: a fallback that started
// before the request's row (another clock) or whose first token comes past
// derive::max_ttft_seconds on the client's clock gives no TTFT.
func TestFoldTTFTThatCannotBeOnTheClientsClock(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	child.FallbackIndex = 1
	maxTTFT := DefaultConfig().MaxTTFTSeconds
	for name, tc := range map[string]struct {
		shift   time.Duration
		content bool
	}{
		"started before the request, first chunk":   {-time.Second, false},
		"started before the request, first content": {-time.Second, true},
		"past the bound, first chunk":               {time.Duration(maxTTFT * float64(time.Second)), false},
		"past the bound, first content":             {time.Duration(maxTTFT * float64(time.Second)), true},
	} {
		t.Run(name, func(t *testing.T) {
			c := child
			c.Start = parent.Start.Add(tc.shift)
			c.Record.Duration = 10
			if tc.content {
				c.Record.TimeToFirstContent, c.Record.HasTimeToFirstContent = 0.5, true
				c.Record.MeasuredAt = record.MeasuredAtFirstContent
			} else {
				c.Record.TimeToFirstChunk, c.Record.HasTimeToFirstChunk = 0.5, true
				c.Record.MeasuredAt = record.MeasuredAtFirstChunk
			}
			var out GatewayRecord
			d.FoldFallbacks([]*GatewayRecord{&parent, &c}, &out)
			_, has := out.Record.TTFT()
			assert.False(t, has)
			assert.Empty(t, out.Record.MeasuredAt)
			assert.Equal(t, GatewayTTFTAfterEnd, out.Rejected)
		})
	}
}

// A first token within 1 ms of the folded end is clock rounding, as on one
// row (TestRowDurationRules): kept.
func TestFoldTTFTWithinAMillisecondOfTheEndIsKept(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	child.FallbackIndex = 1
	child.Record.TimeToFirstChunk, child.Record.HasTimeToFirstChunk = 0.5005, true
	child.Record.MeasuredAt = record.MeasuredAtFirstChunk
	var out GatewayRecord
	d.FoldFallbacks([]*GatewayRecord{&parent, &child}, &out)
	assert.InDelta(t, 0.7, out.Record.Duration, 1e-9)
	v, has := out.Record.TTFT()
	assert.True(t, has)
	assert.InDelta(t, 0.7005, v, 1e-9)
	assert.Empty(t, out.Rejected)
}

// A saved row reads back within the attempt bounds the fold adds up: a
// saved state naming more attempts than a record claims does not read.
func TestGatewayRecordReadBackIsBounded(t *testing.T) {
	var r GatewayRecord
	require.NoError(t, r.UnmarshalJSON([]byte(`{"record":{},"own":100,"fallback_index":100}`)))
	assert.Error(t, r.UnmarshalJSON([]byte(`{"record":{},"own":101}`)))
	assert.Error(t, r.UnmarshalJSON([]byte(`{"record":{},"own":1,"fallback_index":101}`)))
	assert.Error(t, r.UnmarshalJSON([]byte(`{"record":{},"own":-1}`)))
}

// The request streamed when any of its rows says so, the row that served
// too when it does not know.
func TestFoldStreamedFromAnyRow(t *testing.T) {
	d := testDeriver(t)
	parent, child := foldRows(t, d)
	child.FallbackIndex = 1
	parent.Record.Streamed, parent.Record.StreamedKnown = true, true
	require.False(t, child.Record.StreamedKnown)
	var out GatewayRecord
	d.FoldFallbacks([]*GatewayRecord{&parent, &child}, &out)
	assert.True(t, out.Record.StreamedKnown && out.Record.Streamed)
}
