package derive

import (
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// checkRecord asserts what every derived record must satisfy, whatever the
// input.
func checkRecord(t *testing.T, cfg Config, rec *record.Record) {
	t.Helper()
	if !record.ValidOutcome(rec.Outcome) {
		t.Fatalf("invalid outcome %q", rec.Outcome)
	}
	if rec.Attempts < 1 {
		t.Fatalf("attempts %d < 1", rec.Attempts)
	}
	if rec.PromptBand == "" {
		t.Fatal("empty prompt band")
	}
	for _, v := range []struct {
		has bool
		v   float64
	}{
		{rec.HasTimeToFirstContent, rec.TimeToFirstContent},
		{rec.HasTimeToFirstChunk, rec.TimeToFirstChunk},
		{rec.HasTimeToHeaders, rec.TimeToHeaders},
		{rec.HasMaxChunkGap, rec.MaxChunkGap},
	} {
		if v.has && (math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 || v.v > cfg.MaxTTFTSeconds) {
			t.Fatalf("time out of range: %v", v.v)
		}
	}
	if rec.HasDuration && (math.IsNaN(rec.Duration) || rec.Duration < 0) {
		t.Fatalf("duration %v", rec.Duration)
	}
	if ttft, ok := rec.TTFT(); ok {
		if rec.MeasuredAt == "" {
			t.Fatal("TTFT without measured_at")
		}
		if rec.StreamedKnown && !rec.Streamed {
			t.Fatal("TTFT on a call known not to stream")
		}
		if rec.HasDuration && ttft > rec.Duration+1e-3 && rec.Observer != record.ObserverGateway {
			t.Fatalf("TTFT %v beyond duration %v", ttft, rec.Duration)
		}
	}
	// A derived record obeys the same bounds a read-back one must.
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if why := record.Validate(rec, &d.limits); why != record.Valid {
		t.Fatalf("derived record breaks %s: %+v", why, rec)
	}
	// What the processor writes must read back.
	attrs := pcommon.NewMap()
	rec.Write(attrs)
	back, ok := recordtest.Read(attrs)
	if !ok {
		t.Fatalf("stamped record does not read back: %+v", rec)
	}
	if back.Outcome != rec.Outcome || back.MeasuredAt != rec.MeasuredAt {
		t.Fatalf("round trip changed the record: %+v → %+v", rec, back)
	}
}

func checkStats(t *testing.T, st Stats) {
	t.Helper()
	var noRecord int64
	for _, r := range []Reason{ReasonNotGenAI, ReasonInvalidRecord, ReasonSpanLog, ReasonScopeSkipped} {
		noRecord += st.Skipped[r]
	}
	if st.Records+st.Nested+noRecord != st.Examined {
		t.Fatalf("every span is accounted for once: %+v", st)
	}
}

// FuzzDeriveTraces feeds OTLP/JSON trace batches (seeded with the real
// fixtures) through Traces and Logs of the same bytes; the batch stamped
// as the processor stamps it must read back the same under StampedOnly.
func FuzzDeriveTraces(f *testing.F) {
	cfg, d, stamped, skipping := fuzzDerivers(f, "go.opentelemetry.io/", "acme.http")
	f.Fuzz(func(t *testing.T, data []byte) {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
		if err == nil {
			var want []record.Record
			st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
				checkRecord(t, cfg, rec)
				want = append(want, *rec)
			})
			checkStats(t, st)
			checkIndexed(t, d, td, want)
			checkStampedOnly(t, d, stamped, td)
			checkSkipScopes(t, skipping, td)
		}
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(data)
		if err == nil {
			st := d.Logs(ld, func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) {
				checkRecord(t, cfg, rec)
			})
			if st.Records+st.SkippedTotal()-st.Skipped[ReasonNoEvidence]-st.Skipped[ReasonNotStreamed]-st.Skipped[ReasonInvalidTiming] < 0 {
				t.Fatal("negative counts")
			}
		}
	})
}

// checkSkipScopes derives td with skip_scopes: every span is accounted for
// once, scope_skipped counts the spans of the named scopes, and no record
// is handed on for one of them (checked by span id, where the id is the
// batch's only span with it).
func checkSkipScopes(t *testing.T, d *Deriver, td ptrace.Traces) {
	t.Helper()
	skips := func(name string) bool {
		for _, p := range d.cfg.SkipScopes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	var inSkipped int64
	seen := map[pcommon.SpanID]int{}
	skippedIDs := map[pcommon.SpanID]bool{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			skip := skips(ss.Scope().Name())
			for _, span := range ss.Spans().All() {
				seen[span.SpanID()]++
				if skip {
					inSkipped++
					skippedIDs[span.SpanID()] = true
				}
			}
		}
	}
	st := d.Traces(td, func(_ pcommon.Resource, span ptrace.Span, _ *record.Record) {
		if id := span.SpanID(); skippedIDs[id] && seen[id] == 1 {
			t.Fatalf("a record for span %s of a skipped scope", id)
		}
	})
	checkStats(t, st)
	if st.Skipped[ReasonScopeSkipped] != inSkipped {
		t.Fatalf("scope_skipped = %d, the skipped scopes hold %d spans", st.Skipped[ReasonScopeSkipped], inSkipped)
	}
}

