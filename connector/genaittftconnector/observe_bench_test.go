package genaittftconnector

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// BenchmarkObserve isolates the aggregator from derivation: records are
// read once up front (ns/op is per record).
func BenchmarkObserve(b *testing.B) {
	td := corpus(1000, 50, 42)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	recs := make([]record.Record, spans.Len())
	for i := range recs {
		recs[i], _ = recordtest.Read(spans.At(i).Attributes())
	}
	a, err := newAggregator(defaultConfig(), testInstanceID)
	if err != nil {
		b.Fatal(err)
	}
	empty := pcommon.NewMap()
	var st batchStats
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a.observe(&recs[i%len(recs)], empty, empty, testStart, &st)
		i++
	}
}

// BenchmarkRecordRead is the shared record reader on a stamped span.
func BenchmarkRecordRead(b *testing.B) {
	attrs := corpus(1, 1, 42).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := recordtest.Read(attrs); !ok {
			b.Fatal("unreadable")
		}
	}
}

// BenchmarkConsumeReusedRecord is ConsumeTraces' work with the record read
// into one reused variable instead of through derive's visitor, which today
// heap-allocates a record per stamped span: what that allocation costs.
func BenchmarkConsumeReusedRecord(b *testing.B) {
	const spansPerBatch = 1000
	td := corpus(spansPerBatch, 50, 42)
	a, err := newAggregator(defaultConfig(), testInstanceID)
	if err != nil {
		b.Fatal(err)
	}
	res := td.ResourceSpans().At(0).Resource().Attributes()
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	rec := new(record.Record)
	var st batchStats
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < spans.Len(); i++ {
			attrs := spans.At(i).Attributes()
			if recordtest.Nested(attrs) || !recordtest.Stamped(attrs) {
				continue
			}
			var ok bool
			if *rec, ok = recordtest.Read(attrs); ok {
				a.observe(rec, attrs, res, testStart, &st)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spansPerBatch), "ns/span")
}
