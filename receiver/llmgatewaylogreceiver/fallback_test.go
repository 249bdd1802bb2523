package llmgatewaylogreceiver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"
)

// lockedCapture collects emitted entries; held requests are released from
// the mapping's own goroutine too.
type lockedCapture struct {
	helper.OutputOperator
	mu  sync.Mutex
	got []*entry.Entry
	// gate, when set, runs before a batch is taken (outside mu): a test
	// holds an emit there.
	gate func()
}

func (c *lockedCapture) Process(_ context.Context, e *entry.Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, e)
	return nil
}

func (c *lockedCapture) ProcessBatch(_ context.Context, es []*entry.Entry) error {
	if c.gate != nil {
		c.gate()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, es...)
	return nil
}

func (c *lockedCapture) records(t *testing.T) []record.Record {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []record.Record
	for _, e := range c.got {
		attrs := pcommon.NewMap()
		require.NoError(t, attrs.FromRaw(e.Attributes))
		r, ok := recordtest.Read(attrs)
		require.True(t, ok, "%v", e.Attributes)
		out = append(out, r)
	}
	return out
}

// heldPipeline is the bifrost format's parser and mapping on a fake clock.
type heldPipeline struct {
	first  operator.Operator
	out    *lockedCapture
	pipe   pipeline.Pipeline
	clock  *clockwork.FakeClock
	reader *sdkmetric.ManualReader
	wait   time.Duration
}

func newHeldPipeline(t *testing.T, maxPending int) *heldPipeline {
	t.Helper()
	return newHeldPipelineOn(t, maxPending, clockwork.NewFakeClock(), nil)
}

// startPipeline runs the receiver's operators of cfg (after the file
// input) on client, into a capture output; the pipeline stops at cleanup.
func startPipeline(t *testing.T, cfg *Config, client storage.Client) (pipeline.Pipeline, *lockedCapture) {
	t.Helper()
	return startPipelineWith(t, cfg, client, componenttest.NewNopTelemetrySettings())
}

// startPipelineWith is startPipeline with the operators' telemetry set.
func startPipelineWith(t *testing.T, cfg *Config, client storage.Client, set component.TelemetrySettings) (pipeline.Pipeline, *lockedCapture) {
	t.Helper()
	ops, err := operators(cfg)
	require.NoError(t, err)
	o, err := helper.NewOutputConfig("capture", "capture").Build(set)
	require.NoError(t, err)
	out := &lockedCapture{OutputOperator: o}
	pipe, err := pipeline.Config{Operators: ops, DefaultOutput: out}.Build(set)
	require.NoError(t, err)
	require.NoError(t, pipe.Start(client))
	t.Cleanup(func() { _ = pipe.Stop() })
	return pipe, out
}

// newHeldPipelineOn is newHeldPipeline on clock, with client as the
// receiver's storage (nil: none configured).
func newHeldPipelineOn(t *testing.T, maxPending int, clock *clockwork.FakeClock, client storage.Client) *heldPipeline {
	t.Helper()
	cfg := createDefaultConfig()
	cfg.Format = FormatBifrost
	cfg.Fallbacks.MaxPending = maxPending
	cfg.clock = clock
	if client != nil {
		id := component.MustNewID("file_storage")
		cfg.StorageID = &id
	} else {
		client = storage.NewNopClient()
	}
	return startHeldPipeline(t, cfg, clock, client)
}

// startHeldPipeline runs cfg's operators on client with a metric reader
// on their telemetry, cfg's clock being clock.
func startHeldPipeline(t *testing.T, cfg *Config, clock *clockwork.FakeClock, client storage.Client) *heldPipeline {
	t.Helper()
	set := componenttest.NewNopTelemetrySettings()
	reader := sdkmetric.NewManualReader()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	pipe, out := startPipelineWith(t, cfg, client, set)
	return &heldPipeline{first: pipe.Operators()[0], out: out, pipe: pipe, clock: clock, reader: reader, wait: cfg.Fallbacks.Wait}
}

func (p *heldPipeline) feed(t *testing.T, lines ...string) {
	t.Helper()
	var es []*entry.Entry
	for _, l := range lines {
		e := entry.New()
		e.Body = l
		es = append(es, e)
	}
	require.NoError(t, p.first.ProcessBatch(context.Background(), es))
}

// expire moves the clock past the wait, once the sweeper is waiting on it.
func (p *heldPipeline) expire(t *testing.T) {
	t.Helper()
	require.NoError(t, p.clock.BlockUntilContext(context.Background(), 1))
	p.clock.Advance(p.wait + time.Second)
}

func (p *heldPipeline) waits(t *testing.T) map[string]int64 {
	return counterByAttr(t, p.reader, metricFallbackWaits, "result")
}

