package llmgatewaylogreceiver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// newLinkedJSONPipeline is newHeldPipeline for a json export that links a
// fallback's row to its request's by mapping::request_id and
// mapping::parent_request_id only, without a fallback index.
func newLinkedJSONPipeline(t *testing.T) *heldPipeline {
	t.Helper()
	return newMappedPipeline(t, FormatJSON, MappingConfig{
		TTFT: "ttft_ms", StartTime: "start", Duration: "latency_ms", Status: "status",
		Model: "model", RequestID: "id", ParentRequestID: "parent",
	})
}

// newMappedPipeline is newHeldPipeline for format and mapping m.
func newMappedPipeline(t *testing.T, format string, m MappingConfig) *heldPipeline {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.Format = format
	cfg.Mapping = m
	clock := clockwork.NewFakeClock()
	cfg.clock = clock
	return startHeldPipeline(t, cfg, clock, storage.NewNopClient())
}

// README, Fallback rows: "either row may come first". Without a fallback
// index, a request's row read before its fallback's row waited out
// fallbacks::wait (expired) where the other order matched at once.
func TestLinkedRowsWithoutFallbackIndexMatchInEitherOrder(t *testing.T) {
	const (
		parent = `{"id":"p-1","start":"2026-12-01T00:00:00Z","latency_ms":100,"status":"error","model":"a"}`
		child  = `{"id":"c-1","parent":"p-1","start":"2026-12-01T00:00:00.2Z","latency_ms":500,"ttft_ms":300,"status":"ok","model":"b"}`
	)
	for name, lines := range map[string][]string{
		"parent, then child": {parent, child},
		"child, then parent": {child, parent},
	} {
		t.Run(name, func(t *testing.T) {
			p := newLinkedJSONPipeline(t)
			for _, l := range lines {
				p.feed(t, l)
			}
			recs := p.out.records(t)
			require.Len(t, recs, 1, "the request is whole: emitted without waiting")
			r := recs[0]
			assert.Equal(t, record.OutcomeComplete, r.Outcome)
			assert.Equal(t, "b", r.Model)
			assert.True(t, r.FailedOverKnown && r.FailedOver)
			assert.InDelta(t, 0.5, r.TimeToFirstChunk, 1e-9, "the fallback's TTFT on the client's clock")
			assert.Equal(t, map[string]int64{waitMatched: 1}, p.waits(t))
		})
	}
}

// heldEntry is a mapped row's entry as the file input gives it: its file
// and record number.
func heldEntry(path string, n int64) *entry.Entry {
	e := entry.New()
	e.Attributes = map[string]any{attrs.LogFilePath: path, attrs.LogFileRecordNumber: n}
	return e
}

// failedRow is a failed row of request "p": its own row (fallback index
// 0), or with a parent, a failed fallback's row.
func failedRow(id, parent string, index int64) *derive.GatewayRecord {
	r := &derive.GatewayRecord{ID: id, ParentID: parent, FallbackIndex: index}
	r.Record.Outcome = record.OutcomeError
	return r
}

// A held row read again is already_read only when it is the same file's
// same record: the same request's row at the same record number of another
// file (a copy of the log) is the same first attempt again, its own request.
func TestHeldRowAtTheSameRecordOfAnotherFileIsNoDuplicate(t *testing.T) {
	f := newFallbackRows(time.Minute, 100)
	now := time.Now()
	rel, held, dup := f.add(heldEntry("/logs/a.jsonl", 7), failedRow("p", "", 0), now, nil)
	require.True(t, held)
	require.False(t, dup)
	require.Empty(t, rel)

	_, held, dup = f.add(heldEntry("/logs/a.jsonl", 7), failedRow("p", "", 0), now, nil)
	assert.True(t, held && dup, "the same file's same record, read again after a crash")

	rel, held, dup = f.add(heldEntry("/logs/b.jsonl", 7), failedRow("p", "", 0), now, nil)
	assert.True(t, held)
	assert.False(t, dup, "another file's record is no row already read")
	require.Len(t, rel, 1)
	assert.Equal(t, waitReplaced, rel[0].result)
}

