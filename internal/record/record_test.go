package record

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func fullRecord() Record {
	return Record{
		TimeToFirstContent: 0.32, HasTimeToFirstContent: true,
		TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true,
		TimeToHeaders: 0.01, HasTimeToHeaders: true,
		MaxChunkGap: 0.2, HasMaxChunkGap: true,
		Duration: 0.57, HasDuration: true,
		ContentChunks: 10, HasContentChunks: true,
		PromptTokens: 1234, HasPromptTokens: true,
		CachedTokens: 100, HasCachedTokens: true,
		OutputTokens: 10, HasOutputTokens: true,
		Streamed: true, StreamedKnown: true,
		Outcome: OutcomeComplete, PromptBand: "<2k", Attempts: 2,
		MeasuredAt: MeasuredAtFirstContent, Observer: ObserverClient,
		Route: "support", Provider: "anthropic", Model: "claude", Source: "ttft.chunk",
	}
}

func TestWriteThenReadRoundTrips(t *testing.T) {
	in := fullRecord()
	attrs := pcommon.NewMap()
	attrs.PutStr("unrelated", "x")
	in.Write(attrs)
	_, stamped := attrs.Get(KeyOutcome)
	require.True(t, stamped)
	var out Record
	state, _ := Inspect(attrs, &out)
	require.Equal(t, StateStamped, state)
	assert.Equal(t, in, out)
}

func TestWriteKeepsProducerTargetValues(t *testing.T) {
	attrs := pcommon.NewMap()
	attrs.PutStr(KeyModel, "producer-model")
	r := fullRecord()
	r.Write(attrs)
	v, _ := attrs.Get(KeyModel)
	assert.Equal(t, "producer-model", v.Str())
}

func TestWriteFillsUnusableProducerTargetValues(t *testing.T) {
	// An empty or non-string target would read back as no target: the
	// record's own value is written over it, and reads back.
	for _, set := range []func(pcommon.Map){
		func(m pcommon.Map) { m.PutStr(KeyModel, "") },
		func(m pcommon.Map) { m.PutInt(KeyModel, 4) },
	} {
		attrs := pcommon.NewMap()
		set(attrs)
		r := fullRecord()
		r.Write(attrs)
		var back Record
		state, _ := Inspect(attrs, &back)
		require.Equal(t, StateStamped, state)
		assert.Equal(t, r.Model, back.Model)
		assert.Equal(t, r.Provider, back.Provider)
	}
}

func TestWriteClampsAttemptsToOne(t *testing.T) {
	attrs := pcommon.NewMap()
	r := Record{Outcome: OutcomeError}
	r.Write(attrs)
	v, _ := attrs.Get(KeyAttempts)
	assert.Equal(t, int64(1), v.Int())
}

