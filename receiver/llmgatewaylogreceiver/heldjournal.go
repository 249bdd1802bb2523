package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// The held requests survive a crash, not only a graceful stop (storage
// set). stanza saves its checkpoint at the end of each poll, past rows the
// mapping holds for their fallback rows; after a crash it does not read
// them again, so rows held only in memory were lost (at most
// fallbacks::max_pending requests). The mapping journals every change to
// the held requests before the batch that made it returns, so before
// stanza's checkpoint covers the row: a row held is one journal entry with
// the row, a request emitted one with its id. Each write is one storage
// batch: the entry and the head that names it. Every compactEvery entries,
// and at a graceful stop, the held requests are written whole as the base
// (heldKey, the layout a graceful stop always wrote) and the entries go.
// The start reads the base and the entries after it, holds the requests
// again for what was left of their wait when the last write was made, and
// compacts. A row read again after a crash, because stanza's checkpoint was
// older than the journal, is the row held (fallbackRows.add: same file,
// record number and id): skipped as already_read. What a crash can still
// do: emit a request twice when it struck between the emit and the write
// of its removal (the write follows the emit). docs/architecture.md §3.
const (
	heldHeadKey     = "fallbacks_held_head"
	heldEntryPrefix = "fallbacks_held_log/"
	compactEvery    = 256
)

// heldOp is one change to the held requests.
type heldOp struct {
	ID string `json:"id"`
	// Row joins the request (created with Deadline when new).
	Row      json.RawMessage `json:"row,omitempty"`
	Deadline time.Time       `json:"deadline,omitzero"`
	// Remove: the request was emitted (or saved whole: a compaction).
	Remove bool `json:"remove,omitempty"`
}

// logAdd journals a row joining h and returns the row as saved. Called
// with f.mu held.
func (f *fallbackRows) logAdd(h *heldRequest, e *entry.Entry, row *derive.GatewayRecord) json.RawMessage {
	b, err := json.Marshal(savedRow{Entry: e, Record: *row})
	if err != nil {
		// Not reachable for entries stanza makes; the row is held, not saved.
		return nil
	}
	f.ops = append(f.ops, heldOp{ID: h.id, Row: b, Deadline: h.deadline})
	return b
}

// takeOps returns the changes not yet journaled.
func (f *fallbackRows) takeOps() []heldOp {
	f.mu.Lock()
	defer f.mu.Unlock()
	ops := f.ops
	f.ops = nil
	return ops
}

// savedRequestRaw is savedRequest with its rows as saved.
type savedRequestRaw struct {
	ID        string            `json:"id"`
	Remaining time.Duration     `json:"remaining"`
	Primary   bool              `json:"primary"`
	Rows      []json.RawMessage `json:"rows"`
}

// base is every held request, oldest first, as the base saves it; the
// changes before it are dropped.
func (f *fallbackRows) base(now time.Time) []savedRequestRaw {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = nil
	var out []savedRequestRaw
	for _, h := range f.queue[f.head:] {
		if h.done {
			continue
		}
		sr := savedRequestRaw{ID: h.id, Remaining: max(h.deadline.Sub(now), 0), Primary: h.primary}
		for _, r := range h.rows {
			if r.saved != nil {
				sr.Rows = append(sr.Rows, r.saved)
			}
		}
		if len(sr.Rows) > 0 {
			out = append(out, sr)
		}
	}
	return out
}

// journalHead names the base and the entries after it.
type journalHead struct {
	// First..Next-1 are the entries after the base.
	First int64 `json:"first"`
	Next  int64 `json:"next"`
	// BaseAt is when the base was written (its Remaining count from
	// then); SavedAt when the last write was made.
	BaseAt  time.Time `json:"base_at"`
	SavedAt time.Time `json:"saved_at"`
}

// heldJournal writes the held requests' changes to the receiver's storage.
type heldJournal struct {
	p      operator.Persister
	logger *zap.Logger

	mu   sync.Mutex
	head journalHead
	// broken: a write failed, so the entries miss a change; the next
	// write is a compaction.
	broken atomic.Bool
}

func heldEntryKey(n int64) string { return heldEntryPrefix + strconv.FormatInt(n, 10) }

// flush journals the changes since the last write, if any.
func (j *heldJournal) flush(ctx context.Context, f *fallbackRows, now time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken.Load() || j.head.Next-j.head.First >= compactEvery {
		j.compactLocked(ctx, f, now)
		return
	}
	ops := f.takeOps()
	if len(ops) == 0 {
		return
	}
	b, err := json.Marshal(ops)
	if err != nil {
		j.fail(err)
		return
	}
	head := j.head
	head.Next++
	head.SavedAt = now
	hb, _ := json.Marshal(head)
	if err := j.p.Batch(ctx, storage.SetOperation(heldEntryKey(j.head.Next), b), storage.SetOperation(heldHeadKey, hb)); err != nil {
		j.fail(err)
		return
	}
	j.head = head
}

// compact writes the held requests whole as the base and deletes the
// entries; false when that failed.
func (j *heldJournal) compact(ctx context.Context, f *fallbackRows, now time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.compactLocked(ctx, f, now)
}

