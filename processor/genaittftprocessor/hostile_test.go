package genaittftprocessor

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

// TestLogsEvidenceRejectedCounted: a gateway log record whose values
// the duration and bound checks refuse (a TTFT after the request's end, a
// duration above max_duration_seconds, attempts above 100) is counted in
// evidence_rejected{kind=value}, as the same values on a span are.
func TestLogsEvidenceRejectedCounted(t *testing.T) {
	cases := []struct {
		name    string
		put     func(pcommon.Map)
		spanRef bool // the same values on a 1 s span are refused too
	}{
		{"ttft after end", func(a pcommon.Map) { a.PutInt("ttft_ms", 3000); a.PutInt("duration_ms", 1000) }, true},
		{"duration above max", func(a pcommon.Map) { a.PutInt("ttft_ms", 300); a.PutInt("duration_ms", 100*86400*1000) }, false},
		{"attempts above 100", func(a pcommon.Map) { a.PutInt("ttft_ms", 300); a.PutInt(record.KeyAttempts, 500) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The span path, for reference.
			ttel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, ttel.Shutdown(context.Background())) })
			tp, _ := newTraces(t, createDefaultConfig(), ttel)
			td := ptrace.NewTraces()
			span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			span.SetKind(ptrace.SpanKindClient)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
			span.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
			c.put(span.Attributes())
			span.Attributes().Remove("duration_ms")
			require.NoError(t, tp.ConsumeTraces(context.Background(), td))
			if c.spanRef {
				assertSum(t, ttel, "otelcol_processor_genai_ttft_evidence_rejected", map[string]string{"kind": "value"}, 1)
			}

			ltel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, ltel.Shutdown(context.Background())) })
			lp, _ := newLogs(t, createDefaultConfig(), ltel)
			ld := plog.NewLogs()
			lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			lr.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
			lr.Attributes().PutInt("http.response.status_code", 200)
			c.put(lr.Attributes())
			require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
			assertSum(t, ltel, "otelcol_processor_genai_ttft_evidence_rejected", map[string]string{"kind": "value"}, 1)
		})
	}
}

// nestedPair is an outer chat span (id 1) and an inner chat span (id 2,
// child of 1) that carries ttft.chunk events.
func nestedPair() ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []byte{1, 2} {
		span := ss.Spans().AppendEmpty()
		span.SetName("chat gpt-4o")
		span.SetKind(ptrace.SpanKindClient)
		span.SetTraceID(pcommon.TraceID{9})
		span.SetSpanID(pcommon.SpanID{id})
		if i == 1 {
			span.SetParentSpanID(pcommon.SpanID{1})
		}
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		span.Attributes().PutStr("gen_ai.operation.name", "chat")
		span.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
		if i == 1 {
			for j, kind := range []string{"role", "content", "content"} {
				ev := span.Events().AppendEmpty()
				ev.SetName(derive.EventChunk)
				ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(100+100*j) * time.Millisecond)))
				ev.Attributes().PutStr(derive.AttrChunkKind, kind)
			}
		}
	}
	return td
}

// TestDropChunkEventsOnUpstreamNestedSpan: a tier with
// drop_chunk_events behind a tier without it removes the chunk events of
// every span it passes, as it does for spans stamped upstream; the inner
// span marked ttft.nested_in upstream keeps them.
func TestDropChunkEventsOnUpstreamNestedSpan(t *testing.T) {
	// One tier with drop_chunk_events.
	drop := createDefaultConfig()
	drop.DropChunkEvents = true
	p, sink := newTraces(t, drop, nil)
	require.NoError(t, p.ConsumeTraces(context.Background(), nestedPair()))
	oneTier := sink.AllTraces()[0]

	// Tier 1 keeps chunk events, tier 2 drops them.
	p1, sink1 := newTraces(t, createDefaultConfig(), nil)
	require.NoError(t, p1.ConsumeTraces(context.Background(), nestedPair()))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p2, sink2 := newTraces(t, drop, tel)
	require.NoError(t, p2.ConsumeTraces(context.Background(), sink1.AllTraces()[0]))
	twoTier := sink2.AllTraces()[0]

	inner := func(td ptrace.Traces) ptrace.Span { return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1) }
	_, nested := inner(twoTier).Attributes().Get(record.KeyNestedIn)
	require.True(t, nested)
	assert.Equal(t, 0, inner(oneTier).Events().Len(), "one tier with drop_chunk_events drops the inner span's chunks")
	assert.Equal(t, 0, inner(twoTier).Events().Len(), "tier 2 with drop_chunk_events keeps the chunk events of a span nested upstream")
}

