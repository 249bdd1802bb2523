package llmgatewaylogreceiver

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// TestSecondHeaderLineKeepsTheFirstChange: a file whose header changed
// twice (H1, then H2 at record 2, then H3 at record 4). Read again from
// record 3 (a crash: stanza's checkpoint and the resume mark were older
// than record 4), row 3 was taken for a row at or before the change's
// header line, the change ended, and row 3, written under H2, was read
// under H1: its prompt_tokens (1200) as its TTFT.
func TestSecondHeaderLineKeepsTheFirstChange(t *testing.T) {
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	h3 := "request_id,created_at,model,status,latency_ms,ttft_ms,prompt_tokens"
	lines := []string{
		"a-1,2026-11-30T00:00:01Z,m,ok,400,1600,1000",
		h2,
		"a-2,2026-11-30T00:00:02Z,m,ok,1200,1600,300",
		h3,
		"a-3,2026-11-30T00:00:03Z,m,ok,1600,250,1200",
	}
	pipe, out := startPipeline(t, createDefaultConfig(), storage.NewNopClient())
	feed := func(from, to int) {
		for n := from; n <= to; n++ {
			e := entry.New()
			e.Body = lines[n-1]
			e.Attributes = map[string]any{headerAttribute: h1, attrs.LogFilePath: "/logs/x.csv", attrs.LogFileRecordNumber: int64(n)}
			require.NoError(t, pipe.Operators()[0].ProcessBatch(context.Background(), []*entry.Entry{e}))
		}
	}
	feed(1, 5)
	feed(3, 5) // read again after a crash, from record 3
	var ttfts []float64
	for _, r := range out.records(t) {
		ttfts = append(ttfts, r.TimeToFirstContent)
	}
	assert.Equal(t, []float64{0.4, 0.3, 0.25, 0.3, 0.25}, ttfts, "row 3 is read under H2 both times")
}

// gatedHeaderSaves holds the first save of the header changes until
// release is closed.
type gatedHeaderSaves struct {
	storage.Client
	n                atomic.Int32
	entered, release chan struct{}
}

func (c *gatedHeaderSaves) Set(ctx context.Context, key string, v []byte) error {
	if strings.HasSuffix(key, headerChangesKey) {
		if c.n.Add(1) == 1 {
			close(c.entered)
			<-c.release
		}
	}
	return c.Client.Set(ctx, key, v)
}

// TestConcurrentHeaderChangesAreBothSaved: two files' header lines read at
// once (the file input reads files in parallel). Each saved its own
// snapshot of the changes, outside the lock that made it, so the older
// snapshot could be written last: after a restart the other file's rows
// were read under its first header, its prompt_tokens as its TTFT.
func TestConcurrentHeaderChangesAreBothSaved(t *testing.T) {
	h1 := "request_id,created_at,model,status,ttft_ms,latency_ms,prompt_tokens"
	h2 := "request_id,created_at,model,status,prompt_tokens,latency_ms,ttft_ms"
	mem := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	start := func(client storage.Client) (pipeline.Pipeline, *lockedCapture) {
		cfg := createDefaultConfig()
		id := component.MustNewID("file_storage")
		cfg.StorageID = &id
		return startPipeline(t, cfg, client)
	}
	row := func(path string, n int64, line string) []*entry.Entry {
		e := entry.New()
		e.Body = line
		e.Attributes = map[string]any{headerAttribute: h1, attrs.LogFilePath: path, attrs.LogFileRecordNumber: n}
		return []*entry.Entry{e}
	}
	gated := &gatedHeaderSaves{Client: mem, entered: make(chan struct{}), release: make(chan struct{})}
	pipe, _ := start(gated)
	ctx := context.Background()
	aDone, bDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(aDone)
		_ = pipe.Operators()[0].ProcessBatch(ctx, row("/logs/a.csv", 2, h2))
	}()
	<-gated.entered
	go func() {
		defer close(bDone)
		_ = pipe.Operators()[0].ProcessBatch(ctx, row("/logs/b.csv", 2, h2))
	}()
	select {
	case <-bDone:
	case <-time.After(300 * time.Millisecond):
	}
	close(gated.release)
	<-aDone
	<-bDone
	require.NoError(t, pipe.Stop())

	again, out := start(mem)
	for _, path := range []string{"/logs/a.csv", "/logs/b.csv"} {
		require.NoError(t, again.Operators()[0].ProcessBatch(ctx, row(path, 3, "x-1,2026-11-30T00:00:02Z,m,ok,1200,1600,300")))
	}
	var ttfts []float64
	for _, r := range out.records(t) {
		ttfts = append(ttfts, r.TimeToFirstContent)
	}
	assert.Equal(t, []float64{0.3, 0.3}, ttfts, "both files' rows after their header lines are read under the new header")
}