func TestReadRejectsUnusableRecords(t *testing.T) {
	cases := []struct {
		name string
		set  func(m pcommon.Map)
	}{
		{"no outcome", func(m pcommon.Map) { m.Remove(KeyOutcome) }},
		{"unknown outcome", func(m pcommon.Map) { m.PutStr(KeyOutcome, "exploded") }},
		{"outcome of wrong type", func(m pcommon.Map) { m.PutInt(KeyOutcome, 1) }},
		{"negative ttft", func(m pcommon.Map) { m.PutDouble(KeyTimeToFirstContent, -1) }},
		{"NaN ttft", func(m pcommon.Map) { m.PutDouble(KeyTimeToFirstContent, math.NaN()) }},
		{"infinite duration", func(m pcommon.Map) { m.PutDouble(KeyDuration, math.Inf(1)) }},
		{"ttft as string", func(m pcommon.Map) { m.PutStr(KeyTimeToFirstChunk, "0.3") }},
		{"negative tokens", func(m pcommon.Map) { m.PutInt(KeyPromptTokens, -5) }},
		// int64(NaN) is MinInt64 on amd64, which Validate rejects as
		// negative, but 0 on arm64: readCount rejects NaN itself.
		{"NaN tokens", func(m pcommon.Map) { m.PutDouble(KeyPromptTokens, math.NaN()) }},
		{"NaN attempts", func(m pcommon.Map) { m.PutDouble(KeyAttempts, math.NaN()) }},
		{"unknown clock", func(m pcommon.Map) { m.PutStr(KeyMeasuredAt, "headers") }},
		{"streamed as string", func(m pcommon.Map) { m.PutStr(KeyStreamed, "false") }},
		{"failed over as int", func(m pcommon.Map) { m.PutInt(KeyFailedOver, 1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := pcommon.NewMap()
			r := fullRecord()
			r.Write(attrs)
			tc.set(attrs)
			_, ok := read(attrs)
			assert.False(t, ok)
		})
	}
}

func TestReadAcceptsIntegerTimes(t *testing.T) {
	attrs := pcommon.NewMap()
	attrs.PutStr(KeyOutcome, OutcomeComplete)
	attrs.PutInt(KeyTimeToFirstContent, 2)
	attrs.PutInt(KeyAttempts, 3)
	r, ok := read(attrs)
	require.True(t, ok)
	assert.Equal(t, 2.0, r.TimeToFirstContent)
	assert.Equal(t, int64(3), r.Attempts)
}

func TestTTFTPrefersFirstContentAndNeverUsesAnUnlabelledChunk(t *testing.T) {
	r := Record{TimeToFirstChunk: 0.04, HasTimeToFirstChunk: true, MeasuredAt: MeasuredAtFirstContent}
	_, ok := r.TTFT()
	assert.False(t, ok, "a first chunk is not a TTFT unless the clock says first_chunk")
	r.MeasuredAt = MeasuredAtFirstChunk
	v, ok := r.TTFT()
	assert.True(t, ok)
	assert.Equal(t, 0.04, v)
	r.TimeToFirstContent, r.HasTimeToFirstContent = 0.3, true
	v, _ = r.TTFT()
	assert.Equal(t, 0.3, v)
}

func BenchmarkInspect(b *testing.B) {
	attrs := pcommon.NewMap()
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.system", "server.address", "http.route", "gen_ai.response.id", "gen_ai.response.model"} {
		attrs.PutStr(k, "v")
	}
	r := fullRecord()
	r.Write(attrs)
	var out Record
	b.ReportAllocs()
	for b.Loop() {
		Inspect(attrs, &out)
	}
}

func TestInspectTellsTheFourStatesApart(t *testing.T) {
	stamped := func() pcommon.Map {
		m := pcommon.NewMap()
		m.PutStr("gen_ai.operation.name", "chat")
		r := fullRecord()
		r.Write(m)
		return m
	}
	cases := []struct {
		name  string
		attrs func() pcommon.Map
		want  State
	}{
		{"producer attributes only", func() pcommon.Map {
			m := pcommon.NewMap()
			m.PutStr("gen_ai.operation.name", "chat")
			m.PutStr(KeyRoute, "support") // a route set by the app is not a record
			return m
		}, StateNone},
		{"stamped record", stamped, StateStamped},
		{"stamped record with a broken value", func() pcommon.Map {
			m := stamped()
			m.PutDouble(KeyDuration, -1)
			return m
		}, StateInvalid},
		{"outcome of the wrong type", func() pcommon.Map {
			m := stamped()
			m.PutInt(KeyOutcome, 3)
			return m
		}, StateInvalid},
		{"nested span, even with a record on it", func() pcommon.Map {
			m := stamped()
			m.PutStr(KeyNestedIn, "0102030405060708")
			return m
		}, StateNested},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			state, _ := Inspect(tc.attrs(), &r)
			assert.Equal(t, tc.want, state)
		})
	}
}

// read is Inspect for a stamped record.
func read(attrs pcommon.Map) (r Record, ok bool) {
	state, _ := Inspect(attrs, &r)
	return r, state == StateStamped
}