// One request id holds at most maxRowsPerRequest rows: the next row
// releases the held ones (evicted) and starts a request of its own.
func TestHeldRequestHoldsAtMostMaxRowsPerRequest(t *testing.T) {
	f := newFallbackRows(time.Minute, 100)
	now := time.Now()
	for i := range maxRowsPerRequest {
		rel, held, _ := f.add(heldEntry("/logs/a.jsonl", int64(i+1)), failedRow("c"+strconv.Itoa(i), "p", int64(i+1)), now, nil)
		require.True(t, held)
		require.Empty(t, rel, "row %d", i+1)
	}
	rel, held, _ := f.add(heldEntry("/logs/a.jsonl", maxRowsPerRequest+1), failedRow("c-last", "p", maxRowsPerRequest+1), now, nil)
	assert.True(t, held)
	require.Len(t, rel, 1)
	assert.Equal(t, waitEvicted, rel[0].result)
	assert.Len(t, rel[0].req.rows, maxRowsPerRequest)
	assert.Equal(t, 1, f.pending(), "the last row waits on its own")
}

// A held request is released fallbacks::wait after its first row was
// read: at that instant, not only after it.
func TestHeldRequestIsReleasedAtItsDeadline(t *testing.T) {
	f := newFallbackRows(time.Minute, 100)
	now := time.Now()
	_, held, _ := f.add(heldEntry("/logs/a.jsonl", 1), failedRow("p", "", 0), now, nil)
	require.True(t, held)
	assert.Empty(t, f.expired(now.Add(time.Minute-time.Nanosecond), nil))
	rel := f.expired(now.Add(time.Minute), nil)
	require.Len(t, rel, 1)
	assert.Equal(t, waitExpired, rel[0].result)
}

// A timeout status says which timeout by the TTFT alone ("timeout:
// first-token if no TTFT is present, else idle"): the content an error
// row kept is read on error rows only.
func TestTimeoutStatusIgnoresTheOutputKept(t *testing.T) {
	m := testMapper(t, FormatBifrost, MappingConfig{})
	out, reason := m.mapRow(map[string]any{
		"timestamp": "2026-11-30T00:00:03Z", "status": "timeout", "stream": true, "latency": 9040.0,
		"output_message": map[string]any{"role": "assistant", "content": "Partial answer"},
	})
	require.Empty(t, reason)
	assert.Equal(t, record.OutcomeTimeoutFirstToken, out.rec.Outcome)
}

// Only a three-digit HTTP status (100–599) is read by its class: a class
// word for another first digit names no status.
func TestStatusClassOnlyForHTTPStatuses(t *testing.T) {
	m := testMapper(t, FormatJSON, MappingConfig{TTFT: "ttft_ms", Status: "status",
		StatusValues: map[string][]string{"error": {"error", "6xx"}}})
	_, reason := m.mapRow(map[string]any{"status": "601"})
	assert.Equal(t, reasonUnknownStatus, reason)
}

// A request restored after a restart waits at most fallbacks::wait, what
// ever the saved state says was left (the wait may have been lowered).
func TestRestoredRequestWaitsAtMostTheWait(t *testing.T) {
	f := newFallbackRows(time.Minute, 100)
	now := time.Now()
	f.restore([]savedRequest{{ID: "p", Remaining: time.Hour, Primary: true,
		Rows: []savedRow{{Entry: heldEntry("/logs/a.jsonl", 1), Record: *failedRow("p", "", 0)}}}}, now, nil)
	require.Equal(t, 1, f.pending())
	rel := f.expired(now.Add(time.Minute), nil)
	require.Len(t, rel, 1)
	assert.Equal(t, waitExpired, rel[0].result)
}

// The request's own row carries the folded record, whichever row came
// first: its entry's attributes (its file) are the record's.
func TestFoldedRecordIsCarriedByTheRequestsRow(t *testing.T) {
	p := newHeldPipeline(t, 100)
	for _, b := range []struct{ line, file string }{{bifrostChild, "fallbacks.jsonl"}, {bifrostParent, "requests.jsonl"}} {
		e := entry.New()
		e.Body = b.line
		e.Attributes = map[string]any{attrs.LogFileName: b.file}
		require.NoError(t, p.first.ProcessBatch(context.Background(), []*entry.Entry{e}))
	}
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	require.Len(t, p.out.got, 1)
	assert.Equal(t, "requests.jsonl", p.out.got[0].Attributes[attrs.LogFileName])
}

