package derive

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

func testRowFormat(t testing.TB, c GatewayFormatConfig) *GatewayFormat {
	t.Helper()
	if c.Name == "" {
		c.Name = "test"
	}
	if c.MeasuredAt == "" {
		c.MeasuredAt = record.MeasuredAtFirstChunk
	}
	f, err := NewGatewayFormat(c)
	require.NoError(t, err)
	return f
}

func testDeriver(t testing.TB) *Deriver {
	t.Helper()
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	return d
}

// litellmFormat is the shape of LiteLLM's StandardLoggingPayload: unix
// seconds, completionStartTime as the first-token time.
func litellmRow(over func(*GatewayRow)) *GatewayRow {
	r := &GatewayRow{
		Start: 1796083201.12, FirstToken: 1796083201.5325, FirstTokenName: "completionStartTime", End: 1796083202.75,
		Stream: true, Outcome: record.OutcomeComplete, PromptTokens: 1180.0, Model: "gpt-4.1-mini",
	}
	if over != nil {
		over(r)
	}
	return r
}

func TestRowFirstTokenStampedAtTheEndIsNoTTFT(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{Name: "litellm", TimeFormat: "unix_s"})
	for name, tc := range map[string]struct {
		over    func(*GatewayRow)
		hasTTFT bool
		reject  string
	}{
		"a real first chunk":                      {nil, true, ""},
		"streamed, stamped at the end":            {func(r *GatewayRow) { r.FirstToken = 1796083202.75 }, false, GatewayTTFTStampedAtEnd},
		"streamed, stamped within 1 ms":           {func(r *GatewayRow) { r.FirstToken = 1796083202.7495 }, false, GatewayTTFTStampedAtEnd},
		"stream unknown, stamped at the end":      {func(r *GatewayRow) { r.FirstToken, r.Stream = 1796083202.75, nil }, false, GatewayTTFTStampedAtEnd},
		"failed, stamped at the end":              {func(r *GatewayRow) { r.FirstToken, r.Outcome = 1796083202.75, record.OutcomeError }, false, GatewayTTFTStampedAtEnd},
		"2 ms before the end is a first chunk":    {func(r *GatewayRow) { r.FirstToken = 1796083202.748 }, true, ""},
		"not streamed: no TTFT even if it is one": {func(r *GatewayRow) { r.Stream = false }, false, GatewayTTFTNotStreamed},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(f, litellmRow(tc.over), &out))
			_, has := out.Record.TTFT()
			assert.Equal(t, tc.hasTTFT, has)
			assert.Equal(t, tc.reject, out.Rejected)
			if has {
				assert.Equal(t, record.MeasuredAtFirstChunk, out.Record.MeasuredAt)
				assert.Equal(t, "llm_gateway_log/litellm:completionStartTime", out.Record.Source)
			} else {
				assert.Empty(t, out.Record.MeasuredAt)
				assert.Empty(t, out.Record.Source)
			}
			assert.InDelta(t, 1.63, out.Record.Duration, 1e-6)
		})
	}
}

func TestRowDurationRules(t *testing.T) {
	d := testDeriver(t)
	chunk := testRowFormat(t, GatewayFormatConfig{})
	content := testRowFormat(t, GatewayFormatConfig{MeasuredAt: record.MeasuredAtFirstContent})
	for name, tc := range map[string]struct {
		f        *GatewayFormat
		ttft     any
		duration any
		stream   any
		hasTTFT  bool
		reject   string
		streamed bool
	}{
		"ttft below the duration":                           {chunk, "400", "1630", nil, true, "", true},
		"equal to the duration, not known to stream":        {chunk, "1630", "1630", nil, false, GatewayTTFTIsDuration, false},
		"within 1 ms of the duration, not known to stream":  {chunk, "1629.5", "1630", nil, false, GatewayTTFTIsDuration, false},
		"equal to the duration on a streamed call":          {chunk, "1630", "1630", true, true, "", true},
		"first-content clock equal to the duration":         {content, "1630", "1630", nil, true, "", true},
		"after the end is another clock":                    {chunk, "1700", "1630", true, false, GatewayTTFTAfterEnd, true},
		"after the end by less than 1 ms is clock rounding": {chunk, "1630.5", "1630", true, true, "", true},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(tc.f, &GatewayRow{TTFT: tc.ttft, TTFTName: "ttft_ms", Duration: tc.duration, Stream: tc.stream}, &out))
			_, has := out.Record.TTFT()
			assert.Equal(t, tc.hasTTFT, has)
			assert.Equal(t, tc.reject, out.Rejected)
			assert.Equal(t, tc.streamed, out.Record.Streamed)
		})
	}
}

