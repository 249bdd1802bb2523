package llmgatewaylogreceiver

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

func readRecords(t *testing.T, lrs []plog.LogRecord) []record.Record {
	t.Helper()
	out := make([]record.Record, 0, len(lrs))
	for _, lr := range lrs {
		r, ok := recordtest.Read(lr.Attributes())
		require.True(t, ok, "every emitted log record carries a valid request record: %v", lr.Attributes().AsRaw())
		out = append(out, r)
	}
	return out
}

func TestEachFormatEmitsOneRecordPerRequest(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		outcomes     []string
		measuredAt   string
	}{
		{FormatInfroCSV, "infro_export.csv", []string{"complete", "complete", "error", "timeout_first_token", "timeout_idle", "complete"}, record.MeasuredAtFirstContent},
		{FormatBifrost, "bifrost_logs.jsonl", []string{"complete", "complete", "timeout_first_token"}, record.MeasuredAtFirstChunk},
		{FormatLiteLLM, "litellm_payloads.jsonl", []string{"complete", "complete", "timeout_first_token"}, record.MeasuredAtFirstChunk},
	} {
		t.Run(tc.format, func(t *testing.T) {
			h := newHarness(t, testConfig(t, tc.format, testdata(tc.file)))
			h.start(t)
			lrs := h.waitRecords(t, len(tc.outcomes))
			h.stop(t)
			sort.Slice(lrs, func(i, j int) bool { return lrs[i].Timestamp() < lrs[j].Timestamp() })
			recs := readRecords(t, lrs)
			for i, r := range recs {
				assert.Equal(t, tc.outcomes[i], r.Outcome, "row %d", i+1)
				assert.Equal(t, record.ObserverGateway, r.Observer)
				if _, has := r.TTFT(); has {
					assert.Equal(t, tc.measuredAt, r.MeasuredAt)
				} else {
					assert.Empty(t, r.MeasuredAt, "row %d: no TTFT, no measured_at", i+1)
				}
				assert.NotEmpty(t, r.Model)
				assert.NotEmpty(t, r.PromptBand)
				assert.Positive(t, lrs[i].Timestamp(), "timestamp from the row's request time")
			}
			assert.Empty(t, h.skipped(t))
		})
	}
}

func TestRecordTimestampIsTheRequestTime(t *testing.T) {
	h := newHarness(t, testConfig(t, FormatInfroCSV, testdata("infro_export.csv")))
	h.start(t)
	lrs := h.waitRecords(t, 6)
	h.stop(t)
	var got []time.Time
	for _, lr := range lrs {
		got = append(got, lr.Timestamp().AsTime())
	}
	assert.Contains(t, got, time.Date(2026, 11, 30, 0, 0, 4, 770e6, time.UTC))
}

func TestBadRowsAreCountedByReasonAndNeverStopTheFile(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		mapping      MappingConfig
		good         int
		reasons      map[string]int64
		lines        []int64
	}{
		{
			FormatInfroCSV, "bad_rows.csv", MappingConfig{}, 2,
			map[string]int64{reasonColumnCount: 1, reasonBadTTFT: 1, reasonNegative: 1, reasonUnknownStatus: 1, reasonMalformedCSV: 1},
			[]int64{3, 4, 5, 6, 7},
		},
		{
			// Bifrost's rows have no TTFT; these carry one an exporter added.
			FormatBifrost, "bad_lines.jsonl", MappingConfig{TTFT: "ttft_ms"}, 2,
			map[string]int64{reasonMalformedJSON: 1, reasonNotObject: 1, reasonBadTTFT: 1},
			[]int64{2, 3, 4},
		},
	} {
		t.Run(tc.format, func(t *testing.T) {
			cfg := testConfig(t, tc.format, testdata(tc.file))
			cfg.Mapping = tc.mapping
			h := newHarness(t, cfg)
			h.start(t)
			h.waitRecords(t, tc.good)
			require.Eventually(t, func() bool {
				var n int64
				for _, v := range h.skipped(t) {
					n += v
				}
				return n == int64(len(tc.lines))
			}, 10*time.Second, 10*time.Millisecond)
			h.stop(t)
			assert.Equal(t, tc.reasons, h.skipped(t))
			assert.Equal(t, map[string]int64{"": int64(tc.good)}, counterByAttr(t, h.reader, metricRowsMapped, "reason"))

			var lines []int64
			for _, e := range h.logs.FilterMessage("skipped gateway row").All() {
				fields := e.ContextMap()
				assert.Contains(t, fields["file"], tc.file)
				lines = append(lines, fields["line"].(int64))
			}
			sort.Slice(lines, func(i, j int) bool { return lines[i] < lines[j] })
			assert.Equal(t, tc.lines, lines, "each skipped row is logged with its line")
		})
	}
}

