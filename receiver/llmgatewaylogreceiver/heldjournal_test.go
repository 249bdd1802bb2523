package llmgatewaylogreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// TestJournalKeepsARequestUntilItIsEmitted: a request whose rows came
// together is removed from the held requests before it is emitted. While
// its emit is under way (the next consumer is slow), another reader's
// batch journaled that removal with its own change, so a crash then lost
// the request: it was neither emitted nor held again, and its fallback row,
// read again after the crash, came out as a record of its own.
func TestJournalKeepsARequestUntilItIsEmitted(t *testing.T) {
	ctx := context.Background()
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	clock := clockwork.NewFakeClock()
	p := newHeldPipelineOn(t, 100, clock, client)
	p.feed(t, bifrostParent)
	require.Empty(t, p.out.records(t))

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p.out.gate = func() { once.Do(func() { close(entered); <-release }) }
	line := func(s string) []*entry.Entry {
		e := entry.New()
		e.Body = s
		return []*entry.Entry{e}
	}
	aDone, bDone := make(chan struct{}), make(chan struct{})
	go func() { // reader A: the fallback row completes p-1; its emit waits
		defer close(aDone)
		_ = p.first.ProcessBatch(ctx, line(bifrostChild))
	}()
	<-entered
	go func() { // reader B: another request held meanwhile
		defer close(bDone)
		_ = p.first.ProcessBatch(ctx, line(strings.Replace(bifrostParent, `"p-1"`, `"p-2"`, 1)))
	}()
	select {
	case <-bDone:
	case <-time.After(300 * time.Millisecond):
	}
	crashed := copyClient(t, client) // the crash: p-1 not emitted yet, A's batch not returned
	close(release)
	<-aDone
	<-bDone

	q := newHeldPipelineOn(t, 100, clock, crashed)
	q.feed(t, bifrostChild) // A's batch never returned: stanza reads it again
	recs := q.out.records(t)
	require.Len(t, recs, 1, "p-1 held again, its fallback row folds into it")
	assert.Equal(t, int64(3), recs[0].Attempts)
}

// failingBatches is a storage whose batches fail while fail is set.
type failingBatches struct {
	storage.Client
	fail atomic.Bool
}

func (c *failingBatches) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if c.fail.Load() {
		return errors.New("disk full")
	}
	return c.Client.Batch(ctx, ops...)
}

// TestStopWhoseSaveFailsKeepsTheJournal: the journal already holds every
// held request when a graceful stop's save (the compaction) fails. The stop
// emitted them as they are anyway, and the next start held them again from
// the journal, so the request came out twice: as an error at the stop, and
// folded with its fallback row after the start.
func TestStopWhoseSaveFailsKeepsTheJournal(t *testing.T) {
	client := &failingBatches{Client: storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")}
	clock := clockwork.NewFakeClock()
	p := newHeldPipelineOn(t, 100, clock, client)
	p.feed(t, bifrostParent)
	client.fail.Store(true)
	require.NoError(t, p.pipe.Stop())
	client.fail.Store(false)

	q := newHeldPipelineOn(t, 100, clock, client)
	q.feed(t, bifrostChild)
	recs := append(p.out.records(t), q.out.records(t)...)
	require.Len(t, recs, 1, "p-1 comes out once")
	assert.Equal(t, int64(3), recs[0].Attempts)
}

// FuzzHeldJournalRead: whatever the storage holds under the journal's keys
// (a torn write, an older layout, another program's bytes), a start reads
// it without a panic, holds at most max_pending requests of at most
// maxRowsPerRequest rows, and leaves a base that reads back to the same
// requests.
func FuzzHeldJournalRead(f *testing.F) {
	row, _ := json.Marshal([]heldOp{{ID: "p-1", Row: json.RawMessage(`{"entry":{"attributes":{"n":7}},"record":{"id":"p-1","own":2}}`), Deadline: time.Unix(100, 0)}})
	f.Add([]byte(`{"first":0,"next":1,"base_at":"1970-01-01T00:00:00Z","saved_at":"1970-01-01T00:01:00Z"}`), []byte(`[]`), row, []byte(nil))
	f.Add([]byte(nil), []byte(`[{"id":"p-1","remaining":1000000000,"primary":true,"rows":[{"entry":{"body":"x"},"record":{"id":"p-1"}}]}]`), []byte(nil), []byte(nil))
	f.Add([]byte(`{"first":0,"next":2}`), []byte(`null`), row, []byte(`[{"id":"p-1","remove":true},{"id":"p-1","row":{}}]`))
	f.Add([]byte(`{"first":-1,"next":9e18}`), []byte(`[{"id":"","rows":[{}]}]`), []byte(`{`), []byte(`[{"row":null}]`))
	f.Fuzz(func(t *testing.T, head, base, e0, e1 []byte) {
		client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
		ctx := context.Background()
		for k, v := range map[string][]byte{heldHeadKey: head, heldKey: base, heldEntryKey(0): e0, heldEntryKey(1): e1} {
			if v != nil {
				require.NoError(t, client.Set(ctx, mapOperatorType+"."+k, v))
			}
		}
		const maxPending = 8
		p := newHeldPipelineOn(t, maxPending, clockwork.NewFakeClock(), client)
		op := mapOpOf(t, p)
		held := op.fallbacks.pending()
		require.LessOrEqual(t, held, maxPending)
		op.fallbacks.mu.Lock()
		for _, h := range op.fallbacks.held {
			require.LessOrEqual(t, len(h.rows), maxRowsPerRequest)
		}
		op.fallbacks.mu.Unlock()
		// The base the start wrote reads back to the same requests.
		q := newHeldPipelineOn(t, maxPending, clockwork.NewFakeClock(), copyClient(t, client))
		qop := mapOpOf(t, q)
		require.Equal(t, held, qop.fallbacks.pending())
	})
}

// mapOpOf is the pipeline's mapping operator.
func mapOpOf(t *testing.T, p *heldPipeline) *mapOperator {
	t.Helper()
	for _, o := range p.pipe.Operators() {
		if m, ok := o.(*mapOperator); ok {
			return m
		}
	}
	t.Fatal("no mapping operator")
	return nil
}

// TestHeldJournalHeadNamingTooManyEntries: a head naming a quadrillion
// entries (not one this receiver wrote) is not read entry by entry: the
// start reads the base and goes on at once.
func TestHeldJournalHeadNamingTooManyEntries(t *testing.T) {
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	require.NoError(t, client.Set(context.Background(), mapOperatorType+"."+heldHeadKey, []byte(`{"first":0,"next":1000000000000000}`)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		newHeldPipelineOn(t, 8, clockwork.NewFakeClock(), client)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the start is still reading the journal")
	}
}