func TestCarries(t *testing.T) {
	m := pcommon.NewMap()
	// Keys as long as the two it looks for, and other ttft.* keys.
	m.PutStr("db.statement", "SELECT 1")   // 12 bytes, like ttft.outcome
	m.PutStr("url.template", "/x")         // 12
	m.PutStr("server.address.x", "")       // 16
	m.PutStr("http.request.x", "")         // 14, like ttft.nested_in
	m.PutStr(KeyMeasuredAt, "first_chunk") // a record key, but no outcome
	assert.False(t, Carries(m))
	m.PutStr(KeyNestedIn, "0102030405060708")
	assert.True(t, Carries(m))
	m.Remove(KeyNestedIn)
	m.PutStr(KeyOutcome, "complete")
	assert.True(t, Carries(m))
	assert.False(t, Carries(pcommon.NewMap()))
}

func TestWriteGrowsTheMapOnce(t *testing.T) {
	// Every key of the record written onto a span with ten attributes of
	// its own: the attribute array is allocated once, at its final size.
	r := Record{
		TimeToFirstContent: 1, HasTimeToFirstContent: true, TimeToFirstChunk: 0.5, HasTimeToFirstChunk: true,
		TimeToHeaders: 0.1, HasTimeToHeaders: true, MaxChunkGap: 0.2, HasMaxChunkGap: true, Duration: 2, HasDuration: true,
		ContentChunks: 3, HasContentChunks: true, PromptTokens: 10, HasPromptTokens: true, CachedTokens: 1, HasCachedTokens: true,
		OutputTokens: 5, HasOutputTokens: true, Streamed: true, StreamedKnown: true, FailedOver: true, FailedOverKnown: true,
		Outcome: OutcomeComplete, PromptBand: "<2k", Attempts: 2, MeasuredAt: MeasuredAtFirstContent, Observer: ObserverClient,
		Route: "r", Source: "ttft.chunk", Provider: "openai", Model: "gpt-4o",
	}
	m := pcommon.NewMap()
	for i := range 10 {
		m.PutInt(string(rune('a'+i)), int64(i))
	}
	written := 0
	run := func(write bool) float64 {
		return testing.AllocsPerRun(20, func() {
			cp := pcommon.NewMap()
			m.CopyTo(cp)
			if write {
				before := cp.Len()
				r.Write(cp)
				written = cp.Len() - before
			}
		})
	}
	copyOnly := run(false)
	withWrite := run(true)
	assert.Equal(t, maxKeys, written, "every key Write can add")
	assert.Equal(t, float64(written+1), withWrite-copyOnly, "a value per key written and the array once")
}

// FuzzCarriesAgreesWithInspect: where Carries finds neither ttft.outcome nor
// ttft.nested_in, Inspect finds no record and no marker (StateNone). The
// derivation tests Carries before Inspect on that promise
// (docs/architecture.md, "The connector behind the processor").
func FuzzCarriesAgreesWithInspect(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, "complete")
	f.Add([]byte{6, 9, 14, 15}, "")
	f.Add([]byte{13, 6, 200}, "0102030405060708")
	f.Add([]byte{18}, "0102030405060708")
	keys := []string{
		KeyTimeToFirstContent, KeyTimeToFirstChunk, KeyTimeToHeaders, KeyMaxChunkGap, KeyDuration,
		KeyContentChunks, KeyOutcome, KeyPromptBand, KeyAttempts, KeyMeasuredAt, KeyObserver, KeyRoute,
		KeyPromptTokens, KeyCachedTokens, KeyOutputTokens, KeyStreamed, KeySource, KeyFailedOver,
		KeyNestedIn, KeyProvider, KeyModel, "ttft.outcomes", "ttft.outcom", "ttft.nested_on", "db.statement",
	}
	f.Fuzz(func(t *testing.T, picks []byte, val string) {
		m := pcommon.NewMap()
		for i, p := range picks {
			k := keys[int(p)%len(keys)]
			switch p / 64 {
			case 0:
				m.PutStr(k, val)
			case 1:
				m.PutInt(k, int64(i))
			case 2:
				m.PutDouble(k, float64(i)/7)
			default:
				m.PutBool(k, i%2 == 0)
			}
		}
		var r Record
		state, _ := Inspect(m, &r)
		if !Carries(m) && state != StateNone {
			t.Fatalf("Carries is false but Inspect says %v on %v", state, m.AsRaw())
		}
	})
}

