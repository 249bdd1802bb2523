package derive

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// fixtureTraces reads every captured trace file under testdata/fixtures, in
// a fixed order.
func fixtureTraces(tb testing.TB) []ptrace.Traces {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(fixturesDir, "*", "*.traces.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no fixture traces: %v", err)
	}
	sort.Strings(paths)
	out := make([]ptrace.Traces, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		out = append(out, td)
	}
	return out
}

// fuzzKeys are attribute keys the rules read, for edits to hit.
var fuzzKeys = []string{
	"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "gen_ai.request.model",
	"gen_ai.request.stream", "gen_ai.usage.input_tokens", "gen_ai.usage.cache_read.input_tokens",
	"gen_ai.response.finish_reasons", "gen_ai.response.time_to_first_chunk", "error.type",
	"llm.is_streaming", "ai.response.msToFirstChunk", "ai.stream.msToFirstChunk", "gen_ai.server.time_to_first_token",
	"langfuse.observation.completion_start_time", "ttft.outcome", "ttft.nested_in", "ttft.time_to_first_content",
	"ttft.chunk.kind", "ttft.route", "llm.token_count.prompt", "openinference.span.kind",
}

// FuzzDeriveFixtureEdits derives the real captures after edits chosen by
// the fuzzer: each 8 bytes pick a span and change its times, its parent, its
// scope, its status, an attribute (a key the rules read, set to a string, an
// integer, a double or a bool), or an event's time or kind. Raw OTLP/JSON
// bytes (FuzzDeriveTraces) rarely parse; these inputs are real shapes, so
// the properties of every record (checkRecord) and of the batch
// (checkIndexed, checkStampedOnly, checkSkipScopes) are checked on
// derivations that reach every rule.
func FuzzDeriveFixtureEdits(f *testing.F) {
	fixtures := fixtureTraces(f)
	cfg, d, stamped, skipping := fuzzDerivers(f, "go.opentelemetry.io/", "acme.http", "@opentelemetry/")
	for i := range fixtures {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 0, 1, 0, 0, 0, 0, 200, 3, 1, 9, 2, 0, 0, 0, 1})
	}
	f.Fuzz(func(t *testing.T, which uint8, edits []byte) {
		td := ptrace.NewTraces()
		fixtures[int(which)%len(fixtures)].CopyTo(td)
		var spans []ptrace.Span
		var scopes []ptrace.ScopeSpans
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				scopes = append(scopes, sss.At(j))
				for k := 0; k < sss.At(j).Spans().Len(); k++ {
					spans = append(spans, sss.At(j).Spans().At(k))
				}
			}
		}
		if len(spans) == 0 {
			return
		}
		for len(edits) >= 8 && len(edits) <= 8*64 {
			op, target, arg := edits[0], int(edits[1])%len(spans), edits[2:8]
			edits = edits[8:]
			s := spans[target]
			v := int64(int32(binary.LittleEndian.Uint32(arg[2:6]))) // ± 2.1 s in ns, or a value
			switch op % 9 {
			case 0: // shift the start, by up to days (a skewed clock)
				s.SetStartTimestamp(pcommon.Timestamp(int64(s.StartTimestamp()) + v*int64(arg[0]+1)<<(arg[1]%14)))
			case 1: // shift the end
				s.SetEndTimestamp(pcommon.Timestamp(int64(s.EndTimestamp()) + v*int64(arg[0]+1)<<(arg[1]%14)))
			case 2: // reparent onto another span, or make a root
				if arg[0]%4 == 0 {
					s.SetParentSpanID(pcommon.SpanID{})
				} else {
					s.SetParentSpanID(spans[int(arg[1])%len(spans)].SpanID())
				}
			case 3: // an attribute the rules read
				k := fuzzKeys[int(arg[0])%len(fuzzKeys)]
				switch arg[1] % 5 {
				case 0:
					s.Attributes().PutStr(k, string(arg[2:6]))
				case 1:
					s.Attributes().PutInt(k, v)
				case 2:
					s.Attributes().PutDouble(k, float64(v)/1000)
				case 3:
					s.Attributes().PutBool(k, v&1 == 1)
				case 4:
					s.Attributes().Remove(k)
				}
			case 4: // an event's time
				if n := s.Events().Len(); n > 0 {
					ev := s.Events().At(int(arg[0]) % n)
					ev.SetTimestamp(pcommon.Timestamp(int64(ev.Timestamp()) + v*int64(arg[1]+1)<<(arg[0]>>4%14)))
				}
			case 5: // an event's chunk kind, or drop it
				if n := s.Events().Len(); n > 0 {
					i := int(arg[0]) % n
					if arg[1]%3 == 0 {
						s.Events().RemoveIf(func(ev ptrace.SpanEvent) bool { i--; return i == -1 })
					} else {
						s.Events().At(i).Attributes().PutStr(AttrChunkKind, []string{KindContent, "role", "reasoning", "tool_call", "ping"}[int(arg[1])%5])
					}
				}
			case 6: // status
				s.Status().SetCode(ptrace.StatusCode(arg[0] % 3))
				s.Status().SetMessage([]string{"", "First chunk timeout of 3000ms exceeded", "Chunk timeout", "Request timed out", "abandoned stream"}[int(arg[1])%5])
			case 7: // scope name
				scopes[int(arg[0])%len(scopes)].Scope().SetName([]string{"", "acme.http.client", "@opentelemetry/instrumentation-undici", "openinference.instrumentation.anthropic", "bifrost"}[int(arg[1])%5])
			case 8: // kind and trace
				s.SetKind(ptrace.SpanKind(arg[0] % 6))
				if arg[1]%7 == 0 {
					s.SetTraceID(spans[int(arg[2])%len(spans)].TraceID())
				}
			}
		}
		var want []record.Record
		st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
			checkRecord(t, cfg, rec)
			if why := record.Validate(rec, &d.limits); why != record.Valid {
				t.Fatalf("a derived record fails read-back validation (%v): %+v", why, *rec)
			}
			want = append(want, *rec)
		})
		checkStats(t, st)
		checkIndexed(t, d, td, want)
		checkStampedOnly(t, d, stamped, td)
		checkSkipScopes(t, skipping, td)
	})
}
