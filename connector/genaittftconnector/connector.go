package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/owntel"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// serviceInstanceIDKey is the collector's own resource attribute that
// identifies this instance (set by the service for every component).
const serviceInstanceIDKey = "service.instance.id"

// logInterval is how often one kind of warning may be logged.
const logInterval = time.Minute

// ttftConnector aggregates request records from traces and logs into the
// metrics of docs/architecture.md §6. One instance serves every signal of a configuration.
type ttftConnector struct {
	logger  *zap.Logger
	cfg     *Config
	clock   clockwork.Clock
	next    consumer.Metrics
	deriver *derive.Deriver
	tel     *telemetry
	limiter *owntel.WarnLimiter
	reread  metric.Int64Counter // records.go
	repeats *repeatFilter       // records.go

	mu  sync.Mutex
	agg *aggregator
	// flushMu keeps flushes apart: one releases mu between series.
	flushMu sync.Mutex
	// lastFlushHold is the longest the last flush held mu at a stretch.
	lastFlushHold time.Duration

	// pending holds a chunk of a batch's records between derivation (outside mu, so
	// concurrent pipelines derive in parallel) and aggregation (under mu).
	// One queue is kept in spare, which no garbage collection empties (the
	// derivation's scratch is kept the same way); more at once come from the
	// pool.
	spare   atomic.Pointer[pendingBatch]
	pending sync.Pool

	lifeMu  sync.Mutex
	started bool
	stopped bool
	done    chan struct{}
	// cancelLoop ends the flush loop's context: a send blocked in a
	// downstream retry ends with it when Shutdown stops the loop.
	cancelLoop context.CancelFunc
	wg         sync.WaitGroup
}

func newConnector(set connector.Settings, cfg *Config, clock clockwork.Clock, next consumer.Metrics) (*ttftConnector, error) {
	d, err := derive.New(cfg.Derive, cfg.deriveOptions()...)
	if err != nil {
		return nil, err
	}
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	agg, err := newAggregator(cfg, instanceID(set.Resource))
	if err != nil {
		return nil, err
	}
	reread, err := newRereadCounter(set.TelemetrySettings) // records.go
	if err != nil {
		return nil, err
	}
	repeats, err := newRepeatFilter(set.TelemetrySettings, cfg.Records, clock) // records.go
	if err != nil {
		return nil, err
	}
	agg.hin.started = clock.Now() // initial_value: auto counts no sample older than this
	return &ttftConnector{
		logger:  set.Logger,
		cfg:     cfg,
		clock:   clock,
		next:    next,
		deriver: d,
		tel:     tel,
		limiter: owntel.NewWarnLimiter(logInterval),
		agg:     agg,
		reread:  reread,
		repeats: repeats,
		done:    make(chan struct{}),
	}, nil
}

// instanceID identifies this collector so replicas write distinct series.
func instanceID(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get(serviceInstanceIDKey); ok && v.AsString() != "" {
		return v.AsString()
	}
	// The service always sets it; only bare test settings lack it.
	return uuid.NewString()
}

// Start begins the flush loop.
func (c *ttftConnector) Start(ctx context.Context, _ component.Host) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.started || c.stopped {
		return nil
	}
	c.started = true
	ticker := c.clock.NewTicker(c.cfg.FlushInterval)
	// Flushes outlive Start's context; Shutdown ends them, and cancels one
	// still blocked in a send after a grace (Shutdown).
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancelLoop = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer ticker.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-ticker.Chan():
				c.flush(loopCtx)
			}
		}
	}()
	return nil
}

// Shutdown stops the flush loop, then flushes once more: the collector
// shuts its pipelines down from the receivers on, so the exporters still run
// and take what was aggregated since the last tick (records whose input was
// already checkpointed or answered would otherwise be lost). It is
// idempotent and safe without Start.
func (c *ttftConnector) Shutdown(ctx context.Context) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	close(c.done)
	// A flush in flight may finish its send (a delta interval cancelled
	// mid-send would be lost); one still blocked after the grace, in an
	// exporter retrying a refused export, is cancelled: the collector shuts
	// that exporter down only after this connector, so it would hold the
	// stop for its whole max_elapsed_time.
	loopDone := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(loopDone)
	}()
	grace := time.NewTimer(finalFlushTimeout)
	defer grace.Stop()
	select {
	case <-loopDone:
	case <-grace.C:
		if c.cancelLoop != nil {
			c.cancelLoop()
		}
		<-loopDone
	}
	if c.cancelLoop != nil {
		c.cancelLoop()
	}
	if c.started {
		// The collector shuts down with context.Background(): bound the
		// last send, or a refusing backend holds the whole stop for the
		// exporter's retry time.
		fctx, cancel := context.WithTimeout(ctx, max(c.cfg.FlushInterval, finalFlushTimeout))
		defer cancel()
		c.flush(fctx)
	}
	return nil
}