// Rows as Bifrost v1.5.11 logs a request that failed over: its own row
// (429, retried once) and the fallback attempt's row, linked by
// parent_request_id.
const (
	bifrostParent = `{"id":"p-1","parent_request_id":null,"timestamp":"2026-12-01T07:52:44.30573491Z","provider":"openai","model":"scn-http_429","number_of_retries":1,"fallback_index":0,"routing_rule_name":"ratelimit-guard","latency":119,"status":"error","stream":true,"error_details":{"status_code":429,"error":{"type":"requests","message":"Rate limit reached"}},"attempt_trail":[{"attempt":0,"fail_reason":"rate_limit_error"},{"attempt":1,"fail_reason":"rate_limit_error"}]}`
	bifrostChild  = `{"id":"c-1","parent_request_id":"p-1","timestamp":"2026-12-01T07:52:44.425359051Z","provider":"openai","model":"scn-normal","number_of_retries":0,"fallback_index":1,"routing_rule_name":"ratelimit-guard","latency":551,"status":"success","stream":true,"token_usage":{"prompt_tokens":1234,"completion_tokens":10},"attempt_trail":[{"attempt":0}]}`
	bifrostOK     = `{"id":"ok-1","parent_request_id":null,"timestamp":"2026-12-01T07:51:33.854766442Z","provider":"openai","model":"scn-normal","number_of_retries":0,"fallback_index":0,"latency":559,"status":"success","stream":true,"token_usage":{"prompt_tokens":1234,"completion_tokens":10},"attempt_trail":[{"attempt":0}]}`
)

func TestFallbackRowsFoldIntoOneRecordInEitherOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		batches [][]string
		records int
	}{
		"parent, then child":        {[][]string{{bifrostParent}, {bifrostChild}}, 1},
		"child, then parent":        {[][]string{{bifrostChild}, {bifrostParent}}, 1},
		"both in one batch":         {[][]string{{bifrostParent, bifrostChild}}, 1},
		"other requests in between": {[][]string{{bifrostParent}, {bifrostOK}, {bifrostChild}}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			p := newHeldPipeline(t, 100)
			for _, b := range tc.batches {
				p.feed(t, b...)
			}
			recs := p.out.records(t)
			require.Len(t, recs, tc.records, "the two rows of the request that failed over are one record")
			folded := recs[len(recs)-1]
			assert.Equal(t, int64(3), folded.Attempts, "429, its retry, and the fallback")
			assert.Equal(t, record.OutcomeComplete, folded.Outcome)
			assert.Equal(t, "scn-normal", folded.Model, "the attempt that served")
			assert.Equal(t, "ratelimit-guard", folded.Route)
			assert.InDelta(t, 0.670625, folded.Duration, 1e-6, "from the request's start to the fallback's end")
			assert.Empty(t, folded.MeasuredAt)
			assert.Equal(t, map[string]int64{waitMatched: 1}, p.waits(t))
			assert.Equal(t, map[string]int64{"": 1}, counterByAttr(t, p.reader, metricRowsFolded, "reason"))
			assert.Equal(t, map[string]int64{"": int64(tc.records + 1)}, counterByAttr(t, p.reader, metricRowsMapped, "reason"))
		})
	}
}

func TestFailedRowWithoutFallbackComesOutAfterTheWait(t *testing.T) {
	p := newHeldPipeline(t, 100)
	p.feed(t, bifrostParent, bifrostOK)
	require.Len(t, p.out.records(t), 1, "the failed row waits for a fallback row")
	p.expire(t)
	require.Eventually(t, func() bool { return len(p.out.records(t)) == 2 }, 10*time.Second, time.Millisecond)
	r := p.out.records(t)[1]
	assert.Equal(t, record.OutcomeError, r.Outcome)
	assert.Equal(t, int64(2), r.Attempts, "the 429 and its retry")
	assert.Equal(t, "scn-http_429", r.Model)
	assert.Equal(t, map[string]int64{waitExpired: 1}, p.waits(t))
}

func TestFallbackRowWhoseParentNeverComes(t *testing.T) {
	p := newHeldPipeline(t, 100)
	p.feed(t, bifrostChild)
	require.Empty(t, p.out.records(t), "a fallback row waits for its request's row")
	p.expire(t)
	require.Eventually(t, func() bool { return len(p.out.records(t)) == 1 }, 10*time.Second, time.Millisecond)
	r := p.out.records(t)[0]
	assert.Equal(t, record.OutcomeComplete, r.Outcome)
	assert.Equal(t, int64(2), r.Attempts, "at least one attempt on the provider before the fallback")
}

