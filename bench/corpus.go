package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

var corpusStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Corpus returns n spans stamped with request records (as the genai_ttft
// processor leaves them) over the given number of targets, with lognormal
// times, 4 prompt bands and a few timeouts, errors and failovers.
// Deterministic for a seed.
func Corpus(n, targets int, seed uint64) ptrace.Traces {
	rng := rand.New(rand.NewPCG(seed, 1))
	bands := []string{"<2k", "2k-16k", "16k-64k", ">=64k"}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat-app")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		t := rng.IntN(targets)
		ttft := math.Exp(math.Log(0.8) + 0.6*rng.NormFloat64())
		rec := record.Record{
			Provider: fmt.Sprintf("provider-%d", t%4), Model: fmt.Sprintf("model-%d", t), Route: fmt.Sprintf("route-%d", t%3),
			Outcome: record.OutcomeComplete, PromptBand: bands[rng.IntN(len(bands))],
			MeasuredAt: record.MeasuredAtFirstContent, Observer: record.ObserverClient, Attempts: 1,
			TimeToFirstContent: ttft, HasTimeToFirstContent: true,
			TimeToFirstChunk: ttft / 4, HasTimeToFirstChunk: true,
			MaxChunkGap: ttft / 2, HasMaxChunkGap: true,
			Duration: ttft + 2 + rng.Float64()*4, HasDuration: true,
			Streamed: true, StreamedKnown: true,
		}
		switch x := rng.Float64(); {
		case x < 0.02:
			rec.Outcome, rec.HasTimeToFirstContent, rec.HasMaxChunkGap, rec.Duration = record.OutcomeTimeoutFirstToken, false, false, 10
		case x < 0.05:
			rec.Outcome, rec.HasTimeToFirstContent, rec.HasMaxChunkGap = record.OutcomeError, false, false
		case x < 0.07:
			rec.Attempts = 2
		}
		s := spans.AppendEmpty()
		s.SetName("chat " + rec.Model)
		s.SetKind(ptrace.SpanKindClient)
		s.SetTraceID(pcommon.TraceID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		s.SetSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1})
		start := corpusStart.Add(time.Duration(i) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(rec.Duration * float64(time.Second)))))
		if rec.Outcome != record.OutcomeComplete {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
		rec.Write(s.Attributes())
	}
	return td
}