func TestRowUnitsAndTimes(t *testing.T) {
	d := testDeriver(t)
	for name, tc := range map[string]struct {
		c        GatewayFormatConfig
		in       GatewayRow
		ttft     float64
		duration float64
		start    time.Time
	}{
		"ms by default": {GatewayFormatConfig{}, GatewayRow{TTFT: 412.5, Duration: "1630"}, 0.4125, 1.63, time.Time{}},
		"seconds":       {GatewayFormatConfig{TTFTUnit: "s", DurationUnit: "s"}, GatewayRow{TTFT: "0.84", Duration: 2.5}, 0.84, 2.5, time.Time{}},
		"microseconds":  {GatewayFormatConfig{TTFTUnit: "us"}, GatewayRow{TTFT: 250000.0, Duration: 1000.0}, 0.25, 1, time.Time{}},
		"nanoseconds":   {GatewayFormatConfig{TTFTUnit: "ns"}, GatewayRow{TTFT: 250e6, Duration: 1000.0}, 0.25, 1, time.Time{}},
		"rfc3339 with a space and a zone": {GatewayFormatConfig{}, GatewayRow{TTFT: 1.0, Start: "2026-12-01 07:51:33.854766442+00:00", End: "2026-12-01 07:51:34.854766442+00:00"},
			0.001, 1, time.Date(2026, 12, 1, 7, 51, 33, 854766442, time.UTC)},
		"rfc3339 without a zone is UTC": {GatewayFormatConfig{}, GatewayRow{TTFT: 1.0, Start: "2026-12-01T07:51:33", Duration: 10.0},
			0.001, 0.01, time.Date(2026, 12, 1, 7, 51, 33, 0, time.UTC)},
		"unix ms": {GatewayFormatConfig{TimeFormat: "unix_ms"}, GatewayRow{Start: "1796083201120", FirstToken: 1796083201532.5, End: 1796083202750.0},
			0.4125, 1.63, time.UnixMilli(1796083201120).UTC()},
		"a Go layout": {GatewayFormatConfig{TimeFormat: "2006-01-02 15:04:05"}, GatewayRow{TTFT: "5", Start: "2026-11-30 10:00:00", Duration: 50.0},
			0.005, 0.05, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(testRowFormat(t, tc.c), &tc.in, &out))
			v, has := out.Record.TTFT()
			require.True(t, has)
			assert.InDelta(t, tc.ttft, v, 1e-9)
			assert.InDelta(t, tc.duration, out.Record.Duration, 1e-9)
			assert.Equal(t, tc.start, out.Start)
			assert.Equal(t, !tc.start.IsZero(), out.HasStart)
		})
	}
}

// The placeholders exports write for a missing number are no value: the
// row keeps its outcome and duration, with no TTFT (a first-token timeout
// row still counts, censored at its duration).
func TestRowMissingNumberPlaceholders(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{MeasuredAt: record.MeasuredAtFirstContent})
	for _, v := range []string{"", "-", "NaN", "nan", "None", "N/A", "null", `\N`} {
		var out GatewayRecord
		require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: v, TTFTName: "ttft_ms", Duration: "30000", Outcome: record.OutcomeTimeoutFirstToken, PromptTokens: v}, &out), "%q", v)
		_, has := out.Record.TTFT()
		assert.False(t, has, "%q", v)
		assert.Equal(t, record.OutcomeTimeoutFirstToken, out.Record.Outcome, "%q", v)
		assert.InDelta(t, 30.0, out.Record.Duration, 1e-9, "%q", v)
		assert.False(t, out.Record.HasPromptTokens, "%q", v)
	}
}