// finalFlushTimeout is how long Shutdown lets the loop's flush in flight
// finish, and the least time the flush at Shutdown may take to send.
const finalFlushTimeout = 5 * time.Second

// Capabilities implements consumer.Traces and consumer.Logs.
func (*ttftConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// derived is one record of a batch with the attributes its dimensions may
// come from.
type derived struct {
	rec        record.Record
	attrs, res pcommon.Map
}

// pendingBatch is a batch's queue of derived records. used is how many of
// its slots the batch filled: they hold references into the batch until
// release clears them, and a batch of a few spans clears only those, not
// the whole queue (BenchmarkConsumeSmallBatches).
type pendingBatch struct {
	items []derived
	used  int
}

// chunkRecords is how many derived records wait for the lock at most: a
// chunk (~20 KB) stays in the CPU's cache between derivation and
// aggregation, where a whole batch's records (320 KB for 1,000) would push
// the series out of it.
const chunkRecords = 64

func (c *ttftConnector) takePending() *pendingBatch {
	if p := c.spare.Swap(nil); p != nil {
		return p
	}
	if p, ok := c.pending.Get().(*pendingBatch); ok {
		return p
	}
	return &pendingBatch{items: make([]derived, 0, chunkRecords)}
}

// add queues a derived record and aggregates the queue once it is a chunk.
func (c *ttftConnector) add(p *pendingBatch, st *batchStats, rec *record.Record, attrs, res pcommon.Map) {
	// Filled in place, every field: a composite literal would be copied
	// twice, and a zeroed slot written twice.
	n := len(p.items)
	if n == cap(p.items) {
		p.items = append(p.items, derived{})
	} else {
		p.items = p.items[:n+1]
	}
	it := &p.items[n]
	it.rec, it.attrs, it.res = *rec, attrs, res
	if len(p.items) >= chunkRecords {
		c.aggregate(p, st)
	}
}

// aggregate observes the queued records under the lock, then empties the
// queue (the next records overwrite its slots).
func (c *ttftConnector) aggregate(p *pendingBatch, st *batchStats) {
	if len(p.items) == 0 {
		return
	}
	c.mu.Lock()
	now := c.clock.Now()
	for i := range p.items {
		it := &p.items[i]
		c.agg.observe(&it.rec, it.attrs, it.res, now, st)
	}
	c.agg.tgt.res.forget()
	c.mu.Unlock()
	p.used = max(p.used, len(p.items))
	p.items = p.items[:0]
}

// release aggregates what is left of a batch and returns the queue with
// nothing of the batch left in it.
func (c *ttftConnector) release(p *pendingBatch, st *batchStats) {
	c.aggregate(p, st)
	clear(p.items[:p.used])
	p.used = 0
	if c.spare.CompareAndSwap(nil, p) {
		return
	}
	c.pending.Put(p)
}

// warnDue says whether the warning of key is due now; one it holds back is
// counted in st (logs_rate_limited). The caller builds the warning's fields
// only when it is due: they escape to the logger, so building them for a
// warning then dropped would cost every such batch an allocation.
func (c *ttftConnector) warnDue(now time.Time, key string, st *batchStats) bool {
	if c.limiter.Allow(now, key) {
		return true
	}
	st.logsLimited++
	return false
}

// ConsumeTraces aggregates the request records of a batch of spans.
func (c *ttftConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var st batchStats
	p := c.takePending()
	ds := c.deriver.Traces(td, func(res pcommon.Resource, span ptrace.Span, rec *record.Record) {
		c.add(p, &st, rec, span.Attributes(), res.Attributes())
	})
	c.release(p, &st)
	c.finishBatch(ctx, "traces", &ds, &st)
	return nil
}

// ConsumeLogs aggregates the request records of a batch of log records.
func (c *ttftConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	var st batchStats
	p := c.takePending()
	add := func(res pcommon.Resource, lr plog.LogRecord, rec *record.Record) {
		c.add(p, &st, rec, lr.Attributes(), res.Attributes())
	}
	ds := c.deriver.LogsWith(ld, derive.LogVisitor{
		Record: add,
		Reread: func(res pcommon.Resource, lr plog.LogRecord, rec *record.Record) {
			if c.repeats.seenBefore(ctx, lr) { // records.go: a record read back names its call
				return
			}
			add(res, lr, rec)
		},
	})
	c.release(p, &st)
	c.finishBatch(ctx, "logs", &ds, &st)
	return nil
}

// finishBatch reports a batch to own telemetry and logs what went wrong,
// outside the lock.
func (c *ttftConnector) finishBatch(ctx context.Context, signal string, ds *derive.Stats, st *batchStats) {
	// Reasons that still produce a record (not streamed, no evidence, ...)
	// were counted by observe, or aggregated; only those without one count here.
	for _, r := range []derive.Reason{derive.ReasonNotGenAI, derive.ReasonSpanLog, derive.ReasonUnstamped, derive.ReasonScopeSkipped} {
		st.skip(r.String(), ds.Skipped[r])
	}
	now := c.clock.Now()
	if n := ds.Skipped[derive.ReasonUnstamped]; n > 0 && c.warnDue(now, "unstamped", st) {
		c.logger.Warn("stamped_only is set, but spans or log records that look like LLM calls arrive without a ttft.* record: put the genai_ttft processor in front of this connector on every pipeline that feeds it, or unset stamped_only",
			zap.String("signal", signal), zap.Int64("sampled", n))
	}
	st.skip("nested", ds.Nested)
	var invalid int64
	for why, n := range ds.Invalid {
		st.invalid[why] += n
		invalid += n
	}
	if invalid > 0 && c.warnDue(now, "invalid_record", st) {
		c.logger.Warn("Records whose ttft.* attributes break a bound or closed set were not used as they are: each was derived afresh from its own evidence, or skipped where it has none (a log record of a call, as traces->logs writes it, is counted skipped{reason=span_log})",
			zap.String("signal", signal), zap.Int64("count", invalid))
	}
	var overflowed int64
	for _, n := range st.overflowed {
		overflowed += n
	}
	if overflowed > 0 && c.warnDue(now, "overflow", st) {
		c.logger.Warn("aggregation_cardinality_limit reached: records go to the otel.metric.overflow series",
			zap.Int("limit", c.cfg.AggregationCardinalityLimit), zap.Int64("records", overflowed))
	}
	c.tel.report(ctx, signal, st)
	c.tel.reportEvidence(ctx, signal, ds)
	if ds.Reread > 0 {
		c.reread.Add(ctx, ds.Reread, c.tel.attrs(attrPair{k1: "signal", v1: signal})...)
	}
}

// flush builds the metrics under the lock, letting ingest in between series,
// and sends them outside it.
func (c *ttftConnector) flush(ctx context.Context) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	pause := &pauser{last: time.Now()}
	now := c.clock.Now()
	c.agg.expire(now)
	counts := c.agg.seriesCounts()
	pause.release = func() {
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	md := c.agg.build(now, pause)
	outOfRange := c.agg.windows.takeOutOfRange()
	c.lastFlushHold = max(pause.longest, time.Since(pause.last))
	c.mu.Unlock()

	if outOfRange > 0 {
		c.tel.outOfRange.Add(ctx, int64(outOfRange))
	}

	c.tel.reportSeries(ctx, counts)
	if md.DataPointCount() == 0 {
		return
	}
	if err := c.next.ConsumeMetrics(ctx, md); err != nil {
		c.tel.refused.Add(ctx, int64(md.DataPointCount()))
		if c.limiter.Warn(c.logger, now, "consume", "Failed to send metrics", zap.Error(err)) {
			c.tel.rateLimited.Add(ctx, 1)
		}
	}
}