func TestHeldRequestsAreBounded(t *testing.T) {
	p := newHeldPipeline(t, 2)
	failed := func(id string) string {
		return `{"id":"` + id + `","timestamp":"2026-12-01T07:52:44Z","model":"m","latency":100,"status":"error","stream":true}`
	}
	p.feed(t, failed("a"), failed("b"))
	assert.Empty(t, p.out.records(t))
	p.feed(t, failed("c"))
	require.Len(t, p.out.records(t), 1, "the oldest held request is emitted as it is")
	assert.Equal(t, map[string]int64{waitEvicted: 1}, p.waits(t))

	// A file read twice holds the same first-attempt row again: the
	// earlier one is emitted rather than folded with its twin.
	p.feed(t, failed("b"))
	require.Len(t, p.out.records(t), 2)
	assert.Equal(t, map[string]int64{waitEvicted: 1, waitReplaced: 1}, p.waits(t))

	// One request id cannot hold rows without bound.
	var child []string
	for range maxRowsPerRequest + 1 {
		child = append(child, `{"id":"x","parent_request_id":"c","timestamp":"2026-12-01T07:52:45Z","latency":100,"status":"error","fallback_index":1}`)
	}
	p.feed(t, child...)
	assert.Equal(t, int64(2), p.waits(t)[waitEvicted])
}

func TestStopEmitsTheRowsStillHeld(t *testing.T) {
	p := newHeldPipeline(t, 100)
	p.feed(t, bifrostParent)
	require.Empty(t, p.out.records(t))
	require.NoError(t, p.pipe.Stop())
	recs := p.out.records(t)
	require.Len(t, recs, 1, "nothing read is lost on a graceful stop")
	assert.Equal(t, record.OutcomeError, recs[0].Outcome)
	assert.Equal(t, map[string]int64{waitStopped: 1}, p.waits(t))
}

// TestSavedHeldRowsResumeTheirWait: with storage, a stop saves the held
// request (its entry's attributes keep their types), the next start holds
// it again for what was left of its wait, and then it is emitted as it
// would have been without the restart. A saved state that does not read
// is dropped, with a warning, and the start goes on.
func TestSavedHeldRowsResumeTheirWait(t *testing.T) {
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	clock := clockwork.NewFakeClock()
	p := newHeldPipelineOn(t, 100, clock, client)
	e := entry.New()
	e.Body = bifrostParent
	e.Attributes = map[string]any{"n": int64(7), "team": "search"}
	require.NoError(t, p.first.ProcessBatch(context.Background(), []*entry.Entry{e}))
	clock.Advance(40 * time.Second)
	require.NoError(t, p.pipe.Stop())
	require.Empty(t, p.out.records(t), "saved, not emitted")
	assert.Equal(t, map[string]int64{waitSaved: 1}, p.waits(t))

	q := newHeldPipelineOn(t, 100, clock, client)
	require.NoError(t, clock.BlockUntilContext(context.Background(), 1))
	clock.Advance(15 * time.Second) // 20 s were left
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, q.out.records(t), "held again for what was left of its wait")
	clock.Advance(10 * time.Second)
	require.Eventually(t, func() bool { return len(q.out.records(t)) == 1 }, 5*time.Second, 5*time.Millisecond)
	rec := q.out.records(t)[0]
	assert.Equal(t, record.OutcomeError, rec.Outcome)
	assert.Equal(t, int64(2), rec.Attempts, "the 429 and its retry")
	assert.Equal(t, "scn-http_429", rec.Model)
	q.out.mu.Lock()
	attrs := q.out.got[0].Attributes
	q.out.mu.Unlock()
	assert.Equal(t, int64(7), attrs["n"], "an integer attribute is an integer again")
	assert.Equal(t, "search", attrs["team"])
	assert.Equal(t, map[string]int64{waitExpired: 1}, q.waits(t))
	// Emitted: the journal says so, and a start holds nothing again.
	r := newHeldPipelineOn(t, 100, clock, client)
	require.NoError(t, r.pipe.Stop())
	assert.Empty(t, r.out.records(t))
	assert.Empty(t, r.waits(t), "nothing held again, nothing saved")

	require.NoError(t, client.Set(context.Background(), mapOperatorType+"."+heldKey, []byte(`[{"id":"p-1","rows":[{"record":{"own":-5}}]}`)))
	require.NoError(t, client.Delete(context.Background(), mapOperatorType+"."+heldHeadKey))
	u := newHeldPipelineOn(t, 100, clock, client)
	require.NoError(t, u.pipe.Stop())
	assert.Empty(t, u.out.records(t))
	saved, err := client.Get(context.Background(), mapOperatorType+"."+heldKey)
	require.NoError(t, err)
	var left []savedRequest
	require.NoError(t, json.Unmarshal(saved, &left))
	assert.Empty(t, left, "a state that does not read is dropped")
}