func TestRowBadValuesSayWhy(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	for name, tc := range map[string]struct {
		in     GatewayRow
		reason string
	}{
		"text ttft":          {GatewayRow{TTFT: "fast"}, GatewayBadTTFT},
		"infinite ttft":      {GatewayRow{TTFT: "+Inf"}, GatewayBadTTFT},
		"object ttft":        {GatewayRow{TTFT: map[string]any{"a": 1.0}}, GatewayBadTTFT},
		"negative ttft":      {GatewayRow{TTFT: -3.0}, GatewayNegative},
		"absurd ttft":        {GatewayRow{TTFT: 9e6}, GatewayAbsurdTTFT},
		"huge numeric text":  {GatewayRow{TTFT: "1" + strings.Repeat("0", 70)}, GatewayBadTTFT},
		"text duration":      {GatewayRow{Duration: "long"}, GatewayBadNumber},
		"negative duration":  {GatewayRow{Duration: -1.0}, GatewayNegative},
		"negative tokens":    {GatewayRow{PromptTokens: "-10"}, GatewayNegative},
		"tokens beyond 2^40": {GatewayRow{OutputTokens: 9e18}, GatewayBadNumber},
		"bad retries":        {GatewayRow{Retries: "twice"}, GatewayBadNumber},
		"bad time":           {GatewayRow{Start: "yesterday"}, GatewayBadTime},
		"end before start":   {GatewayRow{Start: "2026-11-30T00:00:02Z", End: "2026-11-30T00:00:01Z"}, GatewayNegative},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			assert.Equal(t, tc.reason, d.FromGatewayRow(f, &tc.in, &out))
		})
	}
	var out GatewayRecord
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{TTFT: "", PromptTokens: `\N`, Duration: "null"}, &out), "empty, SQL NULL and null are no value")
	assert.False(t, out.Record.HasPromptTokens || out.Record.HasDuration)
	assert.Equal(t, "unknown", out.Record.PromptBand)
}

func TestRowOutcomes(t *testing.T) {
	d := testDeriver(t)
	chunk := testRowFormat(t, GatewayFormatConfig{})
	content := testRowFormat(t, GatewayFormatConfig{MeasuredAt: record.MeasuredAtFirstContent})
	for name, tc := range map[string]struct {
		f       *GatewayFormat
		in      GatewayRow
		outcome string
		hasTTFT bool
	}{
		"no status is a finished request":      {chunk, GatewayRow{}, record.OutcomeComplete, false},
		"status timeout without a first token": {chunk, GatewayRow{Outcome: OutcomeTimeout}, record.OutcomeTimeoutFirstToken, false},
		"status timeout after a first content": {content, GatewayRow{Outcome: OutcomeTimeout, TTFT: 300.0}, record.OutcomeTimeoutIdle, true},
		// A first chunk may have been role-only: no content is known to have
		// come, as on spans.
		"status timeout after a first chunk": {chunk, GatewayRow{Outcome: OutcomeTimeout, TTFT: 300.0}, record.OutcomeTimeoutFirstToken, true},
		"Bifrost's idle timeout before any content": {chunk, GatewayRow{Outcome: record.OutcomeError,
			ErrorText: "Error reading stream: stream idle timeout: no data received within configured window"}, record.OutcomeTimeoutFirstToken, false},
		"a deadline":                 {chunk, GatewayRow{Outcome: record.OutcomeError, ErrorText: "context deadline exceeded"}, record.OutcomeTimeoutDeadline, false},
		"timed out":                  {chunk, GatewayRow{Outcome: record.OutcomeError, ErrorText: "upstream timed out"}, record.OutcomeTimeoutFirstToken, false},
		"HTTP 504 as the error code": {chunk, GatewayRow{Outcome: record.OutcomeError, ErrorText: "504"}, record.OutcomeTimeoutFirstToken, false},
		"Vercel's chunk timeout is idle, first token or not": {chunk, GatewayRow{Outcome: record.OutcomeError, ErrorText: "Chunk timeout after 30s"},
			record.OutcomeTimeoutIdle, false},
		"a rate limit is an error":               {chunk, GatewayRow{Outcome: record.OutcomeError, ErrorText: "rate_limit_error"}, record.OutcomeError, false},
		"an error's text is read only on errors": {chunk, GatewayRow{Outcome: record.OutcomeComplete, ErrorText: "timeout"}, record.OutcomeComplete, false},
		"a first-content export's first-token timeout keeps no TTFT": {content, GatewayRow{Outcome: record.OutcomeTimeoutFirstToken, TTFT: 900.0},
			record.OutcomeTimeoutFirstToken, false},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(tc.f, &tc.in, &out))
			assert.Equal(t, tc.outcome, out.Record.Outcome)
			_, has := out.Record.TTFT()
			assert.Equal(t, tc.hasTTFT, has)
		})
	}
}

