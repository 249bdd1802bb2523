package gatewayexport

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func TestSameSeedSameBytes(t *testing.T) {
	var a, b, c bytes.Buffer
	_, err := Write(&a, Options{Rows: 2000, Seed: 7, Start: t0, Header: true})
	require.NoError(t, err)
	_, err = Write(&b, Options{Rows: 2000, Seed: 7, Start: t0, Header: true})
	require.NoError(t, err)
	_, err = Write(&c, Options{Rows: 2000, Seed: 8, Start: t0, Header: true})
	require.NoError(t, err)
	assert.Equal(t, a.Bytes(), b.Bytes())
	assert.NotEqual(t, a.Bytes(), c.Bytes())
}

func TestExportIsValidCSVWithEveryShape(t *testing.T) {
	var buf bytes.Buffer
	n, err := Write(&buf, Options{Rows: 50000, Seed: 1, Start: t0, Header: true})
	require.NoError(t, err)
	require.Equal(t, 50000, n)
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, Columns, recs[0])
	statuses := map[string]int{}
	bands := map[string]int{}
	routes := map[string]bool{}
	failovers := 0
	var last time.Time
	for _, r := range recs[1:] {
		statuses[r[5]]++
		routes[r[2]] = true
		at, err := time.Parse(TimeLayout, r[1])
		require.NoError(t, err)
		require.False(t, at.Before(last), "created_at ascending")
		last = at
		if r[5] == "timeout_first_token" {
			assert.Empty(t, r[6], "a first-token timeout has no ttft")
		}
		if r[5] == "ok" {
			v, err := strconv.ParseFloat(r[6], 64)
			require.NoError(t, err)
			assert.Positive(t, v)
		}
		if r[11] != "1" {
			failovers++
		}
		switch p, err := strconv.Atoi(r[8]); {
		case err != nil:
			bands["unknown"]++
		case p < 2000:
			bands["<2k"]++
		case p < 16000:
			bands["2k-16k"]++
		case p < 64000:
			bands["16k-64k"]++
		default:
			bands[">=64k"]++
		}
	}
	for _, s := range []string{"ok", "error", "timeout_first_token", "timeout_idle", "timeout_deadline", "closed"} {
		assert.Positive(t, statuses[s], s)
	}
	for _, b := range []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"} {
		assert.Positive(t, bands[b], b)
	}
	assert.GreaterOrEqual(t, len(routes), 4)
	assert.Positive(t, failovers)
}
