package llmgatewaylogreceiver

import (
	"context"
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
