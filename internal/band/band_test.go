package band

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultBandLabels(t *testing.T) {
	b, err := New(DefaultBoundaries)
	require.NoError(t, err)
	cases := []struct {
		tokens int64
		known  bool
		want   string
	}{
		{1, true, "<2k"},
		{1999, true, "<2k"},
		{2000, true, "2k-16k"},
		{15999, true, "2k-16k"},
		{16000, true, "16k-64k"},
		{64000, true, ">=64k"},
		{1 << 40, true, ">=64k"},
		{0, true, Unknown}, // producers write 0 when they did not count
		{-3, true, Unknown},
		{5000, false, Unknown},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, b.Label(tc.tokens, tc.known), "tokens=%d known=%v", tc.tokens, tc.known)
	}
	assert.Equal(t, []string{"<2k", "2k-16k", "16k-64k", ">=64k", Unknown}, b.Labels())
}

func TestCustomBoundariesFormat(t *testing.T) {
	b, err := New([]int64{500, 1500, 32000})
	require.NoError(t, err)
	assert.Equal(t, []string{"<500", "500-1.5k", "1.5k-32k", ">=32k", Unknown}, b.Labels())
}

func TestInvalidBoundariesNameTheKey(t *testing.T) {
	for _, bounds := range [][]int64{{0, 10}, {100, 100}, {2000, 1000}} {
		_, err := New(bounds)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "prompt_bands")
	}
}