// checkIndexed derives td again with linearLimit unrelated GenAI spans of a
// trace of their own appended, so the parent search goes through the batch
// index: the original spans must get the records the first pass gave them.
func checkIndexed(t *testing.T, d *Deriver, td ptrace.Traces, want []record.Record) {
	t.Helper()
	traces := map[pcommon.TraceID]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				traces[spans.At(k).TraceID()] = true
			}
		}
	}
	pad := pcommon.TraceID{0xfe, 0xed}
	for traces[pad] {
		pad[15]++
	}
	padded := ptrace.NewTraces()
	td.CopyTo(padded)
	ss := padded.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := 0; i < linearLimit; i++ {
		span := ss.Spans().AppendEmpty()
		span.SetTraceID(pad)
		span.SetSpanID(pcommon.SpanID{byte(i + 1)})
		span.SetStartTimestamp(1)
		span.SetEndTimestamp(2)
		span.Attributes().PutStr("gen_ai.operation.name", "chat")
	}
	var got []record.Record
	d.Traces(padded, func(_ pcommon.Resource, span ptrace.Span, rec *record.Record) {
		if span.TraceID() != pad {
			got = append(got, *rec)
		}
	})
	if len(got) != len(want) {
		t.Fatalf("indexed pass: %d records, linear pass %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d differs through the index:\n linear  %+v\n indexed %+v", i, want[i], got[i])
		}
	}
}

// FuzzDeriveSpan builds one GenAI span (and a nested child) from scalar
// inputs, reaching the numeric edge cases JSON rarely produces.
func FuzzDeriveSpan(f *testing.F) {
	f.Add("chat gpt", uint64(1_000_000_000), uint64(1_500_000_000), "gen_ai.response.time_to_first_chunk", 0.25, int64(1234), "ttft.chunk", int64(300_000_000), "content", true, "com.anthropic.sdk.js", uint8(0))
	f.Add("ai.streamText", uint64(5), uint64(1), "ai.response.msToFirstChunk", math.NaN(), int64(-1), "gen_ai.content.completion.chunk", int64(-5), "role", false, "ai", uint8(1))
	f.Add("chat", uint64(1), uint64(1<<62), "gen_ai.response.time_to_first_token", math.Inf(1), int64(1<<62), "First Token Stream Event", int64(1<<40), "keepalive", true, "bifrost-otel-plugin", uint8(2))
	f.Add("", uint64(0), uint64(0), "langfuse.observation.completion_start_time", 1.7e18, int64(0), "exception", int64(0), "error", false, "", uint8(3))
	f.Add("vllm", uint64(100), uint64(200), "gen_ai.latency.time_to_first_token", 1e-300, int64(7), "ttft.chunk", int64(50), "tool_call", true, "vllm", uint8(4))
	cfg := DefaultConfig()
	cfg.MaxEvents = 16
	d, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string, start, end uint64, key string, val float64, n int64, evName string, evOff int64, kind string, stream bool, scope string, shape uint8) {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		ss.Scope().SetName(scope)
		for i := 0; i < 2; i++ {
			span := ss.Spans().AppendEmpty()
			span.SetName(name)
			span.SetTraceID(pcommon.TraceID{1})
			span.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i == 1 {
				span.SetParentSpanID(pcommon.SpanID{1})
			}
			span.SetKind(ptrace.SpanKind(shape % 6))
			span.SetStartTimestamp(pcommon.Timestamp(start))
			span.SetEndTimestamp(pcommon.Timestamp(end))
			a := span.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutBool("gen_ai.request.stream", stream)
			switch shape % 4 {
			case 0:
				a.PutDouble(key, val)
			case 1:
				a.PutInt(key, n)
			case 2:
				a.PutStr(key, name)
			case 3:
				a.PutEmptySlice(key).AppendEmpty().SetDouble(val)
			}
			a.PutInt("gen_ai.usage.input_tokens", n)
			a.PutDouble("gen_ai.usage.cache_read.input_tokens", val)
			for j := int64(0); j < int64(shape%24); j++ {
				ev := span.Events().AppendEmpty()
				ev.SetName(evName)
				ev.SetTimestamp(pcommon.Timestamp(start + uint64(evOff*j)))
				ev.Attributes().PutStr(AttrChunkKind, kind)
				ev.Attributes().PutDouble("ai.response.msToFirstChunk", val)
			}
		}
		st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
			checkRecord(t, cfg, rec)
		})
		checkStats(t, st)
	})
}

// fuzzDerivers builds the derivers the trace fuzz targets compare: the
// default one (at most 64 events a span), the same under StampedOnly, and
// the same skipping the given scopes.
func fuzzDerivers(f *testing.F, skipScopes ...string) (cfg Config, d, stamped, skipping *Deriver) {
	cfg = DefaultConfig()
	cfg.MaxEvents = 64
	var err error
	if d, err = New(cfg); err != nil {
		f.Fatal(err)
	}
	if stamped, err = New(cfg, StampedOnly()); err != nil {
		f.Fatal(err)
	}
	skipCfg := cfg
	skipCfg.SkipScopes = skipScopes
	if skipping, err = New(skipCfg); err != nil {
		f.Fatal(err)
	}
	return cfg, d, stamped, skipping
}
