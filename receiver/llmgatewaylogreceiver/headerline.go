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
	// maxHeaderChanges bounds the files whose header changed that are
	// remembered; past it the oldest is forgotten.
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
	any   atomic.Bool
	mu    sync.Mutex
	to    map[string]headerChange // key(file, first) → header in force
	order []headerChange          // oldest first
}

func headerChangeKey(file, first string) string { return file + "\x00" + first }

// header is the header in force for the row at record number n (0:
// unknown) of file, whose first header is first. A change whose header
// line is not before n ends: ended reports it, and the changes to save.
// Callers test any first: a row of a receiver that never saw a header
// change then costs one atomic load.
func (h *headerChanges) header(file, first string, n int64) (header string, ended []headerChange, wasEnded bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := headerChangeKey(file, first)
	c, ok := h.to[k]
	if !ok {
		return first, nil, false
	}
	if n <= 0 || n > c.At {
		return c.To, nil, false
	}
	h.remove(k, file, first)
	return first, append([]headerChange{}, h.order...), true
}

// remove forgets the change of (file, first). Called with mu held.
func (h *headerChanges) remove(k, file, first string) {
	delete(h.to, k)
	for i := range h.order {
		if h.order[i].File == file && h.order[i].First == first {
			h.order = append(h.order[:i], h.order[i+1:]...)
			return
		}
	}
}

// set puts c in force and reports the changes to save.
func (h *headerChanges) set(c headerChange) []headerChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.to == nil {
		h.to = map[string]headerChange{}
	}
	k := headerChangeKey(c.File, c.First)
	if _, ok := h.to[k]; ok {
		h.remove(k, c.File, c.First)
	}
	h.to[k] = c
	h.order = append(h.order, c)
	if len(h.order) > maxHeaderChanges {
		old := h.order[0]
		delete(h.to, headerChangeKey(old.File, old.First))
		h.order = append(h.order[:0:0], h.order[1:]...)
	}
	h.any.Store(true)
	return append([]headerChange(nil), h.order...)
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
	saved := o.changes.set(headerChange{File: file, First: first, To: to, At: at})
	o.Logger().Warn("CSV header line inside the file: its rows after it are read under it",
		zap.String("file", file), zap.String("header", to))
	o.saveHeaderChanges(ctx, saved)
}

// saveHeaderChanges saves the changes in force (storage set).
func (o *mapOperator) saveHeaderChanges(ctx context.Context, saved []headerChange) {
	if o.headerStore == nil {
		return
	}
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
