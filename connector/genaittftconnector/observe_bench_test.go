package genaittftconnector

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// BenchmarkObserve isolates the aggregator from derivation: records are
// read once up front (ns/op is per record).
func BenchmarkObserve(b *testing.B) {
	td := corpus(1000, 50, 42)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	recs := make([]record.Record, spans.Len())
	for i := range recs {
		recs[i], _ = record.Read(spans.At(i).Attributes())
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
		if _, ok := record.Read(attrs); !ok {
			b.Fatal("unreadable")
		}
	}
}
