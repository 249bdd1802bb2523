package genaittftconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// BenchmarkTelemetryReport is one batch's own telemetry through the
// collector's SDK (componenttest's meter provider): a batch of records and
// skipped plain spans, as the connector reports after every batch. The
// baseline builds each attribute set in the call (metric.WithAttributes),
// as report did before it kept the sets; compare the two in one run.
func BenchmarkTelemetryReport(b *testing.B) {
	tel := componenttest.NewTelemetry()
	b.Cleanup(func() { require.NoError(b, tel.Shutdown(context.Background())) })
	t, err := newTelemetry(tel.NewTelemetrySettings())
	require.NoError(b, err)
	st := batchStats{records: 25}
	st.skip("not_genai", 475)
	ctx := context.Background()
	b.Run("sets_kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t.report(ctx, "traces", &st)
		}
	})
	b.Run("sets_per_call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sig := attribute.String("signal", "traces")
			t.records.Add(ctx, st.records, metric.WithAttributes(sig))
			for reason, n := range st.skipped.all {
				t.skipped.Add(ctx, n, metric.WithAttributes(sig, attribute.String("reason", reason)))
			}
		}
	})
}
