package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

// The restart test stops the built collector while its llm_gateway_log
// receiver reads an export, five times, and counts every row: the receiver's
// log records reach an OTLP sink in this process (synchronously: no sending
// queue, so a row the sink holds was handed to the connector too), and the
// connector's delta ttft.requests reach another. Each row is identified by
// its file and record number.
//
// TTFT_RESTART_ROWS sets the export size (default 60,000 so `make test` stays
// fast; the numbers in the README come from 500,000).

// otlpSink records what the collector exports, across its restarts.
type otlpSink struct {
	mu sync.Mutex
	// rows: (file, record number) → times received, and when last received.
	rows     map[string]int
	rowAt    []time.Time // arrival of every row, in order
	counted  map[string]bool
	requests int64     // sum of delta ttft.requests
	flushes  []flushAt // arrival of every metrics export
}

type flushAt struct {
	at   time.Time
	rows int // rows received before it
}

func newOTLPSink(t *testing.T) (*otlpSink, string) {
	t.Helper()
	s := &otlpSink{rows: map[string]int{}, counted: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/logs", handleOTLPLogs(func(ld plog.Logs) {
		now := time.Now()
		s.mu.Lock()
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					file, _ := a.Get("log.file.name")
					num, _ := a.Get("log.file.record_number")
					key := file.Str() + "#" + strconv.FormatInt(num.Int(), 10)
					s.rows[key]++
					s.rowAt = append(s.rowAt, now)
					// The connector counts every record not known to be unstreamed.
					st, ok := a.Get("ttft.streamed")
					s.counted[key] = !ok || st.Type() != pcommon.ValueTypeBool || st.Bool()
				}
			}
		}
		s.mu.Unlock()
	}))
	mux.HandleFunc("/v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var n int64
		rms := req.Metrics().ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == "ttft.requests" && m.Type() == pmetric.MetricTypeSum {
						for d := 0; d < m.Sum().DataPoints().Len(); d++ {
							n += m.Sum().DataPoints().At(d).IntValue()
						}
					}
				}
			}
		}
		s.mu.Lock()
		s.requests += n
		s.flushes = append(s.flushes, flushAt{at: time.Now(), rows: len(s.rowAt)})
		s.mu.Unlock()
		_, _ = w.Write(mustProto(pmetricotlp.NewExportResponse().MarshalProto()))
	})
	return s, serveLoopback(t, mux)
}

// handleOTLPLogs answers OTLP/HTTP protobuf logs exports, handing each
// request's logs to got.
func handleOTLPLogs(got func(plog.Logs)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got(req.Logs())
		_, _ = w.Write(mustProto(plogotlp.NewExportResponse().MarshalProto()))
	}
}

func mustProto(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// totals returns rows received (with repeats), distinct rows, and the
// requests those receipts should have produced.
func (s *otlpSink) totals() (received, distinct int, wantRequests int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.rows {
		received += n
		distinct++
		if s.counted[k] {
			wantRequests += int64(n)
		}
	}
	return received, distinct, wantRequests
}

// missing lists the first record numbers of export.csv not received.
func (s *otlpSink) missing(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i := 1; i <= n && len(out) < 5; i++ {
		if s.rows["export.csv#"+strconv.Itoa(i)] == 0 {
			out = append(out, strconv.Itoa(i))
		}
	}
	return fmt.Sprint(out)
}

// has reports whether record number n of export.csv arrived.
func (s *otlpSink) has(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows["export.csv#"+strconv.Itoa(n)] > 0
}

// rowsSince counts the rows that arrived at or after t.
func (s *otlpSink) rowsSince(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := len(s.rowAt) - 1; i >= 0 && !s.rowAt[i].Before(t); i-- {
		n++
	}
	return n
}

func (s *otlpSink) state() (rows int, requests int64, flushes []flushAt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rowAt), s.requests, append([]flushAt(nil), s.flushes...)
}

func restartRows(t *testing.T) int {
	if v := os.Getenv("TTFT_RESTART_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("TTFT_RESTART_ROWS=%q: a number >= 1000", v)
		}
		return n
	}
	return 60_000
}

const restartFlushInterval = time.Second

