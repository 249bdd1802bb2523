package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.uber.org/zap"
)

// A CSV header line inside a file: a gateway upgraded in place appends
// under its new header, or two exports were joined with cat. stanza reads a
// file's header from its first lines only, so the rows after such a line
// were read under the first header, and a column that is no TTFT could
// become one (prompt_tokens 1200 read as a TTFT of 1.2 s). A row that does
// not map and whose fields name at least minHeaderNames of the columns the
// file's header maps, every one of them, is such a line: it is skipped as
// header_line, and when it differs from the header in force it is the
// file's header for the rows after it. A sender who controls a field or
// two of a row cannot make one: a quoted field stays one field. A change is
// keyed by the file's path (kept for the mapping whatever
// include_file_path says) and ends when a row at or before its header line
// arrives: the path was written anew (the next export) or is read from its
// start again, and its rows are read under their first header until a
// header line comes again.
const (
	reasonHeaderLine = "header_line"
	// minHeaderNames: a header mapping fewer columns has its later header
	// lines skipped as whatever they fail as, and never changes.
	minHeaderNames = 3
	// headerChangesKey is where the changes are saved (storage set), in the
	// mapping operator's scope, as each one is seen: a restart keeps
	// reading the file under its new header.
	headerChangesKey = "csv_header_changes"
	// maxHeaderChanges bounds the header changes remembered (a file
	// whose header changed twice has two); past it the oldest is
	// forgotten.
	maxHeaderChanges = 1024
)

// headerChange is one file's header in force instead of its first one.
type headerChange struct {
	File  string `json:"file"`
	First string `json:"first"`
	To    string `json:"to"`
	// At is the header line's record number in the file.
	At int64 `json:"at"`
}

// headerChanges are the files whose header changed. Safe for concurrent use.
type headerChanges struct {
	any atomic.Bool
	mu  sync.Mutex
	// to: key(file, first) → the file's changes in force, by header line
	// (a file whose header changed twice has two: the rows between its
	// header lines are read under the first change, the rows after the
	// second under it).
	to    map[string][]headerChange
	order []headerChange // oldest first
}

func headerChangeKey(file, first string) string { return file + "\x00" + first }

// header is the header in force for the row at record number n (0:
// unknown) of file, whose first header is first: that of the last header
// line before n. The changes end when n is not after the first of their
// header lines: ended reports it (the changes are to be saved).
// Callers test any first: a row of a receiver that never saw a header
// change then costs one atomic load.
func (h *headerChanges) header(file, first string, n int64) (header string, ended bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := headerChangeKey(file, first)
	cs := h.to[k]
	if len(cs) == 0 {
		return first, false
	}
	if n <= 0 {
		return cs[len(cs)-1].To, false
	}
	if n <= cs[0].At {
		h.remove(k, file, first, 0)
		return first, true
	}
	for i := len(cs) - 1; i > 0; i-- {
		if cs[i].At < n {
			return cs[i].To, false
		}
	}
	return cs[0].To, false
}

// remove forgets the changes of (file, first) whose header line is at or
// after record number from. Called with mu held.
func (h *headerChanges) remove(k, file, first string, from int64) {
	cs := h.to[k]
	kept := cs[:0]
	for _, c := range cs {
		if c.At < from {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		delete(h.to, k)
	} else {
		h.to[k] = kept
	}
	order := h.order[:0]
	for _, c := range h.order {
		if c.File != file || c.First != first || c.At < from {
			order = append(order, c)
		}
	}
	clear(h.order[len(order):])
	h.order = order
}

// set puts c in force for the rows after its header line (the changes
// whose header line is not before it go).
func (h *headerChanges) set(c headerChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.to == nil {
		h.to = map[string][]headerChange{}
	}
	k := headerChangeKey(c.File, c.First)
	h.remove(k, c.File, c.First, c.At)
	h.to[k] = append(h.to[k], c)
	h.order = append(h.order, c)
	if len(h.order) > maxHeaderChanges {
		// The oldest goes: its file's first change (a file's changes are
		// in order, oldest first).
		old := h.order[0]
		ok := headerChangeKey(old.File, old.First)
		if cs := h.to[ok][1:]; len(cs) > 0 {
			h.to[ok] = cs
		} else {
			delete(h.to, ok)
		}
		h.order = append(h.order[:0:0], h.order[1:]...)
	}
	h.any.Store(true)
}

// restore puts saved changes in force.
func (h *headerChanges) restore(saved []headerChange) {
	for _, c := range saved {
		if c.File != "" && c.First != "" && c.To != "" && len(c.To) <= maxHeaderBytes && c.At > 0 {
			h.set(c)
		}
	}
}

// headerNames are the columns of cols that the mapping reads.
func headerNames(cols *csvColumns) []string {
	var names []string
	add := func(i int) {
		if i < 0 {
			return
		}
		for _, n := range names {
			if n == cols.names[i] {
				return
			}
		}
		names = append(names, cols.names[i])
	}
	for _, cs := range cols.fields {
		for _, c := range cs {
			add(c.exact)
			add(c.head)
		}
	}
	return names
}

// isHeaderLine reports whether fields, a row that did not map under cols,
// are a header line (see headerChanges).
func isHeaderLine(cols *csvColumns, fields []string) bool {
	if len(cols.mapped) < minHeaderNames {
		return false
	}
	for _, n := range cols.mapped {
		found := false
		for _, f := range fields {
			if strings.TrimSpace(f) == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// headerLine handles a header line at record number at of file read under
// the header first: a different one is put in force (and saved) for the
// rows after it.
func (o *mapOperator) headerLine(ctx context.Context, file, first, current string, at int64, fields []string) {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = strings.TrimSpace(f)
	}
	to := strings.Join(names, string(o.delimiter))
	if to == current || len(to) > maxHeaderBytes || file == "" || at <= 0 {
		return
	}
	o.changes.set(headerChange{File: file, First: first, To: to, At: at})
	o.Logger().Warn("CSV header line inside the file: its rows after it are read under it",
		zap.String("file", file), zap.String("header", to))
	o.saveHeaderChanges(ctx)
}

// saveHeaderChanges saves the changes in force (storage set). Each save
// writes the changes in force when it writes, one save at a time, so the
// last write holds every change: two files' changes made at once, each
// saving the snapshot its change left, could write them in the other
// order, the older last.
func (o *mapOperator) saveHeaderChanges(ctx context.Context) {
	if o.headerStore == nil {
		return
	}
	o.headerSaveMu.Lock()
	defer o.headerSaveMu.Unlock()
	o.changes.mu.Lock()
	saved := append([]headerChange(nil), o.changes.order...)
	o.changes.mu.Unlock()
	b, err := json.Marshal(saved)
	if err == nil {
		err = o.headerStore.Set(ctx, headerChangesKey, b)
	}
	if err != nil {
		o.Logger().Warn("saving a changed CSV header failed: after a restart the file's later rows are read under its first header", zap.Error(err))
	}
}

// restoreHeaderChanges reads the saved header changes (storage set).
func (o *mapOperator) restoreHeaderChanges(p operator.Persister) {
	o.headerStore = p
	b, err := p.Get(context.Background(), headerChangesKey)
	if err != nil || len(b) == 0 {
		return
	}
	var saved []headerChange
	if err := json.Unmarshal(b, &saved); err != nil {
		o.Logger().Warn("the saved CSV header changes do not read; they are dropped", zap.Error(err))
		return
	}
	o.changes.restore(saved)
}
