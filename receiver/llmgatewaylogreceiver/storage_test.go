package llmgatewaylogreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

// TestRestartReadsOnlyNewRows is filelog's storage test on an export: ingest,
// stop, append rows while stopped, restart; only the appended rows arrive,
// each once, and the resumed file still knows its CSV header (it is kept in
// the checkpoint, not re-read).
func TestRestartReadsOnlyNewRows(t *testing.T) {
	ctx := context.Background()
	logsDir, storageDir := t.TempDir(), t.TempDir()
	path := filepath.Join(logsDir, "export.csv")
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

	nextID := 1
	appendRows := func(n int) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		require.NoError(t, err)
		_, err = gatewayexport.Write(f, gatewayexport.Options{
			Rows: n, Seed: uint64(nextID), Start: t0.Add(time.Duration(nextID) * time.Minute),
			Span: time.Minute, Header: nextID == 1, FirstID: nextID,
		})
		require.NoError(t, err)
		require.NoError(t, f.Close())
		nextID += n
	}

	cfg := testConfig(t, FormatInfroCSV, filepath.Join(logsDir, "*.csv"))
	cfg.KeepRow = true
	extID := storagetest.NewFileBackedStorageExtension("test", storageDir).ID
	cfg.StorageID = &extID

	sink := new(consumertest.LogsSink)
	// One receiver ID across restarts: the checkpoint is keyed on it.
	set := receivertest.NewNopSettings(typeStr)
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	seen := map[string]int{}
	// start runs the receiver with its storage and returns a stop function.
	start := func() (stop func()) {
		ext := storagetest.NewFileBackedStorageExtension("test", storageDir)
		host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
		rcv, err := NewFactory().CreateLogs(ctx, set, cfg, sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(ctx, host))
		return func() {
			require.NoError(t, rcv.Shutdown(ctx))
			for _, e := range host.GetExtensions() {
				require.NoError(t, e.Shutdown(ctx))
			}
		}
	}
	expect := func(from, to int) {
		t.Helper()
		want := to - from
		require.Eventually(t, func() bool { return sink.LogRecordCount() >= want }, 20*time.Second, 10*time.Millisecond,
			"want %d new rows, have %d", want, sink.LogRecordCount())
		time.Sleep(300 * time.Millisecond) // a duplicate would show up by now
		lrs := records(sink)
		require.Len(t, lrs, want, "exactly the new rows")
		got := map[string]bool{}
		for _, lr := range lrs {
			id, _ := lr.Body().Map().AsRaw()["request_id"].(string)
			got[id] = true
			seen[id]++
			_, ok := lr.Attributes().Get("ttft.outcome")
			require.True(t, ok, "row %s mapped with the file's header", id)
		}
		for i := from; i < to; i++ {
			assert.True(t, got["req-"+itoa(i)], "row req-%d lost", i)
		}
		sink.Reset()
	}

	appendRows(50)
	stop := start()
	expect(1, 51)
	stop()

	appendRows(30) // offline
	stop = start()
	expect(51, 81)

	appendRows(400) // live, well past the fingerprint size
	expect(81, 481)
	stop()

	appendRows(5) // offline again
	stop = start()
	expect(481, 486)
	stop()

	for id, n := range seen {
		require.Equal(t, 1, n, "%s delivered %d times", id, n)
	}
	require.Len(t, seen, 485)
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRestartBetweenAFallbackAndItsRequest: a graceful stop between a
// request's failed first row and its fallback row saves the held row in the
// storage, and the start holds it again for what was left of its wait, so
// the fallback row read after the restart folds into one record, as
// without the restart. Before, the stop emitted the held row as an error
// record and the fallback row became a second record.
func TestRestartBetweenAFallbackAndItsRequest(t *testing.T) {
	ctx := context.Background()
	logsDir, storageDir := t.TempDir(), t.TempDir()
	path := filepath.Join(logsDir, "bifrost.jsonl")
	appendLine := func(line string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		require.NoError(t, err)
		_, err = f.WriteString(line + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	cfg := testConfig(t, FormatBifrost, filepath.Join(logsDir, "*.jsonl"))
	cfg.Fallbacks.Wait = time.Hour // only the stop releases the held row
	extID := storagetest.NewFileBackedStorageExtension("test", storageDir).ID
	cfg.StorageID = &extID
	sink := new(consumertest.LogsSink)
	set := receivertest.NewNopSettings(typeStr)
	reader := sdkmetric.NewManualReader()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	run := func(rows, want int) {
		ext := storagetest.NewFileBackedStorageExtension("test", storageDir)
		host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
		rcv, err := NewFactory().CreateLogs(ctx, set, cfg, sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(ctx, host))
		// The new row is read (and held: the wait is an hour).
		require.Eventually(t, func() bool {
			return counterByAttr(t, reader, metricRowsMapped, "reason")[""] == int64(rows)
		}, 20*time.Second, 10*time.Millisecond)
		require.NoError(t, rcv.Shutdown(ctx))
		require.NoError(t, ext.Shutdown(ctx))
		require.Equal(t, want, sink.LogRecordCount())
	}

	appendLine(bifrostParent)
	run(1, 0) // held, then saved by the stop
	assert.Equal(t, int64(1), counterByAttr(t, reader, metricFallbackWaits, "result")[waitSaved])
	appendLine(bifrostChild)
	run(2, 1)

	recs := records(sink)
	rec, ok := recordtest.Read(recs[0].Attributes())
	require.True(t, ok)
	assert.Equal(t, record.OutcomeComplete, rec.Outcome, "one record: the fallback folded into its request")
	assert.Equal(t, int64(3), rec.Attempts, "429, its retry, and the fallback")
	assert.True(t, rec.DidFailOver())
	assert.Equal(t, "scn-normal", rec.Model, "the attempt that served")
	assert.Equal(t, "ratelimit-guard", rec.Route)
	assert.InDelta(t, 0.670625, rec.Duration, 1e-6, "from the request's start (saved) to the fallback's end")
	assert.Equal(t, int64(1), counterByAttr(t, reader, metricFallbackWaits, "result")[waitMatched])
}