func TestRowAttempts(t *testing.T) {
	d := testDeriver(t)
	f := testRowFormat(t, GatewayFormatConfig{})
	trail2 := `[{"attempt":0,"key_id":"k","fail_reason":"rate_limit_error"},{"attempt":1,"key_id":"k","fail_reason":"rate_limit_error"}]`
	for name, tc := range map[string]struct {
		in       GatewayRow
		attempts int64
	}{
		"one attempt":                                  {GatewayRow{}, 1},
		"explicit attempts win":                        {GatewayRow{Attempts: "3", Retries: 5.0}, 3},
		"explicit zero is no count":                    {GatewayRow{Attempts: "0", Retries: 1.0}, 2},
		"a retry":                                      {GatewayRow{Retries: 1.0}, 2},
		"a 0-based trail counts its entries":           {GatewayRow{Trail: []any{map[string]any{"attempt": 0.0}, map[string]any{"attempt": 1.0}}}, 2},
		"a trail kept as JSON text (SQLite)":           {GatewayRow{Trail: trail2}, 2},
		"a fallback row alone: one provider before it": {GatewayRow{FallbackIndex: 1.0, Trail: `[{"attempt":0}]`}, 2},
		"retries on the fallback":                      {GatewayRow{FallbackIndex: 1.0, Retries: 1.0}, 3},
		"a broken trail counts nothing":                {GatewayRow{Trail: "[{"}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(f, &tc.in, &out))
			assert.Equal(t, tc.attempts, out.Record.Attempts)
		})
	}
}

// No record without a TTFT says where a clock stopped, whatever the row.
func TestRowMeasuredAtOnlyWithTTFT(t *testing.T) {
	d := testDeriver(t)
	formats := []*GatewayFormat{
		testRowFormat(t, GatewayFormatConfig{}),
		testRowFormat(t, GatewayFormatConfig{MeasuredAt: record.MeasuredAtFirstContent, TimeFormat: "unix_s"}),
	}
	values := []any{nil, "", "0", 0.0, 1.0, 400.0, 1630.0, "1630", -1.0, true, false, "1", "x"}
	outcomes := []string{"", record.OutcomeComplete, record.OutcomeError, OutcomeTimeout, record.OutcomeTimeoutFirstToken, record.OutcomeClosed}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() any { return values[rng.IntN(len(values))] }
	checked := 0
	for range 20000 {
		in := GatewayRow{
			TTFT: pick(), FirstToken: pick(), Start: pick(), End: pick(), Duration: pick(), Stream: pick(),
			Outcome: outcomes[rng.IntN(len(outcomes))], ErrorText: []string{"", "timeout"}[rng.IntN(2)],
		}
		var out GatewayRecord
		if d.FromGatewayRow(formats[rng.IntN(len(formats))], &in, &out) != "" {
			continue
		}
		checked++
		if _, has := out.Record.TTFT(); !has {
			require.Empty(t, out.Record.MeasuredAt, "%+v", in)
			require.Empty(t, out.Record.Source, "%+v", in)
		}
		require.GreaterOrEqual(t, out.Record.Attempts, int64(1))
		require.NotEmpty(t, out.Record.PromptBand)
	}
	assert.Greater(t, checked, 1000)
}