// A TTFT the fold cannot put on the client's clock is counted in
// ttft_rejected, as a row's own rejected TTFT is: a fallback row stamped
// before its request's row.
func TestFoldedTTFTRejectionIsCounted(t *testing.T) {
	p := newMappedPipeline(t, FormatBifrost, MappingConfig{TTFT: "ttft_ms"})
	early := strings.Replace(bifrostChild, `"timestamp":"2026-12-01T07:52:44.425359051Z"`, `"timestamp":"2026-12-01T07:52:43.425359051Z","ttft_ms":300`, 1)
	p.feed(t, bifrostParent, early)
	recs := p.out.records(t)
	require.Len(t, recs, 1)
	_, has := recs[0].TTFT()
	assert.False(t, has)
	assert.Equal(t, map[string]int64{derive.GatewayTTFTAfterEnd: 1}, counterByAttr(t, p.reader, metricTTFTRejected, "reason"))
}

// A header line inside a file ends its changes when a row at or before it
// arrives (the path read anew): that row, at the header line's own record
// number, is read under the first header.
func TestHeaderChangeEndsAtItsOwnRecordNumber(t *testing.T) {
	var h headerChanges
	h.set(headerChange{File: "/x.csv", First: "a,b,c", To: "c,b,a", At: 5})
	got, ended := h.header("/x.csv", "a,b,c", 6)
	assert.Equal(t, "c,b,a", got)
	assert.False(t, ended)
	got, ended = h.header("/x.csv", "a,b,c", 5)
	assert.Equal(t, "a,b,c", got)
	assert.True(t, ended)
}

// A header line whose names have spaces around the delimiter is a header
// line, as the first line's names are trimmed.
func TestHeaderLineWithSpacesAroundItsNames(t *testing.T) {
	s, err := newSpec(FormatInfroCSV, MappingConfig{})
	require.NoError(t, err)
	cols := newCSVColumns(s, "request_id,created_at,model,status,ttft_ms,latency_ms", ',')
	assert.True(t, isHeaderLine(cols, []string{"request_id", " created_at", " model", " status", " ttft_ms ", " latency_ms"}))
	assert.False(t, isHeaderLine(cols, []string{"r1", "2026-11-30T00:00:00Z", "m", "ok", "412", "1630"}))
}

// After a crash a held request waits for what was left of its wait at the
// journal's last write, not at its base's.
func TestJournalReplayWaitsWhatWasLeftAtTheLastWrite(t *testing.T) {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	row, err := json.Marshal(savedRow{Entry: heldEntry("/logs/a.jsonl", 1), Record: *failedRow("p", "", 0)})
	require.NoError(t, err)
	ops, err := json.Marshal([]heldOp{{ID: "p", Row: row, Deadline: base.Add(time.Minute)}})
	require.NoError(t, err)
	head, err := json.Marshal(journalHead{First: 0, Next: 1, BaseAt: base, SavedAt: base.Add(20 * time.Second)})
	require.NoError(t, err)
	j := &heldJournal{p: memPersister{heldHeadKey: head, heldEntryKey(0): ops}, logger: zap.NewNop()}
	saved := j.read(context.Background())
	require.Len(t, saved, 1)
	assert.Equal(t, 40*time.Second, saved[0].Remaining)
	assert.True(t, saved[0].Primary)
}

// A line break outside quotes continues the previous field, as stanza's
// csv_parser reads it, in a column the row's object keeps (the case in
// TestCSVRowsReadAsStanzaCSVParserReadsThem lands in a column the header
// gives twice, whose later field wins).
func TestCSVLineBreakContinuesAKeptField(t *testing.T) {
	sp := csvTestSpec(t)
	st := newStanzaCSV(t, ",")
	header := "ttft,start,status,model,r,usage,a.b,r"
	for _, line := range []string{
		"1,2,ok,m,route,a\nb,9,y",
		"1,2,ok,m,route,x,9,y\nz",
	} {
		sameAsStanza(t, st, sp, ',', header, line)
	}
	fields, err := splitCSVRow("1,2,ok,m,route,a\nb,9,y", ',', ",")
	require.NoError(t, err)
	assert.Equal(t, "a\nb", fields[5])
}

// Status words are matched case-insensitively, the user's too.
func TestUserStatusWordsMatchInAnyCase(t *testing.T) {
	m := testMapper(t, FormatJSON, MappingConfig{TTFT: "ttft_ms", Status: "status",
		StatusValues: map[string][]string{"complete": {"Done"}, "skip": {"In_Flight"}}})
	for _, word := range []string{"done", "DONE", "Done"} {
		out, reason := m.mapRow(map[string]any{"status": word})
		require.Empty(t, reason, word)
		assert.Equal(t, record.OutcomeComplete, out.rec.Outcome, word)
	}
	_, reason := m.mapRow(map[string]any{"status": "in_flight"})
	assert.Equal(t, reasonNotFinished, reason)
}