func TestSkippedRowLogIsRateLimited(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("created_at,status,ttft_ms\n")
	for i := 0; i < 500; i++ {
		b.WriteString("2026-11-30T00:00:00Z,ok,not-a-number\n")
	}
	b.WriteString("2026-11-30T00:00:00Z,ok,250\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.csv"), []byte(b.String()), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	h.waitRecords(t, 1)
	h.stop(t)
	assert.Equal(t, map[string]int64{reasonBadTTFT: 500}, h.skipped(t))
	logged := h.logs.FilterMessage("skipped gateway row").Len()
	assert.Positive(t, logged)
	assert.LessOrEqual(t, logged, 10, "the first 10 per minute are logged, the rest only counted")
}

func TestFileWithoutHeaderIsCountedNotGuessed(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "noheader.csv"),
		[]byte("req-1,2026-11-30T00:00:01Z,chat,openai,gpt,ok,400,1600,1000,0,100,1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "good.csv"),
		[]byte("ttft_ms,status\n300,ok\n"), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	h.waitRecords(t, 1)
	require.Eventually(t, func() bool { return h.skipped(t)[reasonMissingHeader] == 1 }, 10*time.Second, 10*time.Millisecond)
	h.stop(t)
}

// writeExport writes rows with the given column order (a permutation of
// the generator's columns plus an extra column), as differently configured
// gateways do.
func writeExport(t *testing.T, path string, columns []string, rows [][]string, header bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer f.Close()
	if header {
		_, err = fmt.Fprintln(f, strings.Join(columns, ","))
		require.NoError(t, err)
	}
	for _, r := range rows {
		_, err = fmt.Fprintln(f, strings.Join(r, ","))
		require.NoError(t, err)
	}
}

type exportRow struct {
	id, model, status, ttft string
}

func (r exportRow) in(columns []string) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		switch c {
		case "request_id":
			out[i] = r.id
		case "model":
			out[i] = r.model
		case "status":
			out[i] = r.status
		case "ttft_ms":
			out[i] = r.ttft
		case "created_at":
			out[i] = "2026-11-30T00:00:00Z"
		case "prompt_tokens":
			out[i] = "1500"
		case "region":
			out[i] = "eu-west-1"
		}
	}
	return out
}

func TestRotationAndFilesWithDifferentHeadersInOneRun(t *testing.T) {
	dir := t.TempDir()
	colsA := []string{"request_id", "created_at", "model", "status", "ttft_ms", "prompt_tokens"}
	colsB := []string{"ttft_ms", "region", "status", "prompt_tokens", "request_id", "model", "created_at"}
	colsC := []string{"status", "model", "ttft_ms", "request_id"}
	want := map[string]string{} // request id → model, which sits in a different column per file
	mk := func(prefix, model string, n int) []exportRow {
		var rows []exportRow
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			want[id] = model
			rows = append(rows, exportRow{id, model, "ok", fmt.Sprintf("%d", 100+i)})
		}
		return rows
	}
	toCols := func(cols []string, rows []exportRow) [][]string {
		var out [][]string
		for _, r := range rows {
			out = append(out, r.in(cols))
		}
		return out
	}

	cfg := testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv"))
	cfg.KeepRow = true // the body keeps request_id so each row can be traced
	h := newHarness(t, cfg)

	active := filepath.Join(dir, "gateway.csv")
	writeExport(t, active, colsA, toCols(colsA, mk("a", "model-a", 40)), true)
	writeExport(t, filepath.Join(dir, "other-gateway.csv"), colsB, toCols(colsB, mk("b", "model-b", 30)), true)
	h.start(t)
	require.Eventually(t, func() bool { return h.sink.LogRecordCount() == 70 }, 20*time.Second, 10*time.Millisecond)

	// Rotate: the active export moves aside (still matched by the glob and
	// still being written by the old writer), a new export with another
	// column order takes its name.
	require.NoError(t, os.Rename(active, filepath.Join(dir, "gateway-1.csv")))
	writeExport(t, filepath.Join(dir, "gateway-1.csv"), colsA, toCols(colsA, mk("a-late", "model-a", 10)), false)
	writeExport(t, active, colsC, toCols(colsC, mk("c", "model-c", 25)), true)
	writeExport(t, filepath.Join(dir, "other-gateway.csv"), colsB, toCols(colsB, mk("b-more", "model-b", 5)), false)

	lrs := h.waitRecords(t, len(want))
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	seen := map[string]int{}
	for _, lr := range lrs {
		id := lr.Body().Map().AsRaw()["request_id"].(string)
		seen[id]++
		r, ok := recordtest.Read(lr.Attributes())
		require.True(t, ok)
		assert.Equal(t, want[id], r.Model, "row %s read with its own file's header", id)
		assert.True(t, r.HasTimeToFirstContent)
	}
	assert.Len(t, seen, len(want))
	for id, n := range seen {
		assert.Equal(t, 1, n, "row %s delivered once", id)
	}
}