// copyClient is the storage a crash leaves: what client holds now, in a
// client of its own (the crashed pipeline is never stopped).
func copyClient(t *testing.T, client *storagetest.TestClient) *storagetest.TestClient {
	t.Helper()
	c := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	require.NoError(t, client.Walk(context.Background(), func(k string, v []byte) ([]*storage.Operation, error) {
		require.NoError(t, c.Set(context.Background(), k, append([]byte(nil), v...)))
		return nil, nil
	}))
	return c
}

// TestCrashKeepsTheHeldRows: with storage, a crash (no stop) between a
// request's failed first row and its fallback row loses neither: the held
// rows are journaled as they change, so the start holds them again and the
// fallback row read then folds into one record. Before, only a graceful
// stop saved them: the failed row was lost and the fallback row became a
// record of its own. A held row stanza reads again after the crash (its
// checkpoint was older) is the same row, not a second attempt.
func TestCrashKeepsTheHeldRows(t *testing.T) {
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	clock := clockwork.NewFakeClock()
	p := newHeldPipelineOn(t, 100, clock, client)
	parent := func() *entry.Entry {
		e := entry.New()
		e.Body = bifrostParent
		e.Attributes = map[string]any{attrs.LogFilePath: "/logs/bifrost.jsonl", attrs.LogFileRecordNumber: int64(1)}
		return e
	}
	require.NoError(t, p.first.ProcessBatch(context.Background(), []*entry.Entry{parent()}))
	// Another request, held and then released before the crash: not held again.
	p.feed(t, strings.Replace(bifrostParent, `"p-1"`, `"p-2"`, 1), strings.NewReplacer(`"c-1"`, `"c-2"`, `"p-1"`, `"p-2"`).Replace(bifrostChild))
	require.Len(t, p.out.records(t), 1)
	clock.Advance(20 * time.Second)

	crashed := copyClient(t, client)
	for _, readAgain := range []bool{false, true} {
		q := newHeldPipelineOn(t, 100, clock, copyClient(t, crashed))
		if readAgain {
			require.NoError(t, q.first.ProcessBatch(context.Background(), []*entry.Entry{parent()}))
		}
		q.feed(t, bifrostChild)
		recs := q.out.records(t)
		require.Len(t, recs, 1, "one record for p-1, none for p-2 (read again: %v)", readAgain)
		assert.Equal(t, record.OutcomeComplete, recs[0].Outcome)
		assert.Equal(t, int64(3), recs[0].Attempts, "429, its retry, and the fallback")
		assert.True(t, recs[0].DidFailOver())
		assert.Equal(t, map[string]int64{waitMatched: 1}, q.waits(t))
		if readAgain {
			assert.Equal(t, map[string]int64{reasonAlreadyRead: 1}, counterByAttr(t, q.reader, metricRowsSkipped, "reason"))
		}
	}
}

// TestHeldJournalStaysBoundedAndReplays: 600 requests held one batch each,
// every other one completed by its fallback row, journaled through two
// compactions: a crash then holds again exactly the 300 still held, and
// the storage keeps at most compactEvery entries besides the base.
func TestHeldJournalStaysBoundedAndReplays(t *testing.T) {
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("file_storage"), "")
	clock := clockwork.NewFakeClock()
	p := newHeldPipelineOn(t, 1000, clock, client)
	for i := range 600 {
		id := "p-" + strconv.Itoa(i)
		p.feed(t, strings.Replace(bifrostParent, `"p-1"`, `"`+id+`"`, 1))
		if i%2 == 0 {
			p.feed(t, strings.NewReplacer(`"c-1"`, `"c-`+strconv.Itoa(i)+`"`, `"p-1"`, `"`+id+`"`).Replace(bifrostChild))
		}
	}
	require.Len(t, p.out.records(t), 300)
	entries := 0
	require.NoError(t, client.Walk(context.Background(), func(k string, _ []byte) ([]*storage.Operation, error) {
		if strings.HasPrefix(k, mapOperatorType+"."+heldEntryPrefix) {
			entries++
		}
		return nil, nil
	}))
	assert.LessOrEqual(t, entries, compactEvery)

	q := newHeldPipelineOn(t, 1000, clock, copyClient(t, client))
	q.feed(t, bifrostChild)
	recs := q.out.records(t)
	require.Len(t, recs, 1, "p-1 was still held: its fallback folds into it")
	assert.Equal(t, int64(3), recs[0].Attempts)
	require.NoError(t, q.pipe.Stop())
	assert.Equal(t, int64(299), q.waits(t)[waitSaved], "the other 299 held again, none of the 300 emitted")
}
