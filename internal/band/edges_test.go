package band

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatThousandIsK(t *testing.T) {
	for v, want := range map[int64]string{1000: "1k", 1100: "1.1k", 1050: "1050", 999: "999", 64000: "64k"} {
		assert.Equal(t, want, Format(v), "Format(%d)", v)
	}
}

func TestBandsKeepTheirOwnBoundaries(t *testing.T) {
	bounds := []int64{1000, 8000}
	b, err := New(bounds)
	require.NoError(t, err)
	bounds[0] = 5000 // the caller's slice is its own
	assert.Equal(t, "1k-8k", b.Label(2000, true))
}