// readByType is readTime and readCount without their fast paths: what both
// read through Number alone.
func readByType(v pcommon.Value) (t float64, tOK bool, c int64, cOK bool) {
	if f, good := Number(v); good {
		if f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) {
			t, tOK = f, true
		}
		if f >= 0 && f <= math.MaxInt64/2 {
			c, cOK = int64(f), true
		}
	}
	return t, tOK, c, cOK
}

// checkReadsAlike holds readTime and readCount, fast paths and all, to
// readByType on v.
func checkReadsAlike(t *testing.T, v pcommon.Value) {
	t.Helper()
	wantT, wantTOK, wantC, wantCOK := readByType(v)
	var gotT float64
	var gotC int64
	var hasT, hasC bool
	okT := readTime(v, &gotT, &hasT)
	okC := readCount(v, &gotC, &hasC)
	assert.Equal(t, wantTOK, okT, "readTime(%v) ok", v.AsRaw())
	assert.Equal(t, wantTOK, hasT, "readTime(%v) has", v.AsRaw())
	if wantTOK {
		assert.Equal(t, math.Float64bits(wantT), math.Float64bits(gotT), "readTime(%v)", v.AsRaw())
	}
	assert.Equal(t, wantCOK, okC, "readCount(%v) ok", v.AsRaw())
	assert.Equal(t, wantCOK, hasC, "readCount(%v) has", v.AsRaw())
	if wantCOK {
		assert.Equal(t, wantC, gotC, "readCount(%v)", v.AsRaw())
	}
}

func TestReadNumbersFastPathsAgree(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, -1, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 62, math.MaxInt64 / 2, math.MaxInt64} {
		checkReadsAlike(t, pcommon.NewValueDouble(f))
	}
	for _, i := range []int64{0, 1, -1, 1 << 53, 1<<53 + 1, math.MaxInt64 / 2, math.MaxInt64/2 + 1, math.MaxInt64, math.MinInt64} {
		checkReadsAlike(t, pcommon.NewValueInt(i))
	}
	checkReadsAlike(t, pcommon.NewValueStr("1"))
	checkReadsAlike(t, pcommon.NewValueBool(true))
	checkReadsAlike(t, pcommon.NewValueEmpty())
}

func FuzzReadNumbersFastPathsAgree(f *testing.F) {
	f.Add(0.25, int64(3))
	f.Add(-1.0, int64(-1))
	f.Add(math.Inf(1), int64(1<<53+1))
	f.Fuzz(func(t *testing.T, d float64, i int64) {
		checkReadsAlike(t, pcommon.NewValueDouble(d))
		checkReadsAlike(t, pcommon.NewValueInt(i))
	})
}