// TestNaNBoundsRefused: max_ttft_seconds, max_duration_seconds and
// max_chunk_gap_seconds of .nan pass Validate, and turn every bound off.
func TestNaNBoundsRefused(t *testing.T) {
	for _, key := range []string{"max_ttft_seconds", "max_duration_seconds", "max_chunk_gap_seconds"} {
		t.Run(key, func(t *testing.T) {
			cm := confmap.NewFromStringMap(map[string]any{"derive": map[string]any{key: math.NaN()}})
			cfg := createDefaultConfig()
			require.NoError(t, cm.Unmarshal(cfg))
			assert.Error(t, confmap.Validate(cfg), "derive::%s: NaN is accepted", key)
		})
	}
	t.Run("effect: max_ttft_seconds .nan stamps a 1e6 s TTFT", func(t *testing.T) {
		cfg := createDefaultConfig()
		cfg.Derive.MaxTTFTSeconds = math.NaN()
		cfg.Derive.MaxDurationSeconds = math.NaN()
		sink := new(consumertest.LogsSink)
		lp, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			return // refused at start-up: what the docs promise
		}
		ld := plog.NewLogs()
		lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
		lr.Attributes().PutInt("ttft_ms", 1_000_000_000)
		require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
		v, ok := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Get(record.KeyTimeToFirstChunk)
		assert.False(t, ok, "a 1e6 s TTFT was stamped: %v", v.AsRaw())
	})
}

// TestNaNBoundsFromYAML: the same through YAML, as the collector reads it.
func TestNaNBoundsFromYAML(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "hostile", "nan.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("genai_ttft")
	require.NoError(t, err)
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	require.True(t, math.IsNaN(cfg.Derive.MaxTTFTSeconds), "YAML .nan decodes to NaN")
	assert.Error(t, confmap.Validate(cfg), "derive::max_ttft_seconds: .nan is accepted")
}

// TestTwoTiersIdempotent: every fixture through the processor twice
// is the fixture through it once, and the second pass reads every record
// back (none invalid, none derived).
func TestTwoTiersIdempotent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*", "*.traces.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, drop := range []bool{false, true} {
		for _, f := range files {
			t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)+map[bool]string{true: "/drop"}[drop], func(t *testing.T) {
				td, err := golden.ReadTraces(f)
				require.NoError(t, err)
				cfg := createDefaultConfig()
				cfg.DropChunkEvents = drop
				p1, s1 := newTraces(t, cfg, nil)
				require.NoError(t, p1.ConsumeTraces(context.Background(), td))
				once := ptrace.NewTraces()
				s1.AllTraces()[0].CopyTo(once)
				tel := componenttest.NewTelemetry()
				t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
				p2, s2 := newTraces(t, cfg, tel)
				require.NoError(t, p2.ConsumeTraces(context.Background(), s1.AllTraces()[0]))
				require.NoError(t, ptracetest.CompareTraces(once, s2.AllTraces()[0]))
				for _, name := range []string{"otelcol_processor_genai_ttft_invalid_records", "otelcol_processor_genai_ttft_spans_derived"} {
					if m, err := tel.GetMetric(name); err == nil {
						t.Errorf("second tier counted %s: %+v", name, m.Data)
					}
				}
			})
		}
	}
}

