package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSameFlagsSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for _, out := range []string{a, b} {
		require.NoError(t, run([]string{"-rows", "500", "-seed", "3", "-start", "2026-11-30T00:00:00Z", "-out", out}, nil))
	}
	x, err := os.ReadFile(a)
	require.NoError(t, err)
	y, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.Equal(t, x, y)
	assert.Equal(t, 501, strings.Count(string(x), "\n"), "header plus -rows lines")
	assert.True(t, strings.HasPrefix(string(x), "request_id,created_at,route_slug,"))
}

func TestAppendModeWritesNoHeaderAndContinuesIDs(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, run([]string{"-rows", "2", "-no-header", "-first-id", "101", "-start", "2026-11-30T00:00:00Z"}, &buf))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "req-101,"))
	assert.True(t, strings.HasPrefix(lines[1], "req-102,"))
}

func TestBadFlagsAreErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-rows", "-1"},
		{"-start", "yesterday"},
		{"-span", "0s"},
		{"-unknown"},
	} {
		assert.Error(t, run(args, &bytes.Buffer{}), "%v", args)
	}
}