func TestExportStartedWithOnlyItsHeaderReadsLaterRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fresh.csv")
	cols := []string{"request_id", "model", "status", "ttft_ms"}
	writeExport(t, path, cols, nil, true)
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	time.Sleep(200 * time.Millisecond) // the header is read before any row exists
	writeExport(t, path, cols, [][]string{{"r1", "m", "ok", "120"}, {"r2", "m", "ok", "130"}}, false)
	lrs := h.waitRecords(t, 2)
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	for _, r := range readRecords(t, lrs) {
		assert.True(t, r.HasTimeToFirstContent)
	}
}

func TestWindowsLineEndingsAndQuotedFields(t *testing.T) {
	dir := t.TempDir()
	body := "\"request_id\",\"model\",\"status\",\"ttft_ms\",\"note\"\r\n" +
		"r1,gpt-4.1,ok,120,\"contains, a comma\"\r\n" +
		"r2,gpt-4.1,ok,130,\"\"\r\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "win.csv"), []byte(body), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	lrs := h.waitRecords(t, 2)
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	for _, r := range readRecords(t, lrs) {
		assert.Equal(t, "gpt-4.1", r.Model)
		assert.True(t, r.HasTimeToFirstContent)
	}
}

func TestGzippedJSONLog(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(testdata("bifrost_logs.jsonl"))
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(dir, "requests.jsonl.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	for i := 0; i < 100; i++ { // 300 lines, past gzip's first buffer
		_, err = zw.Write(src)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	cfg := testConfig(t, FormatBifrost, filepath.Join(dir, "*.gz"))
	cfg.InputConfig.Compression = "gzip"
	h := newHarness(t, cfg)
	h.start(t)
	lrs := h.waitRecords(t, 300)
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	assert.Len(t, readRecords(t, lrs), 300)
}

func TestFileAndUserAttributesAreKeptPlumbingIsNot(t *testing.T) {
	cfg := testConfig(t, FormatInfroCSV, testdata("infro_export.csv"))
	cfg.InputConfig.IncludeFilePath = true
	cfg.InputConfig.Attributes = map[string]helper.ExprStringConfig{"deployment.environment": "prod"}
	h := newHarness(t, cfg)
	h.start(t)
	lrs := h.waitRecords(t, 6)
	h.stop(t)
	for _, lr := range lrs {
		a := lr.Attributes().AsRaw()
		assert.Equal(t, "prod", a["deployment.environment"])
		assert.Contains(t, a["log.file.path"], "infro_export.csv")
		assert.Equal(t, "infro_export.csv", a["log.file.name"])
		assert.NotContains(t, a, headerAttribute)
		assert.NotContains(t, a, "log.file.record_number", "turned on for skipped-row logs, not asked for")
	}
}

// A header line over maxHeaderBytes would be split again for every row; its
// file's rows are counted as header_too_long, and other files still read.
func TestHugeHeaderIsCountedNotParsed(t *testing.T) {
	dir := t.TempDir()
	var cols []string
	for i := 0; len(strings.Join(cols, ",")) <= maxHeaderBytes; i++ {
		cols = append(cols, fmt.Sprintf("extra_column_%d", i))
	}
	huge := "ttft_ms,status," + strings.Join(cols, ",") + "\n"
	rows := strings.Repeat("300,ok"+strings.Repeat(",x", len(cols))+"\n", 2)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "huge.csv"), []byte(huge+rows), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "good.csv"), []byte("ttft_ms,status\n300,ok\n"), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	h.waitRecords(t, 1)
	require.Eventually(t, func() bool { return h.skipped(t)[reasonHeaderTooLong] == 2 }, 10*time.Second, 10*time.Millisecond)
	h.stop(t)
}

