package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// How a request's wait for its other rows ended (the fallback_waits
// counter's result).
const (
	waitMatched  = "matched"  // the request's rows came together: one record
	waitExpired  = "expired"  // fallbacks::wait passed; what arrived was emitted as it is
	waitEvicted  = "evicted"  // fallbacks::max_pending requests were already held
	waitReplaced = "replaced" // a second first-attempt row with the same id (a file read twice)
	waitStopped  = "stopped"  // the receiver stopped without storage: emitted as it is
	waitSaved    = "saved"    // the receiver stopped with storage: saved, held again on start
)

// maxRowsPerRequest bounds the rows held for one request id.
const maxRowsPerRequest = 32

// heldRow is a row held back while its request may still fail over.
type heldRow struct {
	e   *entry.Entry
	row derive.GatewayRecord
	// saved is the row as the journal saved it (heldjournal.go; nil
	// without storage): a snapshot writes it as it is, whatever happened
	// to e since (a release stamps e outside the lock).
	saved json.RawMessage
}

// heldRequest is the rows of one client request seen so far.
type heldRequest struct {
	id       string
	rows     []heldRow
	deadline time.Time
	primary  bool // the first attempt's row is among rows
	done     bool // emitted; its queue slot is skipped
}

// complete reports that the request's rows are all there.
func (h *heldRequest) complete() bool {
	if !h.primary || len(h.rows) < 2 {
		return false
	}
	rows := make([]*derive.GatewayRecord, len(h.rows))
	for i := range h.rows {
		rows[i] = &h.rows[i].row
	}
	return derive.GatewayRowsComplete(rows)
}

// released is a request whose wait is over, and why.
type released struct {
	req    *heldRequest
	result string
}

// fallbackRows holds the rows of requests that may have failed over until
// their linked rows arrive, within bounds: each request at most wait after
// its first row was read, at most maxPending requests at once. Safe for
// concurrent use (the file input reads files in parallel).
type fallbackRows struct {
	wait       time.Duration
	maxPending int

	mu    sync.Mutex
	held  map[string]*heldRequest
	queue []*heldRequest // by first arrival, so by deadline
	head  int
	// journal: storage is set, and every change to the held requests is
	// kept in ops until the journal writes it (heldjournal.go).
	journal bool
	ops     []heldOp
}

func newFallbackRows(wait time.Duration, maxPending int) *fallbackRows {
	return &fallbackRows{wait: wait, maxPending: maxPending, held: map[string]*heldRequest{}}
}

// add offers a mapped row. held is false when the row is not part of a
// request that may have failed over: the caller emits it now. out gets
// the requests whose wait ended.
// dup is a row already held: the same file's same record number of the
// same request, read again after a crash (stanza's checkpoint was older
// than the journal); the caller skips it as already_read.
func (f *fallbackRows) add(e *entry.Entry, row *derive.GatewayRecord, now time.Time, out []released) (_ []released, held, dup bool) {
	key, linked := row.Linked()
	if !linked {
		return out, false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.held[key]
	if h != nil && h.holds(e, row) {
		return out, true, true
	}
	switch {
	case h != nil && h.primary && row.ParentID == "":
		// The same first attempt again (a file read twice): the earlier one
		// is a request of its own.
		out = append(out, released{f.remove(h), waitReplaced})
		h = nil
	case h != nil && len(h.rows) >= maxRowsPerRequest:
		// No gateway tries this many providers for one request.
		out = append(out, released{f.remove(h), waitEvicted})
		h = nil
	}
	if h == nil {
		for len(f.held) >= f.maxPending {
			out = append(out, released{f.remove(f.oldest()), waitEvicted})
		}
		h = &heldRequest{id: key, deadline: now.Add(f.wait)}
		f.held[key] = h
		f.queue = append(f.queue, h)
	}
	hr := heldRow{e: e, row: *row}
	if f.journal {
		hr.saved = f.logAdd(h, e, row)
	}
	h.rows = append(h.rows, hr)
	h.primary = h.primary || row.ParentID == ""
	if h.complete() {
		out = append(out, released{f.remove(h), waitMatched})
	}
	return out, true, false
}

// holds reports whether h holds e's row already: same request id, same
// file, same record number.
func (h *heldRequest) holds(e *entry.Entry, row *derive.GatewayRecord) bool {
	path, _ := e.Attributes[attrs.LogFilePath].(string)
	n, ok := e.Attributes[attrs.LogFileRecordNumber].(int64)
	if path == "" || !ok {
		return false
	}
	for i := range h.rows {
		r := &h.rows[i]
		if r.row.ID != row.ID {
			continue
		}
		if p, _ := r.e.Attributes[attrs.LogFilePath].(string); p != path {
			continue
		}
		if m, _ := r.e.Attributes[attrs.LogFileRecordNumber].(int64); m == n {
			return true
		}
	}
	return false
}

// expired releases the requests whose wait is over.
func (f *fallbackRows) expired(now time.Time, out []released) []released {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		h := f.oldest()
		if h == nil || h.deadline.After(now) {
			return out
		}
		out = append(out, released{f.remove(h), waitExpired})
	}
}