// TestLogsIdempotentRandom: random gateway log records through the
// log path twice: the second pass reads back what the first stamped.
func TestLogsIdempotentRandom(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	stamp := derive.LogVisitor{
		Record: func(_ pcommon.Resource, lr plog.LogRecord, rec *record.Record) { rec.Write(lr.Attributes()) },
		Reread: func(pcommon.Resource, plog.LogRecord, *record.Record) {},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	num := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return float64(rng.IntN(5000))
		case 2:
			return rng.Float64() * 10
		case 3:
			return float64(rng.IntN(5_000_000))
		case 4:
			return 1000
		case 5:
			return 3600
		case 6:
			return 0.001
		}
		return float64(rng.IntN(100_000))
	}
	keys := []string{"ttft_ms", "duration_ms", "latency_ms", "ttft.duration", "gen_ai.response.time_to_first_chunk",
		"gen_ai.server.time_to_first_token", "gen_ai.latency.time_to_first_token", "ttft.chunk.max_gap", "ttft.chunk.content_count",
		"ttft.time_to_headers", "ttft.attempts", "gen_ai.usage.input_tokens", "gen_ai.usage.cache_read.input_tokens",
		"gen_ai.fallback_index", "gen_ai.number_of_retries", "gen_ai.response.time_to_first_token", "ai.response.msToFirstChunk",
		"gen_ai.client.operation.time_to_first_chunk", "gen_ai.usage.output_tokens", "ttft.content_chunks", "ttft.max_chunk_gap"}
	fails := 0
	for i := 0; i < 20000 && fails < 5; i++ {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		if rng.IntN(3) == 0 {
			rl.Resource().Attributes().PutStr("service.name", []string{"litellm", "bifrost", "envoy-ai-gateway", "x"}[rng.IntN(4)])
		}
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		a := lr.Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		if rng.IntN(2) == 0 {
			a.PutStr("gen_ai.provider.name", []string{"openai", "anthropic"}[rng.IntN(2)])
		}
		for _, k := range keys {
			if rng.IntN(4) == 0 {
				if rng.IntN(5) == 0 {
					a.PutStr(k, strconv.FormatFloat(num(), 'f', -1, 64))
				} else if rng.IntN(2) == 0 {
					a.PutInt(k, int64(num()))
				} else {
					a.PutDouble(k, num())
				}
			}
		}
		if rng.IntN(3) == 0 {
			a.PutBool("gen_ai.request.stream", rng.IntN(2) == 0)
		}
		if rng.IntN(2) == 0 {
			a.PutInt("http.response.status_code", []int64{200, 408, 429, 500, 504}[rng.IntN(5)])
		}
		if rng.IntN(4) == 0 {
			lr.SetSeverityNumber(plog.SeverityNumberError)
		}
		if rng.IntN(4) == 0 {
			a.PutStr("error.type", []string{"TimeoutError", "APIError", "DeadlineExceeded"}[rng.IntN(3)])
		}
		in := plog.NewLogs()
		ld.CopyTo(in)
		d.LogsWith(ld, stamp)
		once := plog.NewLogs()
		ld.CopyTo(once)
		st := d.LogsWith(ld, stamp)
		var inv int64
		for _, n := range st.Invalid {
			inv += n
		}
		if inv > 0 || st.Records != st.Reread {
			fails++
			t.Errorf("input %v\nstamped %v\nsecond pass: invalid %v, records %d, reread %d",
				in.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw(),
				once.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw(), st.Invalid, st.Records, st.Reread)
		}
	}
}

// stampTwice runs the processor's stamping over ld twice (two tiers) and
// returns the second pass's stats.
func stampLogsTwice(t *testing.T, ld plog.Logs) (once plog.Logs, second derive.Stats) {
	t.Helper()
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	v := derive.LogVisitor{
		Record: func(_ pcommon.Resource, lr plog.LogRecord, rec *record.Record) { rec.Write(lr.Attributes()) },
		Reread: func(pcommon.Resource, plog.LogRecord, *record.Record) {},
	}
	d.LogsWith(ld, v)
	once = plog.NewLogs()
	ld.CopyTo(once)
	return once, d.LogsWith(ld, v)
}