// save writes the held requests whole (a graceful stop). false only when
// the storage does not hold them: the write failed and the journal missed
// a change (a failed write before, or changes not yet journaled). When it
// holds every change already, a failed compaction loses nothing: the start
// replays the entries, so emitting the requests now would emit them twice.
func (j *heldJournal) save(ctx context.Context, f *fallbackRows, now time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	f.mu.Lock()
	synced := !j.broken.Load() && len(f.ops) == 0
	f.mu.Unlock()
	return j.compactLocked(ctx, f, now) || synced
}

func (j *heldJournal) compactLocked(ctx context.Context, f *fallbackRows, now time.Time) bool {
	b, err := json.Marshal(f.base(now))
	if err != nil {
		j.fail(err)
		return false
	}
	head := journalHead{First: j.head.Next, Next: j.head.Next, BaseAt: now, SavedAt: now}
	hb, _ := json.Marshal(head)
	ops := []*storage.Operation{storage.SetOperation(heldKey, b), storage.SetOperation(heldHeadKey, hb)}
	for n := j.head.First; n < j.head.Next; n++ {
		ops = append(ops, storage.DeleteOperation(heldEntryKey(n)))
	}
	if err := j.p.Batch(ctx, ops...); err != nil {
		j.fail(err)
		return false
	}
	j.head = head
	j.broken.Store(false)
	return true
}

func (j *heldJournal) fail(err error) {
	if !j.broken.Load() {
		j.logger.Warn("journaling the held gateway rows failed: a crash before the next write loses them or emits them twice", zap.Error(err))
	}
	j.broken.Store(true)
}

// due reports whether a flush has anything to write: changes not yet
// journaled, or a failed write to mend. A batch that changed nothing
// takes no lock but f's.
func (j *heldJournal) due(f *fallbackRows) bool {
	if j.broken.Load() {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ops) > 0
}

// read returns the held requests the storage holds: the base, and the
// entries after it replayed, each with what was left of its wait at the
// last write. A state that does not read is dropped (logged).
func (j *heldJournal) read(ctx context.Context) []savedRequest {
	j.mu.Lock()
	defer j.mu.Unlock()
	var head journalHead
	hasHead := false
	if b, err := j.p.Get(ctx, heldHeadKey); err == nil && len(b) > 0 {
		// A flush compacts at compactEvery entries: a head naming more is
		// not one this receiver wrote (and reading it could take ages).
		if err := json.Unmarshal(b, &head); err != nil || head.First > head.Next || head.First < 0 || head.Next-head.First > compactEvery {
			j.logger.Warn("the journal of held gateway rows does not read; only its base is read", zap.Error(err))
			head = journalHead{}
		} else {
			hasHead = true
		}
	}
	// The entries to delete at the next compaction: all there were.
	j.head = journalHead{First: head.First, Next: head.Next}
	var base []savedRequest
	if b, err := j.p.Get(ctx, heldKey); err == nil && len(b) > 0 {
		if err := decodeNumbers(b, &base); err != nil {
			j.logger.Warn("the saved held gateway rows do not read; they are dropped", zap.Error(err))
			base = nil
		}
	}
	if !hasHead {
		// A base a graceful stop wrote, without a journal: its Remaining
		// count from the start.
		return base
	}
	type state struct {
		sr       savedRequest
		deadline time.Time
	}
	var order []*state
	byID := map[string]*state{}
	for _, sr := range base {
		s := &state{sr: sr, deadline: head.BaseAt.Add(sr.Remaining)}
		order = append(order, s)
		byID[sr.ID] = s
	}
	for n := head.First; n < head.Next; n++ {
		b, err := j.p.Get(ctx, heldEntryKey(n))
		if err != nil || len(b) == 0 {
			continue
		}
		var ops []heldOp
		if err := json.Unmarshal(b, &ops); err != nil {
			j.logger.Warn("an entry of the journal of held gateway rows does not read; it is skipped", zap.Int64("entry", n), zap.Error(err))
			continue
		}
		for _, op := range ops {
			if op.Remove {
				delete(byID, op.ID)
				continue
			}
			var row savedRow
			if decodeNumbers(op.Row, &row) != nil {
				continue
			}
			s := byID[op.ID]
			if s == nil {
				s = &state{sr: savedRequest{ID: op.ID}, deadline: op.Deadline}
				order = append(order, s)
				byID[op.ID] = s
			}
			s.sr.Rows = append(s.sr.Rows, row)
			s.sr.Primary = s.sr.Primary || row.Record.ParentID == ""
		}
	}
	var out []savedRequest
	for _, s := range order {
		if byID[s.sr.ID] != s {
			continue // removed (and perhaps held again: a later state)
		}
		s.sr.Remaining = max(s.deadline.Sub(head.SavedAt), 0)
		out = append(out, s.sr)
	}
	return out
}

// decodeNumbers decodes b into v with its numbers as json.Number
// (fallbackRows.restore gives them stanza's types again).
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