// drain releases every request held.
func (f *fallbackRows) drain(out []released) []released {
	f.mu.Lock()
	defer f.mu.Unlock()
	for h := f.oldest(); h != nil; h = f.oldest() {
		out = append(out, released{f.remove(h), waitStopped})
	}
	return out
}

// pending is the number of requests held.
func (f *fallbackRows) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}

// oldest is the earliest-arrived request still held, or nil.
func (f *fallbackRows) oldest() *heldRequest {
	for f.head < len(f.queue) && f.queue[f.head].done {
		f.queue[f.head] = nil
		f.head++
	}
	if f.head > 64 && f.head*2 > len(f.queue) {
		// Reuse the drained front of the queue.
		n := copy(f.queue, f.queue[f.head:])
		clear(f.queue[n:])
		f.queue, f.head = f.queue[:n], 0
	}
	if f.head == len(f.queue) {
		return nil
	}
	return f.queue[f.head]
}

func (f *fallbackRows) remove(h *heldRequest) *heldRequest {
	h.done = true
	delete(f.held, h.id)
	if f.journal {
		f.ops = append(f.ops, heldOp{ID: h.id, Remove: true})
	}
	return h
}

// savedRequest is a held request as the storage keeps it (heldjournal.go):
// its wait goes on after the restart, so a fallback row read then still
// folds into its request's record.
type savedRequest struct {
	ID string `json:"id"`
	// Remaining is what was left of its wait at the stop.
	Remaining time.Duration `json:"remaining"`
	Primary   bool          `json:"primary"`
	Rows      []savedRow    `json:"rows"`
}

type savedRow struct {
	Entry  *entry.Entry         `json:"entry"`
	Record derive.GatewayRecord `json:"record"`
}

// restore holds saved requests again, each for what was left of its wait,
// within the same bounds as rows read (maxPending, maxRowsPerRequest,
// wait); out gets the requests those bounds release.
func (f *fallbackRows) restore(saved []savedRequest, now time.Time, out []released) []released {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sr := range saved {
		if len(sr.Rows) == 0 || f.held[sr.ID] != nil {
			continue
		}
		for len(f.held) >= f.maxPending {
			out = append(out, released{f.remove(f.oldest()), waitEvicted})
		}
		h := &heldRequest{id: sr.ID, deadline: now.Add(min(max(sr.Remaining, 0), f.wait)), primary: sr.Primary}
		for _, r := range sr.Rows[:min(len(sr.Rows), maxRowsPerRequest)] {
			if r.Entry == nil {
				continue
			}
			r.Entry.Attributes = jsonNumbers(r.Entry.Attributes)
			r.Entry.Resource = jsonNumbers(r.Entry.Resource)
			r.Entry.Body = jsonNumber(r.Entry.Body)
			hr := heldRow{e: r.Entry, row: r.Record}
			if f.journal {
				hr.saved, _ = json.Marshal(savedRow{Entry: r.Entry, Record: r.Record})
			}
			h.rows = append(h.rows, hr)
		}
		if len(h.rows) == 0 {
			continue
		}
		f.held[h.id] = h
		f.queue = append(f.queue, h)
	}
	return out
}

// jsonNumbers gives numbers decoded with UseNumber back the types stanza
// gives them: int64 when integral, else float64.
func jsonNumbers(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = jsonNumber(v)
	}
	return m
}

func jsonNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		return jsonNumbers(x)
	case []any:
		for i := range x {
			x[i] = jsonNumber(x[i])
		}
	}
	return v
}