func restartConfig(logsGlob, storageDir, sink string) string {
	return fmt.Sprintf(`
extensions:
  file_storage:
    directory: %q
receivers:
  llm_gateway_log:
    include: [%q]
    start_at: beginning
    format: infro_csv
    storage: file_storage
    include_file_record_number: true
    poll_interval: 100ms
processors:
  # Stanza hands a batch on with the reader's context, which a stop cancels:
  # the connector still aggregates it (and the resume mark covers it), but an
  # exporter would refuse it. The batch processor sends with its own context.
  batch:
    timeout: 100ms
connectors:
  genai_ttft:
    flush_interval: %s
    aggregation_temporality: delta
exporters:
  otlp_http/rows:
    endpoint: %s
    compression: none
    sending_queue: {enabled: false}
    retry_on_failure: {enabled: false}
  otlp_http/metrics:
    endpoint: %s
    compression: none
    sending_queue: {enabled: false}
    retry_on_failure: {enabled: false}
service:
  extensions: [file_storage]
  telemetry:
    metrics: {level: none}
  pipelines:
    logs:
      receivers: [llm_gateway_log]
      processors: [batch]
      exporters: [otlp_http/rows, genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [otlp_http/metrics]
`, storageDir, logsGlob, restartFlushInterval, sink, sink)
}

func writeExport(t *testing.T, path string, rows, firstID int, header bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if _, err := gatewayexport.Write(f, gatewayexport.Options{
		Rows: rows, Seed: uint64(firstID), Start: t0.Add(time.Duration(firstID) * time.Millisecond),
		Span: time.Duration(rows) * time.Millisecond, Header: header, FirstID: firstID,
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// kill is one interruption's measurement.
type kill struct {
	rowsBefore, rowsAfter int // rows received before the signal / by the end of that run
	// lostWindow is how many rows arrived in the last flush interval (plus
	// 0.5 s in flight) before the signal: what a crash may lose.
	lostWindow int
}

// runRestarts reads the export through five interruptions by sig and a final
// run to the end; append, when set, keeps writing rows meanwhile and is
// stopped before the final run.
func runRestarts(t *testing.T, sig syscall.Signal, rows int, appendRows func(path string, stop <-chan struct{})) (*otlpSink, []kill) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	if err := os.Mkdir(storage, 0o700); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "export.csv")
	sink, url := newOTLPSink(t)
	cfg := restartConfig(filepath.Join(dir, "*.csv"), storage, url)
	if appendRows == nil {
		writeExport(t, export, rows, 1, true)
	}
	stop := make(chan struct{})
	appended := make(chan struct{})
	if appendRows != nil {
		writeExport(t, export, 100, 1, true)
		go func() { defer close(appended); appendRows(export, stop) }()
	} else {
		close(appended)
	}
	var kills []kill
	for i := 1; i <= 5; i++ {
		col := startCollector(t, cfg)
		// Interrupt once i sixths of the export were delivered.
		target := i * rows / 6
		watch := newSinkWatch()
		waitFor(t, col, 2*time.Minute, fmt.Sprintf("run %d to deliver rows", i), func() error {
			got, _, _ := sink.state()
			idle := watch.idle(got)
			_, n, _ := sink.totals()
			if n >= target {
				return nil
			}
			// Rows in flight at a crash (read and marked, not yet at the
			// sink) never arrive, up to 5,000 a crash (reportRestarts). When
			// the earlier crashes lost more than a sixth of the export, this
			// run reads to the end short of its target: it is interrupted
			// once the sink has been quiet for a few flush intervals.
			if sig == syscall.SIGKILL && idle > sinkQuietFor {
				t.Logf("run %d: the sink is quiet at %d distinct rows, short of %d (the rest was in flight at earlier crashes)", i, n, target)
				return nil
			}
			return fmt.Errorf("%d of %d distinct rows", n, target)
		})
		at, _, _ := sink.state()
		signalled := time.Now()
		_ = col.cmd.Process.Signal(sig)
		select {
		case <-col.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("run %d did not exit after %v", i, sig)
		}
		after, _, _ := sink.state()
		kills = append(kills, kill{rowsBefore: at, rowsAfter: after,
			lostWindow: sink.rowsSince(signalled.Add(-restartFlushInterval - 500*time.Millisecond))})
	}
	close(stop)
	<-appended
	// The final run reads to the end and stops gracefully.
	col := startCollector(t, cfg)
	watch := newSinkWatch()
	want := expectedRows(export)
	waitFor(t, col, 3*time.Minute, "the final run to read everything", func() error {
		n, _, _ := sink.state()
		_, distinct, _ := sink.totals()
		idle := watch.idle(n)
		// After a crash, rows in flight when it struck (read and marked, not
		// yet at the sink) never arrive. When they were the export's last
		// rows, the final run starts at the end and sends nothing: then the
		// run is over once the sink has been quiet for a few flush intervals.
		// reportRestarts bounds those rows (neverRead).
		done := distinct == want || (sig == syscall.SIGKILL && (sink.has(want) || idle > sinkQuietFor))
		if !done || idle < 500*time.Millisecond {
			return fmt.Errorf("%d distinct rows of %d (missing %s)", distinct, want, sink.missing(want))
		}
		return nil
	})
	col.Stop(t)
	return sink, kills
}

// sinkQuietFor is how long the sink must receive nothing for a run after
// SIGKILLs to count as having read all it will: a few flush intervals.
const sinkQuietFor = 4*restartFlushInterval + 2*time.Second

// sinkWatch remembers when the sink's row count last changed.
type sinkWatch struct {
	rows    int
	changed time.Time
}

func newSinkWatch() *sinkWatch { return &sinkWatch{changed: time.Now()} }

// idle takes the sink's row count now and says how long it has not changed.
func (w *sinkWatch) idle(rows int) time.Duration {
	if rows != w.rows {
		w.rows, w.changed = rows, time.Now()
	}
	return time.Since(w.changed)
}

// expectedRows counts the data rows of an export (lines minus the header).
func expectedRows(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n - 1
}

func TestRestartLosesNothingOnSIGTERM(t *testing.T) {
	collectorBinary(t)
	rows := restartRows(t)
	t.Run("during a read", func(t *testing.T) {
		sink, kills := runRestarts(t, syscall.SIGTERM, rows, nil)
		reportRestarts(t, "SIGTERM during a read", sink, kills, rows, true)
	})
	t.Run("during a 10k rows/s append", func(t *testing.T) {
		sink, kills := runRestarts(t, syscall.SIGTERM, rows, func(path string, stop <-chan struct{}) {
			appendAt(t, path, stop, rows)
		})
		reportRestarts(t, "SIGTERM during a 10k rows/s append", sink, kills, rows, true)
	})
}

func TestRestartBoundsWhatACrashCosts(t *testing.T) {
	collectorBinary(t)
	rows := restartRows(t)
	sink, kills := runRestarts(t, syscall.SIGKILL, rows, nil)
	reportRestarts(t, "SIGKILL during a read", sink, kills, rows, false)
}

// appendAt appends rows to path at 10,000 rows/s, 100 every 10 ms, until
// stop or until it wrote total rows (ids continue after the first 100).
func appendAt(t *testing.T, path string, stop <-chan struct{}, total int) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for id := 101; id <= total; id += 100 {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		writeExport(t, path, 100, id, false)
	}
}