// bifrostRows are a fallback's two rows as Bifrost logs them: the request's
// own row (429, retried once) and the fallback attempt's row.
func bifrostRows(t *testing.T, d *Deriver) (parent, child GatewayRecord) {
	t.Helper()
	f := testRowFormat(t, GatewayFormatConfig{})
	trail := []any{map[string]any{"attempt": 0.0}, map[string]any{"attempt": 1.0}}
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
		ID: "p", Start: "2026-12-01T07:52:44.30573491Z", Duration: 119.0, Stream: true, Outcome: record.OutcomeError,
		ErrorText: "requests", Retries: 1.0, FallbackIndex: 0.0, Trail: trail, Provider: "openai", Model: "scn-http_429", Route: "ratelimit-guard",
	}, &parent))
	require.Empty(t, d.FromGatewayRow(f, &GatewayRow{
		ID: "c", ParentID: "p", Start: "2026-12-01T07:52:44.425359051Z", Duration: 551.0, Stream: true, Outcome: record.OutcomeComplete,
		Retries: 0.0, FallbackIndex: 1.0, Trail: trail[:1], Provider: "openai", Model: "scn-normal", Route: "ratelimit-guard",
		PromptTokens: 1234.0, OutputTokens: 10.0,
	}, &child))
	return parent, child
}

func TestFoldFallbacks(t *testing.T) {
	d := testDeriver(t)
	parent, child := bifrostRows(t, d)
	assert.True(t, parent.AwaitsFallback(), "a failed first attempt may be followed by a fallback row")
	assert.False(t, child.AwaitsFallback())
	assert.True(t, child.Final())
	assert.Equal(t, int64(2), parent.Record.Attempts)
	assert.True(t, parent.Record.FailedOverKnown && !parent.Record.FailedOver, "a retry on the same target is no failover")
	assert.True(t, child.Record.FailedOverKnown && child.Record.FailedOver)
	assert.Equal(t, int64(2), child.Record.Attempts, "alone, a fallback row counts one attempt before it")
	for _, r := range []*GatewayRecord{&parent, &child} {
		id, linked := r.Linked()
		assert.True(t, linked)
		assert.Equal(t, "p", id, "both rows belong to the request p")
	}
	assert.False(t, GatewayRowsComplete([]*GatewayRecord{&parent}), "a fallback row may still come")
	assert.False(t, GatewayRowsComplete([]*GatewayRecord{&child}), "the request's own row may still come")
	assert.True(t, GatewayRowsComplete([]*GatewayRecord{&child, &parent}))
	failedChild := child
	failedChild.Record.Outcome = record.OutcomeError
	assert.False(t, GatewayRowsComplete([]*GatewayRecord{&parent, &failedChild}), "a failed fallback may be followed by another")
	ok := parent
	ok.Record.Outcome = record.OutcomeComplete
	_, linked := ok.Linked()
	assert.False(t, linked, "a request that did not fail is a request on its own")

	for name, rows := range map[string][]*GatewayRecord{
		"parent first": {&parent, &child},
		"child first":  {&child, &parent},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			d.FoldFallbacks(rows, &out)
			r := out.Record
			assert.Equal(t, record.OutcomeComplete, r.Outcome, "the attempt that served decides")
			assert.Equal(t, int64(3), r.Attempts, "429, its retry, and the fallback")
			assert.True(t, r.FailedOverKnown && r.FailedOver)
			assert.Equal(t, "scn-normal", r.Model)
			assert.Equal(t, "ratelimit-guard", r.Route)
			assert.Equal(t, "p", out.ID)
			assert.Equal(t, parent.Start, out.Start, "the client's request started with the first row")
			assert.InDelta(t, 0.119625+0.551, r.Duration, 1e-6, "from the first row's start to the fallback's end")
			assert.Equal(t, "<2k", r.PromptBand)
			_, has := r.TTFT()
			assert.False(t, has)
			assert.Empty(t, r.MeasuredAt)
		})
	}

	t.Run("a fallback TTFT moves onto the client's clock", func(t *testing.T) {
		c := child
		c.Record.TimeToFirstChunk, c.Record.HasTimeToFirstChunk, c.Record.MeasuredAt = 0.3, true, record.MeasuredAtFirstChunk
		var out GatewayRecord
		d.FoldFallbacks([]*GatewayRecord{&parent, &c}, &out)
		assert.InDelta(t, 0.119625+0.3, out.Record.TimeToFirstChunk, 1e-6)
		assert.Equal(t, record.MeasuredAtFirstChunk, out.Record.MeasuredAt)

		c.HasStart = false // no start: the shift is unknown, so is the TTFT
		d.FoldFallbacks([]*GatewayRecord{&parent, &c}, &out)
		_, has := out.Record.TTFT()
		assert.False(t, has)
		assert.Empty(t, out.Record.MeasuredAt)
		assert.InDelta(t, 0.119+0.551, out.Record.Duration, 1e-9, "without every start, the attempts' durations add up")
	})

	t.Run("a second fallback whose first is missing still counts it", func(t *testing.T) {
		c := child
		c.FallbackIndex = 2
		var out GatewayRecord
		d.FoldFallbacks([]*GatewayRecord{&parent, &c}, &out)
		assert.Equal(t, int64(4), out.Record.Attempts, "2 on the first provider, at least 1 on the second, 1 on the third")
	})
}

