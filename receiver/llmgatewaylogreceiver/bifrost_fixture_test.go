package llmgatewaylogreceiver

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// bifrostFixture is the real Bifrost v1.5.11 capture: its request log rows
// (as the logs API returns a row by id, and as its SQLite store keeps it),
// the answer key and the fake LLM server's record of every upstream request.
var bifrostFixture = filepath.Join("..", "..", "testdata", "fixtures", "bifrost-gateway")

type bifrostExpectation struct {
	Requests     int      `json:"requests"`
	OutcomeAnyOf []string `json:"outcome_any_of"`
	PromptBand   *string  `json:"prompt_band"`
	AttemptsMin  int      `json:"attempts_min"`
	FailedOver   *bool    `json:"failed_over"`
}

// upstreamRequest is one line of ground-truth.jsonl: one request the fake
// server received, with the client request (trace) and attempt it was.
type upstreamRequest struct {
	Run     string  `json:"run"`
	TraceID string  `json:"trace_id"`
	Attempt int     `json:"attempt"`
	Model   string  `json:"model"`
	AtMs    float64 `json:"t_request_epoch_ms"`
}

func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

// clientRequest is what the ground truth says about one client request.
type clientRequest struct {
	scenario  string
	attempts  int    // upstream requests it made
	lastModel string // the model of its last upstream attempt (the one that served)
}

// clientRequestAt finds the client request whose first upstream attempt
// reached the fake server within 60 ms after the record's start (Bifrost
// stamps a row when the request arrives; the fake server saw the first
// attempt 0.1-37 ms later).
func clientRequestAt(t *testing.T, gt []upstreamRequest, at time.Time) clientRequest {
	t.Helper()
	ms := float64(at.UnixNano()) / 1e6
	var trace, run string
	for _, u := range gt {
		if u.Attempt == 1 && u.AtMs >= ms-1 && u.AtMs < ms+60 {
			require.Empty(t, trace, "two client requests match %v", at)
			trace, run = u.TraceID, u.Run
		}
	}
	require.NotEmpty(t, trace, "no client request matches %v", at)
	c := clientRequest{scenario: filepath.Base(run)}
	last := 0
	for _, u := range gt {
		if u.TraceID == trace {
			c.attempts++
			if u.Attempt > last {
				last, c.lastModel = u.Attempt, u.Model
			}
		}
	}
	return c
}

// TestBifrostFixtureLogsBecomeOneRecordPerClientRequest reads the real
// Bifrost log rows (44 rows for 40 client requests: each fallback is a row
// of its own) and checks every record against the answer key and the
// ground truth: one record per client request, its outcome, at least its
// real upstream attempts, the fallback's served model for a request that
// failed over, and no TTFT or measured_at from rows that have no TTFT.
func TestBifrostFixtureLogsBecomeOneRecordPerClientRequest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(bifrostFixture, "expected.json"))
	require.NoError(t, err)
	var want map[string]bifrostExpectation
	require.NoError(t, json.Unmarshal(raw, &want))
	gt := readJSONLines[upstreamRequest](t, filepath.Join(bifrostFixture, "ground-truth.jsonl"))
	total := 0
	for _, w := range want {
		total += w.Requests
	}
	require.Equal(t, 40, total)

	for _, file := range []string{"bifrost-logs.detail.jsonl", "bifrost-logs.sqlite.jsonl"} {
		t.Run(file, func(t *testing.T) {
			h := newHarness(t, testConfig(t, FormatBifrost, filepath.Join(bifrostFixture, file)))
			h.start(t)
			lrs := h.waitRecords(t, total)
			h.stop(t)
			assert.Empty(t, h.skipped(t))
			assert.Equal(t, map[string]int64{"": 44}, counterByAttr(t, h.reader, metricRowsMapped, "reason"))
			assert.Equal(t, map[string]int64{"": 4}, counterByAttr(t, h.reader, metricRowsFolded, "reason"), "four fallback rows folded into their request's record")
			waits := counterByAttr(t, h.reader, metricFallbackWaits, "result")
			assert.Equal(t, int64(4), waits[waitMatched], "every fallback found its request's row: %v", waits)

			sort.Slice(lrs, func(i, j int) bool { return lrs[i].Timestamp() < lrs[j].Timestamp() })
			perScenario := map[string]int{}
			for _, lr := range lrs {
				checkBifrostRecord(t, lr, gt, want, perScenario)
			}
			for s, w := range want {
				assert.Equal(t, w.Requests, perScenario[s], "%s: one record per client request", s)
			}
		})
	}
}

func checkBifrostRecord(t *testing.T, lr plog.LogRecord, gt []upstreamRequest, want map[string]bifrostExpectation, perScenario map[string]int) {
	t.Helper()
	attrs := lr.Attributes()
	r, ok := recordtest.Read(attrs)
	require.True(t, ok, "a valid request record: %v", attrs.AsRaw())
	c := clientRequestAt(t, gt, lr.Timestamp().AsTime())
	w, ok := want[c.scenario]
	require.True(t, ok, c.scenario)
	perScenario[c.scenario]++
	name := c.scenario + " at " + lr.Timestamp().AsTime().Format(time.RFC3339Nano)

	assert.Contains(t, w.OutcomeAnyOf, r.Outcome, name)
	assert.GreaterOrEqual(t, r.Attempts, int64(max(w.AttemptsMin, c.attempts)), "%s: attempts, the real ones included", name)
	assert.Equal(t, c.lastModel, r.Model, "%s: the target is the attempt that served", name)
	failedOver := w.FailedOver != nil && *w.FailedOver
	assert.Equal(t, failedOver, r.DidFailOver(), "%s: failed over", name)
	if failedOver {
		assert.GreaterOrEqual(t, r.Attempts, int64(2), name)
	}
	if w.PromptBand != nil {
		assert.Equal(t, *w.PromptBand, r.PromptBand, name)
	}
	for _, key := range []string{record.KeyMeasuredAt, record.KeyTimeToFirstContent, record.KeyTimeToFirstChunk, record.KeySource} {
		_, has := attrs.Get(key)
		assert.False(t, has, "%s: Bifrost rows carry no TTFT, so no %s", name, key)
	}
	assert.True(t, r.StreamedKnown && r.Streamed, name)
	assert.True(t, r.HasDuration, name)
	assert.Equal(t, record.ObserverGateway, r.Observer)
}
