package genaittftprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

// TestPlainBatchAllocatesNothing: a batch of plain HTTP and database spans
// passes through derivation, stamping and own telemetry without one
// allocation (the collector's processorhelper around it counts its own).
func TestPlainBatchAllocatesNothing(t *testing.T) {
	p, err := newProcessor(processortest.NewNopSettings(metadata.Type), createDefaultConfig())
	require.NoError(t, err)
	td := plainSpans()
	ctx := context.Background()
	_, _ = p.processTraces(ctx, td) // warm the scratch
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		if _, err := p.processTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}))
}
