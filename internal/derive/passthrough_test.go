package derive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive/derivetest"
)

// TestPlainBatchAllocatesNothing: the pass-through path of a batch without
// LLM calls allocates nothing (no index, map or record).
func TestPlainBatchAllocatesNothing(t *testing.T) {
	d, err := derive.New(derive.DefaultConfig())
	require.NoError(t, err)
	td := derivetest.PlainSpans(1000)
	d.Traces(td, nil) // warm the scratch
	allocs := testing.AllocsPerRun(20, func() {
		st := d.Traces(td, nil)
		if st.Skipped[derive.ReasonNotGenAI] != 1000 || st.Records != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	assert.Zero(t, allocs)
}
