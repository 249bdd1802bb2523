package llmgatewaylogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

const infroHeader12 = "request_id,created_at,route_slug,provider,model,status,ttft_ms,latency_ms,prompt_tokens,cached_tokens,completion_tokens,attempts"

func infroRow12(id string, sec int) string {
	return fmt.Sprintf("%s,2026-11-30T00:%02d:%02d.000Z,chat,openai,gpt-4.1-mini,ok,400,1600,1000,0,100,1", id, sec/60, sec%60)
}

// the resume mark keys a file on its first 1,000 bytes whatever
// fingerprint_size says. The README's own advice for exports that begin
// with the same rows is to raise fingerprint_size; stanza then reads the
// second file as a file of its own, but the resume operator takes it for
// the first one and drops its first rows as already_read.
func TestResumeMarkFollowsFingerprintSize(t *testing.T) {
	ctx := context.Background()
	logsDir, storageDir := t.TempDir(), t.TempDir()
	var common []string
	common = append(common, infroHeader12)
	for i := 0; i < 14; i++ { // ~1,400 bytes both exports begin with
		common = append(common, infroRow12(fmt.Sprintf("same-%02d", i), i))
	}
	write := func(name, prefix string) {
		lines := append([]string(nil), common...)
		for i := 0; i < 30; i++ {
			lines = append(lines, infroRow12(fmt.Sprintf("%s-%02d", prefix, i), 100+i))
		}
		require.NoError(t, os.WriteFile(filepath.Join(logsDir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	}

	cfg := testConfig(t, FormatInfroCSV, filepath.Join(logsDir, "*.csv"))
	cfg.InputConfig.FingerprintSize = helper.ByteSize(4000) // the README's fix for exports with the same first rows
	extID := storagetest.NewFileBackedStorageExtension("test", storageDir).ID
	cfg.StorageID = &extID
	sink := new(consumertest.LogsSink)
	set := receivertest.NewNopSettings(typeStr)
	reader := sdkmetric.NewManualReader()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	run := func(want int) {
		ext := storagetest.NewFileBackedStorageExtension("test", storageDir)
		host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
		rcv, err := NewFactory().CreateLogs(ctx, set, cfg, sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(ctx, host))
		assert.Eventually(t, func() bool { return sink.LogRecordCount() >= want }, 10*time.Second, 10*time.Millisecond,
			"want %d records, have %d (skipped: %v)", want, sink.LogRecordCount(), counterByAttr(t, reader, metricRowsSkipped, "reason"))
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, rcv.Shutdown(ctx))
		require.NoError(t, ext.Shutdown(ctx))
	}

	write("export-a.csv", "a")
	run(44)
	require.Equal(t, 44, sink.LogRecordCount())
	sink.Reset()

	write("export-b.csv", "b") // a different export, told apart by fingerprint_size
	run(44)
	assert.Equal(t, 44, sink.LogRecordCount(), "every row of the second export")
	assert.Empty(t, counterByAttr(t, reader, metricRowsSkipped, "reason"), "no row of a file never read is already_read")
}

// a row longer than max_log_size is split by stanza's default
// max_log_size_behavior (split) into pieces, each mapped as a row of its
// own: text inside one quoted field of a real row becomes a record.
func TestRowLongerThanMaxLogSizeIsNotReadInPieces(t *testing.T) {
	dir := t.TempDir()
	header := infroHeader12 + ",error_type"
	prefix := "big-1,2026-11-30T00:00:01.000Z,chat,openai,gpt-4.1-mini,error,,1600,1000,0,0,1,\"upstream said: "
	const maxLogSize = 1 << 20 // stanza's default
	pad := strings.Repeat("x", maxLogSize-len(prefix))
	// The tail of the error text, as a client could have put it there.
	tail := "inj-1,2026-11-30T00:00:02.000Z,chat,openai,forged-model,ok,5,900,1000,0,100,1,x,y\""
	body := header + "\n" + infroRow12("good-0", 0) + ",\n" + prefix + pad + tail + "\n" + infroRow12("good-1", 3) + ",\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "long.csv"), []byte(body), 0o600))

	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	require.Eventually(t, func() bool { return h.sink.LogRecordCount() >= 2 }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	h.stop(t)
	for _, r := range readRecords(t, records(h.sink)) {
		assert.NotEqual(t, "forged-model", r.Model, "a piece of a row's error text became a record: %+v", r)
	}
	assert.Equal(t, 2, h.sink.LogRecordCount(), "the rows before and after the long one")
	assert.Equal(t, map[string]int64{"malformed_csv": 1}, h.skipped(t), "the long row, cut at max_log_size, is one bad row")
}

// a request that failed over twice has three rows; when its last
// fallback's row arrives before the first fallback's (the README: "the
// order is not relied on"), the request is released as complete and the
// first fallback's row becomes a record of its own after the wait: two
// records for one client request.
func TestTwoFallbacksOutOfOrderAreOneRecord(t *testing.T) {
	const (
		primary = `{"id":"p-2","parent_request_id":null,"timestamp":"2026-12-01T07:52:44.300Z","provider":"openai","model":"m0","number_of_retries":0,"fallback_index":0,"routing_rule_name":"r","latency":100,"status":"error","stream":true,"error_details":{"status_code":429,"error":{"type":"requests","message":"Rate limit reached"}}}`
		fb1     = `{"id":"c-21","parent_request_id":"p-2","timestamp":"2026-12-01T07:52:44.420Z","provider":"openai","model":"m1","number_of_retries":0,"fallback_index":1,"routing_rule_name":"r","latency":100,"status":"error","stream":true,"error_details":{"status_code":500,"error":{"type":"server","message":"boom"}}}`
		fb2     = `{"id":"c-22","parent_request_id":"p-2","timestamp":"2026-12-01T07:52:44.540Z","provider":"anthropic","model":"m2","number_of_retries":0,"fallback_index":2,"routing_rule_name":"r","latency":500,"status":"success","stream":true}`
	)
	p := newHeldPipeline(t, 100)
	p.feed(t, primary)
	p.feed(t, fb2)
	p.feed(t, fb1)
	p.expire(t)
	time.Sleep(300 * time.Millisecond)
	recs := p.out.records(t)
	require.Len(t, recs, 1, "one client request, one record: %+v", recs)
	assert.Equal(t, int64(3), recs[0].Attempts)
	assert.Equal(t, record.OutcomeComplete, recs[0].Outcome)
}

// a folded request's duration (first row's start to the latest
// end) is not bounded by derive::max_duration_seconds, so the receiver
// emits a record the connector refuses to read back.
func TestFoldedDurationObeysTheBound(t *testing.T) {
	const (
		parent = `{"id":"p-3","parent_request_id":null,"timestamp":"2026-12-01T00:00:00Z","provider":"openai","model":"m0","fallback_index":0,"latency":100,"status":"error","stream":true}`
		child  = `{"id":"c-3","parent_request_id":"p-3","timestamp":"2026-12-03T00:00:00Z","provider":"openai","model":"m1","fallback_index":1,"latency":500,"status":"success","stream":true}`
	)
	p := newHeldPipeline(t, 100)
	p.feed(t, parent, child)
	recs := p.out.records(t)
	require.Len(t, recs, 1)
	cfg := derive.DefaultConfig()
	lim := record.Limits{MaxTTFT: cfg.MaxTTFTSeconds, MaxDuration: cfg.MaxDurationSeconds, MaxChunkGap: cfg.MaxChunkGapSeconds,
		Bands: []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"}}
	assert.Equal(t, record.Valid, record.Validate(&recs[0], &lim), "duration %v s", recs[0].Duration)
	assert.False(t, recs[0].HasDuration, "rows two days apart give the request no duration")
	assert.Equal(t, map[string]int64{derive.GatewayDurationAboveMax: 1}, counterByAttr(t, p.reader, metricValuesRefused, "reason"),
		"counted once, by the fold")
}

// a delimiter encoding/csv refuses passes Validate, and then every
// row of every file is skipped at run time.
func TestDelimiterThatCSVRefusesFailsAtStartUp(t *testing.T) {
	for _, d := range []string{"\r", "\x00", "\uFFFD", "\xff"} {
		cfg := createDefaultConfig()
		cfg.InputConfig.Include = []string{"/tmp/x/*.csv"}
		cfg.Delimiter = d
		err := cfg.Validate()
		if assert.Error(t, err, "delimiter %q", d) {
			assert.Contains(t, err.Error(), "delimiter")
		}
	}
}

// a folded request's TTFT is moved onto the client's clock (+ the
// served attempt's start − the request's start) but not checked against
// the folded duration, which is the sum of the attempts' durations when a
// row has no start: the record has a TTFT after its end, which the
// connector refuses to read back.
func TestFoldedTTFTIsNotAfterTheFoldedEnd(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Format = FormatBifrost
	cfg.Mapping.TTFT = "ttft_ms" // an exporter that adds a TTFT (README: "taken as first_chunk")
	pipe, out := startPipeline(t, cfg, storage.NewNopClient())
	lines := []string{
		`{"id":"p-4","timestamp":"2026-12-01T00:00:00Z","model":"m0","fallback_index":0,"latency":100,"status":"error","stream":true}`,
		`{"id":"c-41","parent_request_id":"p-4","model":"m1","fallback_index":1,"latency":100,"status":"error","stream":true}`,
		`{"id":"c-42","parent_request_id":"p-4","timestamp":"2026-12-01T00:00:20Z","model":"m2","fallback_index":2,"latency":1000,"ttft_ms":500,"status":"success","stream":true}`,
	}
	var es []*entry.Entry
	for _, l := range lines {
		e := entry.New()
		e.Body = l
		es = append(es, e)
	}
	require.NoError(t, pipe.Operators()[0].ProcessBatch(context.Background(), es))
	recs := out.records(t)
	require.Len(t, recs, 1)
	dc := derive.DefaultConfig()
	lim := record.Limits{MaxTTFT: dc.MaxTTFTSeconds, MaxDuration: dc.MaxDurationSeconds, MaxChunkGap: dc.MaxChunkGapSeconds,
		Bands: []string{"<2k", "2k-16k", "16k-64k", ">=64k", "unknown"}}
	assert.Equal(t, record.Valid, record.Validate(&recs[0], &lim), "ttft %v s, duration %v s", recs[0].TimeToFirstChunk, recs[0].Duration)
	// The rows with a start say the request ran from 00:00:00 to 00:00:21:
	// the served attempt's first chunk, 20.5 s in, is kept.
	assert.InDelta(t, 21.0, recs[0].Duration, 1e-9)
	assert.True(t, recs[0].HasTimeToFirstChunk)
	assert.InDelta(t, 20.5, recs[0].TimeToFirstChunk, 1e-9)
}

// TestHeaderLineInsideTheFile: a CSV export whose header changes mid-file (a
// gateway upgraded in place appends under its new header; cat of two
// exports). The header line is skipped as header_line and the rows after it
// are read under it. Before, they were read under the first header: the
// prompt_tokens column (1200) became a TTFT of 1.2 s. A header line equal
// to the one in force is skipped the same way; a data row whose one quoted
// field names every column, or whose TTFT cell names the column, is no
// header line.
func TestHeaderLineInsideTheFile(t *testing.T) {
	dir := t.TempDir()
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	body := h1 + "\n" +
		"a-1,2026-11-30T00:00:01Z,m,ok,400,1600,1000\n" +
		h2 + "\n" +
		"b-1,2026-11-30T00:00:02Z,m,ok,1200,1600,300\n" +
		h2 + "\n" +
		`c-1,2026-11-30T00:00:03Z,"` + h1 + `",ok,1000,1600,200` + "\n" +
		"d-1,2026-11-30T00:00:04Z,m,ok,1000,1600,ttft_ms\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.csv"), []byte(body), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	lrs := h.waitRecords(t, 3)
	require.Eventually(t, func() bool { return len(h.skipped(t)) == 2 }, 5*time.Second, 10*time.Millisecond)
	h.stop(t)
	assert.Equal(t, map[string]int64{reasonHeaderLine: 2, reasonBadTTFT: 1}, h.skipped(t))
	byID := map[string]float64{}
	for _, r := range readRecords(t, lrs) {
		byID[r.Model+"/"+strconv.FormatFloat(r.TimeToFirstContent, 'g', -1, 64)] = r.TimeToFirstContent
	}
	assert.Equal(t, map[string]float64{"m/0.4": 0.4, "m/0.3": 0.3, h1 + "/0.2": 0.2}, byID,
		"TTFT from the ttft_ms column only; the quoted field is a model name")
	assert.Equal(t, 1, h.logs.FilterMessageSnippet("CSV header line inside the file").Len(), "the change is logged, the repeat not")
}

// TestHeaderLineInsideTheFileSurvivesARestart: with storage, the header a
// header line put in force is saved, so rows appended after a graceful
// restart are read under it, not under the file's first header (which
// stanza's checkpoint keeps).
func TestHeaderLineInsideTheFileSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	logsDir, storageDir := t.TempDir(), t.TempDir()
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	path := filepath.Join(logsDir, "x.csv")
	require.NoError(t, os.WriteFile(path, []byte(h1+"\n"+
		"a-1,2026-11-30T00:00:01Z,m,ok,400,1600,1000\n"+
		h2+"\n"+
		"b-1,2026-11-30T00:00:02Z,m,ok,1200,1600,300\n"), 0o600))
	cfg := testConfig(t, FormatInfroCSV, filepath.Join(logsDir, "*.csv"))
	extID := storagetest.NewFileBackedStorageExtension("test", storageDir).ID
	cfg.StorageID = &extID
	sink := new(consumertest.LogsSink)
	set := receivertest.NewNopSettings(typeStr)
	run := func(want int) {
		ext := storagetest.NewFileBackedStorageExtension("test", storageDir)
		host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
		rcv, err := NewFactory().CreateLogs(ctx, set, cfg, sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(ctx, host))
		require.Eventually(t, func() bool { return sink.LogRecordCount() >= want }, 10*time.Second, 10*time.Millisecond)
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, rcv.Shutdown(ctx))
		require.NoError(t, ext.Shutdown(ctx))
	}
	run(2)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("c-1,2026-11-30T00:00:03Z,m,ok,1500,1600,250\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	run(3)
	var ttfts []float64
	for _, r := range readRecords(t, records(sink)) {
		ttfts = append(ttfts, r.TimeToFirstContent)
	}
	assert.Equal(t, []float64{0.4, 0.3, 0.25}, ttfts, "the row appended after the restart is read under the new header")
}

// TestHeaderLineStaysInItsFile: a header change is the file's own. Two
// exports of the same name in two directories (include_file_path off, as by
// default): the header line inside the first one changed how the second
// one's rows were read, whose prompt_tokens column (1000) became a TTFT.
// With include_file_name off too, every file with the same first header
// was read under it.
func TestHeaderLineStaysInItsFile(t *testing.T) {
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	for _, includeName := range []bool{true, false} {
		t.Run(fmt.Sprintf("include_file_name=%v", includeName), func(t *testing.T) {
			root := t.TempDir()
			a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
			require.NoError(t, os.Mkdir(a, 0o700))
			require.NoError(t, os.Mkdir(b, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(a, "x.csv"), []byte(h1+"\n"+
				"a-1,2026-11-30T00:00:01Z,m,ok,400,1600,1000\n"+
				h2+"\n"+
				"a-2,2026-11-30T00:00:02Z,m,ok,1200,1600,300\n"), 0o600))
			cfg := testConfig(t, FormatInfroCSV, filepath.Join(root, "*", "*.csv"))
			cfg.InputConfig.IncludeFileName = includeName
			h := newHarness(t, cfg)
			h.start(t)
			h.waitRecords(t, 2)
			require.NoError(t, os.WriteFile(filepath.Join(b, "x.csv"), []byte(h1+"\n"+
				"b-1,2026-11-30T00:00:03Z,m,ok,450,1600,1000\n"), 0o600))
			lrs := h.waitRecords(t, 3)
			h.stop(t)
			var ttfts []float64
			for _, r := range readRecords(t, lrs) {
				ttfts = append(ttfts, r.TimeToFirstContent)
			}
			assert.Equal(t, []float64{0.4, 0.3, 0.45}, ttfts, "the second file is read under its own header")
			for _, lr := range lrs {
				_, hasPath := lr.Attributes().Get("log.file.path")
				assert.False(t, hasPath, "log.file.path is not emitted unless include_file_path is on")
			}
		})
	}
}

// TestHeaderLineEndsWhenTheFileIsReadAgain: a header change holds for the
// rows after its header line. A file rewritten at the same path under its
// first header (the next day's export, which has no header line yet) was
// read under the header of the day before, its prompt_tokens column (1000)
// as its TTFT.
func TestHeaderLineEndsWhenTheFileIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	path := filepath.Join(dir, "x.csv")
	require.NoError(t, os.WriteFile(path, []byte(h1+"\n"+
		"a-1,2026-11-30T00:00:01Z,m,ok,400,1600,1000\n"+
		h2+"\n"+
		"a-2,2026-11-30T00:00:02Z,m,ok,1200,1600,300\n"), 0o600))
	h := newHarness(t, testConfig(t, FormatInfroCSV, filepath.Join(dir, "*.csv")))
	h.start(t)
	h.waitRecords(t, 2)
	require.NoError(t, os.WriteFile(path+".new", []byte(h1+"\n"+
		"b-1,2026-12-01T00:00:01Z,m,ok,450,1600,1000\n"+
		"b-2,2026-12-01T00:00:02Z,m,ok,350,1600,1000\n"+
		h2+"\n"+
		"b-3,2026-12-01T00:00:03Z,m,ok,1200,1600,250\n"), 0o600))
	// The next export replaces the file whole (a write in place could be
	// read by stanza half-truncated).
	require.NoError(t, os.Rename(path+".new", path))
	lrs := h.waitRecords(t, 5)
	h.stop(t)
	var ttfts []float64
	for _, r := range readRecords(t, lrs) {
		ttfts = append(ttfts, r.TimeToFirstContent)
	}
	assert.Equal(t, []float64{0.4, 0.3, 0.45, 0.35, 0.25}, ttfts, "the rewritten file is read under its first header up to its header line")
}