// sourceOf gives "llm_gateway_log/<name>:<key>" for any key, remembered or
// not (past maxSourceNames), and is safe for the file input's parallel
// readers.
func TestGatewaySourceOfIsTheJoinedName(t *testing.T) {
	f, err := NewGatewayFormat(GatewayFormatConfig{Name: "x", MeasuredAt: "first_content"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3*maxSourceNames; i++ {
				key := "k" + strconv.Itoa(i%(2*maxSourceNames))
				if got, want := f.sourceOf(key), "llm_gateway_log/x:"+key; got != want {
					t.Errorf("sourceOf(%q) = %q, want %q", key, got, want)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(*f.sources.Load()); n != maxSourceNames {
		t.Errorf("%d names remembered, want the bound %d", n, maxSourceNames)
	}
}

// A row's value no real request has is refused by the bounds every input
// obeys, and the row keeps its record and TTFT without it: a record the
// connector refuses to read back would be derived again from its
// attributes and lose the TTFT. Every record here passes the connector's
// read-back check.
func TestRowBoundsKeepTheRecord(t *testing.T) {
	d := testDeriver(t)
	lim := d.readBackLimits()
	ms := testRowFormat(t, GatewayFormatConfig{TTFTUnit: "ms", DurationUnit: "ms", MeasuredAt: record.MeasuredAtFirstContent})
	for name, tc := range map[string]struct {
		f        *GatewayFormat
		in       GatewayRow
		attempts int64
		duration float64 // 0: none
		refused  []string
	}{
		"a thousand attempts": {ms, GatewayRow{TTFT: "500", Duration: "2000", Attempts: "1000"}, 1, 2, []string{GatewayAttemptsAboveMax}},
		"attempts refused, retries count": {ms, GatewayRow{TTFT: "500", Duration: "2000", Attempts: "1000", Retries: 2.0}, 3, 2,
			[]string{GatewayAttemptsAboveMax}},
		"5,000 retries on a fallback": {ms, GatewayRow{TTFT: "500", Duration: "2000", Retries: "5000", FallbackIndex: "7"}, 8, 2,
			[]string{GatewayRetriesAboveMax}},
		"a trail of 5,000 attempts": {ms, GatewayRow{TTFT: "500", Duration: "2000", Trail: make([]any, 5000)}, 1, 2, []string{GatewayRetriesAboveMax}},
		"fallback index 1,000":      {ms, GatewayRow{TTFT: "500", Duration: "2000", FallbackIndex: 1000.0}, 1, 2, []string{GatewayFallbackIndexAboveMax}},
		"99 retries and 99 fallbacks: counted up to the most a record claims": {ms,
			GatewayRow{TTFT: "500", Duration: "2000", Retries: 99.0, FallbackIndex: 99.0}, record.MaxAttempts, 2, nil},
		"a latency of 55 hours": {ms, GatewayRow{TTFT: "500", Duration: "200000000"}, 1, 0, []string{GatewayDurationAboveMax}},
		"an end 25 hours after the start (clock skew)": {testRowFormat(t, GatewayFormatConfig{Name: "litellm", TimeFormat: "unix_s"}),
			*litellmRow(func(r *GatewayRow) { r.End = 1796083201.12 + 90000 }), 1, 0, []string{GatewayDurationAboveMax}},
		"every bound at once": {ms, GatewayRow{TTFT: "500", Duration: "200000000", Attempts: "1000", Retries: 5000.0, FallbackIndex: 1000.0}, 1, 0,
			[]string{GatewayDurationAboveMax, GatewayAttemptsAboveMax, GatewayRetriesAboveMax, GatewayFallbackIndexAboveMax}},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Empty(t, d.FromGatewayRow(tc.f, &tc.in, &out), "the row is kept")
			r := out.Record
			_, hasTTFT := r.TTFT()
			assert.True(t, hasTTFT, "the TTFT is kept")
			assert.Equal(t, record.OutcomeComplete, r.Outcome)
			assert.Equal(t, tc.attempts, r.Attempts)
			assert.Equal(t, tc.duration != 0, r.HasDuration)
			if tc.duration != 0 {
				assert.InDelta(t, tc.duration, r.Duration, 1e-9)
			}
			var refused []string
			out.RefusedValues(func(reason string) { refused = append(refused, reason) })
			assert.Equal(t, tc.refused, refused)
			assert.Equal(t, record.Valid, record.Validate(&r, &lim), "the connector reads the record back as it is")
		})
	}

	t.Run("folded rows count up to the most a record claims", func(t *testing.T) {
		f := testRowFormat(t, GatewayFormatConfig{})
		rows := make([]*GatewayRecord, 32)
		for i := range rows {
			in := GatewayRow{ID: "c" + strconv.Itoa(i), ParentID: "p", Duration: 0.1, Stream: true, Outcome: record.OutcomeError,
				Retries: 3.0, FallbackIndex: float64(i), Model: "m"}
			if i == 0 {
				in.ID, in.ParentID = "p", ""
			}
			if i == len(rows)-1 {
				in.Outcome, in.FirstToken, in.Start = record.OutcomeComplete, nil, nil
				in.TTFT = 0.05
			}
			rows[i] = &GatewayRecord{}
			require.Empty(t, d.FromGatewayRow(f, &in, rows[i]))
		}
		var out GatewayRecord
		d.FoldFallbacks(rows, &out)
		assert.Equal(t, int64(record.MaxAttempts), out.Record.Attempts, "32 targets, 4 attempts each")
		assert.Equal(t, record.Valid, record.Validate(&out.Record, &lim))
	})
}

// TestRowZoneAbbreviations: a layout whose zone is an abbreviation (MST)
// reads UTC, GMT and numeric offsets; an abbreviation whose offset Go does
// not know (PST on a host whose zone is not Pacific) is bad_timestamp. Go
// reads it as offset zero without an error, so the row's start was eight
// hours off.
func TestRowZoneAbbreviations(t *testing.T) {
	if _, off := time.Date(2026, 11, 30, 0, 0, 0, 0, time.Local).Zone(); off == -8*3600 {
		t.Skip("the local zone defines PST")
	}
	d := testDeriver(t)
	abbrev := testRowFormat(t, GatewayFormatConfig{TimeFormat: "2006-01-02 15:04:05 MST"})
	both := testRowFormat(t, GatewayFormatConfig{TimeFormat: "2006-01-02 15:04:05 -0700 MST"})
	for name, tc := range map[string]struct {
		f      *GatewayFormat
		start  string
		want   time.Time
		reason string
	}{
		"UTC":                         {abbrev, "2026-11-30 10:00:00 UTC", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), ""},
		"GMT":                         {abbrev, "2026-11-30 10:00:00 GMT", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), ""},
		"PST alone":                   {abbrev, "2026-11-30 10:00:00 PST", time.Time{}, GatewayBadTime},
		"PST with its numeric offset": {both, "2026-11-30 10:00:00 -0800 PST", time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC), ""},
	} {
		t.Run(name, func(t *testing.T) {
			var out GatewayRecord
			require.Equal(t, tc.reason, d.FromGatewayRow(tc.f, &GatewayRow{TTFT: "5", Start: tc.start}, &out))
			if tc.reason == "" {
				assert.Equal(t, tc.want, out.Start)
			}
		})
	}
}