func reportRestarts(t *testing.T, what string, sink *otlpSink, kills []kill, rows int, graceful bool) {
	t.Helper()
	received, distinct, wantRequests := sink.totals()
	neverRead := rows - distinct
	if graceful {
		neverRead = 0 // appended exports are shorter than rows; runRestarts waited for every row
	}
	_, requests, _ := sink.state()
	reread := received - distinct
	lost := wantRequests - requests // rows handed to the connector and never flushed
	t.Logf("%s, %d-row export, 5 interruptions: %d distinct rows, %d re-read, %d requests expected from what was read, %d counted (lost %d; %d rows in flight at a crash never read)",
		what, rows, distinct, reread, wantRequests, requests, lost, neverRead)
	for i, k := range kills {
		t.Logf("  interruption %d at %d rows received: %d when the run ended; %d in the last flush interval + 0.5 s", i+1, k.rowsBefore, k.rowsAfter, k.lostWindow)
	}
	if graceful {
		if reread != 0 || lost != 0 {
			t.Errorf("a graceful stop re-read %d rows and lost %d requests; want 0 and 0", reread, lost)
		}
		return
	}
	// The README's crash bound: each crash re-reads at most one resume mark
	// (10,000 rows, plus one 100-row batch in flight) and loses at most the
	// rows aggregated since the connector's last flush.
	if maxReread := 5 * (10_000 + 100); reread > maxReread {
		t.Errorf("5 crashes re-read %d rows, more than 5 × 10,100", reread)
	}
	var window int64
	for _, k := range kills {
		window += int64(k.lostWindow)
	}
	// Rows past the resume mark but still in stanza's emitter (100 rows or
	// 100 ms) or a batch processor when the crash struck are lost too.
	if neverRead > 5*5000 {
		t.Errorf("5 crashes lost %d rows in flight, more than 5 × 5,000", neverRead)
	}
	if lost < 0 || lost > window {
		t.Errorf("5 crashes lost %d requests, more than the %d rows of each run's last flush interval", lost, window)
	}
}