// TestRefusedSenderHeadersSurviveStamp: a sender's ttft.time_to_headers
// that the derivation refuses (above max_ttft_seconds) is left on the log
// record / span beside the derived record; the stamped record then breaks
// its bounds when read back (the next tier, the connector) and is counted
// invalid and derived afresh at every hop.
func TestRefusedSenderHeadersSurviveStamp(t *testing.T) {
	t.Run("log", func(t *testing.T) {
		ld := plog.NewLogs()
		a := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("ttft_ms", 420)
		a.PutInt("http.response.status_code", 200)
		a.PutDouble(record.KeyTimeToHeaders, 5000) // above max_ttft_seconds: refused
		once, st := stampLogsTwice(t, ld)
		stamped := once.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()
		assert.Equal(t, [record.NumInvalid]int64{}, st.Invalid, "the processor's own stamp is invalid when read back (ttft.time_to_headers=%v)", stamped[record.KeyTimeToHeaders])
		assert.Equal(t, st.Records, st.Reread)
	})
	t.Run("span", func(t *testing.T) {
		cfg := createDefaultConfig()
		p1, s1 := newTraces(t, cfg, nil)
		td := chunkedTraces()
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr(record.KeyTimeToHeaders, "0.2s")
		require.NoError(t, p1.ConsumeTraces(context.Background(), td))
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
		p2, _ := newTraces(t, cfg, tel)
		require.NoError(t, p2.ConsumeTraces(context.Background(), s1.AllTraces()[0]))
		if m, err := tel.GetMetric("otelcol_processor_genai_ttft_invalid_records"); err == nil {
			t.Errorf("tier 2 finds tier 1's stamp invalid: %+v", m.Data)
		}
	})
	t.Run("span, drop_chunk_events: the TTFT is lost downstream", func(t *testing.T) {
		cfg := createDefaultConfig()
		cfg.DropChunkEvents = true
		p1, s1 := newTraces(t, cfg, nil)
		td := chunkedTraces()
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutDouble(record.KeyTimeToHeaders, 5000)
		require.NoError(t, p1.ConsumeTraces(context.Background(), td))
		a := s1.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
		_, ok := a.Get(record.KeyTimeToFirstContent)
		require.True(t, ok, "tier 1 stamps the TTFT")
		// What a second tier, or the connector, reads from it.
		d, err := derive.New(derive.DefaultConfig())
		require.NoError(t, err)
		var recs []record.Record
		d.Traces(s1.AllTraces()[0], func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
		require.Len(t, recs, 1)
		assert.True(t, recs[0].HasTimeToFirstContent, "downstream record has no TTFT: %+v", recs[0])
	})
}

// TestNonStreamedHeadersAfterEnd: on a call known not to stream, a
// time to headers after the request's end is kept: the derived record
// breaks record.Validate (ttft_after_end) and is refused when read back.
func TestNonStreamedHeadersAfterEnd(t *testing.T) {
	t.Run("log", func(t *testing.T) {
		ld := plog.NewLogs()
		a := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutBool("gen_ai.request.stream", false)
		a.PutInt("duration_ms", 1000)
		a.PutDouble(record.KeyTimeToHeaders, 30) // 30 s into a 1 s request
		d, err := derive.New(derive.DefaultConfig())
		require.NoError(t, err)
		var recs []record.Record
		d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) { recs = append(recs, *rec) })
		require.Len(t, recs, 1)
		lim := record.Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: d.Bands().Labels()}
		assert.Equal(t, record.Valid, record.Validate(&recs[0], &lim), "derived record: %+v", recs[0])
	})
	t.Run("span", func(t *testing.T) {
		d, err := derive.New(derive.DefaultConfig())
		require.NoError(t, err)
		td := ptrace.NewTraces()
		span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetKind(ptrace.SpanKindClient)
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		span.Attributes().PutStr("gen_ai.operation.name", "chat")
		span.Attributes().PutBool("gen_ai.request.stream", false)
		span.Attributes().PutDouble(record.KeyTimeToHeaders, 30)
		var recs []record.Record
		d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) { recs = append(recs, *rec) })
		require.Len(t, recs, 1)
		lim := record.Limits{MaxTTFT: 3600, MaxDuration: 86400, MaxChunkGap: 3600, Bands: d.Bands().Labels()}
		assert.Equal(t, record.Valid, record.Validate(&recs[0], &lim), "derived record: %+v", recs[0])
	})
}