// A row's value no real request has (a 55-hour latency, a thousand
// attempts) is refused and counted by reason; the row still becomes a
// record with its TTFT, one the connector reads back as it is.
func TestAbsurdValuesAreRefusedAndTheRowKept(t *testing.T) {
	cfg := testConfig(t, FormatInfroCSV, testdata("absurd_values.csv"))
	h := newHarness(t, cfg)
	h.start(t)
	lrs := h.waitRecords(t, 4)
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	assert.Equal(t, map[string]int64{derive.GatewayDurationAboveMax: 2, derive.GatewayAttemptsAboveMax: 2},
		counterByAttr(t, h.reader, metricValuesRefused, "reason"))
	// What the connector does with the records: read each back as it is.
	d, err := derive.New(cfg.Derive)
	require.NoError(t, err)
	ttfts := map[float64]bool{}
	var st derive.Stats
	for _, ld := range h.sink.AllLogs() {
		s := d.LogsWith(ld, derive.LogVisitor{Record: func(_ pcommon.Resource, _ plog.LogRecord, rec *record.Record) {
			assert.Equal(t, record.OutcomeComplete, rec.Outcome)
			assert.Equal(t, int64(1), rec.Attempts)
			ttfts[rec.TimeToFirstContent] = true
		}})
		st.Reread += s.Reread
		for i, n := range s.Invalid {
			st.Invalid[i] += n
		}
	}
	assert.Equal(t, int64(len(lrs)), st.Reread)
	assert.Zero(t, st.Invalid, "no record is refused on read-back")
	assert.Equal(t, map[float64]bool{0.4: true, 0.45: true, 0.5: true, 0.55: true}, ttfts, "every TTFT is kept")
}

// TestRowWrittenInTwoPartsIsOneRow: a writer that flushes a block ending
// mid-row (a buffered CSV writer) completes the row a while later; the
// receiver waits for its line end rather than emit the half as a row.
func TestRowWrittenInTwoPartsIsOneRow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slow.csv")
	require.NoError(t, os.WriteFile(path, []byte("request_id,model,status,ttft_ms\nr1,m,ok,120\nr2,gpt-4"), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	h.waitRecords(t, 1)
	time.Sleep(1500 * time.Millisecond) // past stanza's own 500 ms force_flush_period
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(".1,ok,130\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	lrs := h.waitRecords(t, 2)
	h.stop(t)
	assert.Empty(t, h.skipped(t))
	assert.Equal(t, "gpt-4.1", readRecords(t, lrs)[1].Model)
}

// refuseFirst refuses its first n batches with a retryable error, as a
// memory_limiter under pressure does, then takes them.
type refuseFirst struct {
	consumertest.LogsSink
	mu sync.Mutex
	n  int
}

func (r *refuseFirst) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	r.mu.Lock()
	refuse := r.n > 0
	if refuse {
		r.n--
	}
	r.mu.Unlock()
	if refuse {
		return errors.New("data refused due to high memory usage")
	}
	return r.LogsSink.ConsumeLogs(ctx, ld)
}

// TestRefusedRowsAreRetried: retry_on_failure is on by default, so rows the
// next component refuses for a while are sent again, not dropped (stanza
// moves its checkpoint past them either way).
func TestRefusedRowsAreRetried(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.csv")
	cols := []string{"request_id", "model", "status", "ttft_ms"}
	var rows [][]string
	for i := range 250 {
		rows = append(rows, []string{fmt.Sprintf("r%d", i), "m", "ok", "120"})
	}
	writeExport(t, path, cols, rows, true)
	cfg := testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv"))
	require.True(t, cfg.RetryOnFailure.Enabled, "on by default")
	cfg.RetryOnFailure.InitialInterval = 10 * time.Millisecond
	next := &refuseFirst{n: 2}
	rcv, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(typeStr), cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return next.LogRecordCount() >= 250 }, 30*time.Second, 10*time.Millisecond,
		"have %d of 250 rows", next.LogRecordCount())
	require.NoError(t, rcv.Shutdown(context.Background()))
	assert.Equal(t, 250, next.LogRecordCount())
}