// oracleKey is how Inspect read a ttft.* key before its loop read the
// common ones itself: every key through one switch, every number through
// readTime or readCount. FuzzInspectAgreesWithOracle holds Inspect to it.
func oracleKey(in *inspector, k string, v pcommon.Value) {
	r := in.r
	readT := func(dst *float64, has *bool) {
		if !readTime(v, dst, has) {
			in.fail(InvalidValue)
		}
	}
	readC := func(dst *int64, has *bool) {
		if !readCount(v, dst, has) {
			in.fail(InvalidValue)
		}
	}
	switch k {
	case KeyTimeToFirstContent:
		readT(&r.TimeToFirstContent, &r.HasTimeToFirstContent)
	case KeyTimeToFirstChunk:
		readT(&r.TimeToFirstChunk, &r.HasTimeToFirstChunk)
	case KeyTimeToHeaders:
		readT(&r.TimeToHeaders, &r.HasTimeToHeaders)
	case KeyMaxChunkGap:
		readT(&r.MaxChunkGap, &r.HasMaxChunkGap)
	case KeyDuration:
		readT(&r.Duration, &r.HasDuration)
	case KeyContentChunks:
		readC(&r.ContentChunks, &r.HasContentChunks)
	case KeyPromptTokens:
		readC(&r.PromptTokens, &r.HasPromptTokens)
	case KeyCachedTokens:
		readC(&r.CachedTokens, &r.HasCachedTokens)
	case KeyOutputTokens:
		readC(&r.OutputTokens, &r.HasOutputTokens)
	case KeyStreamed:
		if v.Type() == pcommon.ValueTypeBool {
			r.Streamed, r.StreamedKnown = v.Bool(), true
		} else {
			in.fail(InvalidValue)
		}
	case KeyFailedOver:
		if v.Type() == pcommon.ValueTypeBool {
			r.FailedOver, r.FailedOverKnown = v.Bool(), true
		} else {
			in.fail(InvalidValue)
		}
	case KeyPromptBand:
		r.PromptBand = strValue(v)
	case KeyObserver:
		r.Observer = strValue(v)
	case KeyRoute:
		r.Route = strValue(v)
	case KeySource:
		r.Source = strValue(v)
	default:
		in.key(k, v)
	}
}

func oracleInspect(attrs pcommon.Map, r *Record) (State, Invalid) {
	*r = Record{Attempts: 1}
	in := inspector{r: r}
	for k, v := range attrs.All() {
		switch {
		case strings.HasPrefix(k, ttftPrefix) && len(k) > len(ttftPrefix):
			oracleKey(&in, k, v)
		case k == KeyProvider:
			r.Provider = v.Str()
		case k == KeyModel:
			r.Model = v.Str()
		}
	}
	return in.state()
}

// FuzzInspectAgreesWithOracle: any mix of record keys and others, with
// values of any type, reads as oracleInspect reads it.
func FuzzInspectAgreesWithOracle(f *testing.F) {
	f.Add([]byte{0, 6, 64 + 5, 128 + 1, 192 + 15}, "complete", int64(3), 0.25)
	f.Add([]byte{6, 6, 64 + 6, 128 + 4, 128 + 4}, "first_chunk", int64(-1), -1.0)
	f.Add([]byte{9, 64 + 8, 128 + 8, 7, 13}, "client", int64(1<<53+1), math.Inf(1))
	f.Add([]byte{18, 19, 20, 21, 22, 23}, "", int64(0), math.NaN())
	keys := []string{
		KeyTimeToFirstContent, KeyTimeToFirstChunk, KeyTimeToHeaders, KeyMaxChunkGap, KeyDuration,
		KeyContentChunks, KeyOutcome, KeyPromptBand, KeyAttempts, KeyMeasuredAt, KeyObserver, KeyRoute,
		KeyPromptTokens, KeyCachedTokens, KeyOutputTokens, KeyStreamed, KeySource, KeyFailedOver,
		KeyNestedIn, KeyProvider, KeyModel, "ttft.outcomes", "ttft.", "ttft.duratio", "db.statement",
	}
	f.Fuzz(func(t *testing.T, picks []byte, s string, i int64, d float64) {
		m := pcommon.NewMap()
		for n, p := range picks {
			k := keys[int(p)%len(keys)]
			switch p / 64 {
			case 0:
				m.PutStr(k, s)
			case 1:
				m.PutInt(k, i+int64(n))
			case 2:
				m.PutDouble(k, d*float64(n+1))
			default:
				m.PutBool(k, n%2 == 0)
			}
		}
		var got, want Record
		gotState, gotWhy := Inspect(m, &got)
		wantState, wantWhy := oracleInspect(m, &want)
		if gotState != wantState || gotWhy != wantWhy || got != want {
			t.Fatalf("Inspect = %v %v %+v, oracle %v %v %+v on %v", gotState, gotWhy, got, wantState, wantWhy, want, m.AsRaw())
		}
	})
}
