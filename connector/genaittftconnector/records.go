package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/owntel"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// The traces→logs output (docs/architecture.md §7, scale-out): the first tier
// assembles whole traces and derives one record per call; each record leaves
// as one small log record that carries the ttft.* record and the resolved
// dimensions, so a load_balancing exporter keyed on those dimensions sends
// every record of a target to the one instance that aggregates it, and that
// instance's logs→metrics input reads the record back as it was derived.

// RecordEventName names the emitted log records.
const RecordEventName = "ttft.request"

// serviceNameKey is the only resource attribute a record keeps: enough to
// say where it came from, small enough not to travel with every record.
const serviceNameKey = "service.name"

// RecordsConfig configures the traces→logs output.
type RecordsConfig struct {
	// RememberCalls is how many span ids of emitted calls are remembered to
	// catch a call whose spans arrive in more than one batch (a span that
	// outlived groupbytrace's wait, or a batch delivered twice): its later
	// part is counted and not emitted again. 0 turns the memory off.
	RememberCalls int `mapstructure:"remember_calls"`
	// RememberFor is how long an emitted call is remembered.
	RememberFor time.Duration `mapstructure:"remember_for"`
}

func defaultRecordsConfig() RecordsConfig {
	return RecordsConfig{RememberCalls: 100_000, RememberFor: 2 * time.Minute}
}

func (c *RecordsConfig) validate() []error {
	var errs []error
	if c.RememberCalls < 0 {
		errs = append(errs, fmt.Errorf("records::remember_calls must be >= 0 (0 turns the memory off), e.g. 100000 (got %d)", c.RememberCalls))
	}
	if c.RememberCalls > 0 && c.RememberFor <= 0 {
		errs = append(errs, fmt.Errorf("records::remember_for must be > 0 when records::remember_calls is set, e.g. 2m (got %v)", c.RememberFor))
	}
	return errs
}

// recordsConnector turns spans into one log record per call.
type recordsConnector struct {
	cfg     *Config
	deriver *derive.Deriver
	dims    []dimension
	isDim   map[string]bool
	next    consumer.Logs
	clock   clockwork.Clock
	tel     *recordsTelemetry
	skipTel *telemetry
	logger  *zap.Logger
	limiter *owntel.WarnLimiter

	mu    sync.Mutex
	calls *callMemory // nil when records::remember_calls is 0

	pending sync.Pool
}

func createTracesToLogs(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	c := cfg.(*Config)
	d, err := derive.New(c.Derive, c.deriveOptions()...)
	if err != nil {
		return nil, err
	}
	tel, err := newRecordsTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	skipTel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	rc := &recordsConnector{
		cfg: c, deriver: d, dims: newDimensions(c.Dimensions), isDim: map[string]bool{},
		next: next, clock: clockwork.FromContext(ctx), tel: tel, skipTel: skipTel,
		logger: set.Logger, limiter: owntel.NewWarnLimiter(logInterval),
	}
	for _, n := range c.Dimensions {
		rc.isDim[n] = true
	}
	if c.Records.RememberCalls > 0 {
		rc.calls = newCallMemory(c.Records.RememberCalls, c.Records.RememberFor)
	}
	return rc, nil
}

func (*recordsConnector) Start(context.Context, component.Host) error { return nil }

func (*recordsConnector) Shutdown(context.Context) error { return nil }

func (*recordsConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// call is one record of a batch with the span it came from.
type call struct {
	rec        record.Record
	span       ptrace.Span
	res        pcommon.Resource
	resFP      uint64
	trace      pcommon.TraceID
	id, parent pcommon.SpanID
}

type callBatch struct {
	calls  []call
	nested []nestedSpan
	undo   []memUndo // what this batch changed in the call memory
	// up indexes the batch's spans, built once a batch needs it (upBuilt).
	up      spanIndex
	upBuilt bool
}

// ancestor is a span's parent and resource, for the walk up from a call.
type ancestor struct {
	parent pcommon.SpanID
	resFP  uint64
}

// maxAncestorHops bounds the walk up from a call (derive's own bound on the
// walk to an enclosing call).
const maxAncestorHops = 256

// spanIndex is a batch's spans by trace and span id, for the walk up from
// a call: an open-addressing table sized to the batch and kept for the
// next one (a map insert per span cost 480 instructions, this ~100). Keys
// are hashed with a seed of the process's (maphash), so a sender cannot
// pick span ids that collide.
type spanIndex struct {
	seed  maphash.Seed
	slots []spanSlot
}

type spanSlot struct {
	key  callKey
	anc  ancestor
	full bool
}

// build indexes every span of td.
func (x *spanIndex) build(td ptrace.Traces, fps *resourceFingerprints) {
	size := 16
	for n := td.SpanCount(); size < 2*n; size <<= 1 {
	}
	if cap(x.slots) >= size {
		x.slots = x.slots[:size]
		clear(x.slots)
	} else {
		if x.slots == nil {
			x.seed = maphash.MakeSeed()
		}
		x.slots = make([]spanSlot, size)
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		fp := fps.of(rs.Resource())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				x.put(callKey{span.TraceID(), span.SpanID()}, ancestor{span.ParentSpanID(), fp})
			}
		}
	}
}

func (x *spanIndex) slot(k callKey) int {
	mask := len(x.slots) - 1
	i := int(maphash.Comparable(x.seed, k)) & mask
	for x.slots[i].full && x.slots[i].key != k {
		i = (i + 1) & mask
	}
	return i
}

func (x *spanIndex) put(k callKey, a ancestor) {
	x.slots[x.slot(k)] = spanSlot{key: k, anc: a, full: true}
}

func (x *spanIndex) get(k callKey) (ancestor, bool) {
	s := &x.slots[x.slot(k)]
	return s.anc, s.full
}

type nestedSpan struct {
	key   callKey
	resFP uint64
}

// ConsumeTraces derives the batch, drops the later parts of calls already
// emitted, and sends one log record per remaining call.
func (c *recordsConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	b, _ := c.pending.Get().(*callBatch)
	if b == nil {
		b = &callBatch{}
	}
	defer func() {
		clear(b.calls)
		b.calls, b.nested, b.undo = b.calls[:0], b.nested[:0], b.undo[:0]
		b.upBuilt = false
		c.pending.Put(b)
	}()
	var fps resourceFingerprints
	ds := c.deriver.TracesWith(td, derive.TraceVisitor{
		Record: func(res pcommon.Resource, span ptrace.Span, rec *record.Record) {
			b.calls = append(b.calls, call{rec: *rec, span: span, res: res, resFP: fps.of(res),
				trace: span.TraceID(), id: span.SpanID(), parent: span.ParentSpanID()})
		},
		Nested: func(res pcommon.Resource, span ptrace.Span, _ pcommon.SpanID) {
			b.nested = append(b.nested, nestedSpan{callKey{span.TraceID(), span.SpanID()}, fps.of(res)})
		},
		// Folded upstream (the processor marked it ttft.nested_in): as
		// much a part of an emitted call as one folded here.
		RereadNested: func(res pcommon.Resource, span ptrace.Span) {
			b.nested = append(b.nested, nestedSpan{callKey{span.TraceID(), span.SpanID()}, fps.of(res)})
		},
	})

	var split [numSplitParts]int64
	keep := b.calls
	if c.calls != nil {
		keep = keep[:0]
		c.mu.Lock()
		now := c.clock.Now()
		c.calls.expire(now)
		add := func(k callKey, flag uint8, res uint64) {
			b.undo = append(b.undo, c.calls.add(now, k, flag, res))
		}
		for i := range b.calls {
			it := b.calls[i]
			if part, seen := c.calls.seen(it.trace, it.id, it.parent, it.resFP); seen {
				split[part]++
				if part == splitRepeat {
					// Retries may go on for longer than remember_for. Not
					// undone: the call was emitted, whatever becomes of
					// this batch.
					c.calls.add(now, callKey{it.trace, it.id}, flagCall, it.resFP)
				}
				continue
			}
			add(callKey{it.trace, it.id}, flagCall, it.resFP)
			if !it.parent.IsEmpty() {
				add(callKey{it.trace, it.parent}, flagParent, it.resFP)
				// derive finds a call's enclosing call through spans that
				// are no calls (an HTTP client span, a gateway's plugin
				// spans). Where the parent is such a span of the batch,
				// walk up through them and remember the first ancestor the
				// batch lacks: an enclosing call that comes later is then
				// known as this one's. The spans of the batch on the way
				// are no calls, and need no place in the memory.
				if !b.upBuilt {
					b.up.build(td, &fps)
					b.upBuilt = true
				}
				// a is the span at the current hop; each span is looked up once.
				a, ok := b.up.get(callKey{it.trace, it.parent}) // not in the batch: remembered above
				for hop := 0; ok && hop < maxAncestorHops; hop++ {
					if a.resFP != it.resFP || a.parent.IsEmpty() {
						break // another resource's span, or a root
					}
					next, inBatch := b.up.get(callKey{it.trace, a.parent})
					if !inBatch {
						add(callKey{it.trace, a.parent}, flagParent, it.resFP)
						break
					}
					a = next
				}
			}
			keep = append(keep, it)
		}
		for _, n := range b.nested {
			add(n.key, flagCall, n.resFP)
		}
		c.mu.Unlock()
	}

	if len(keep) > 0 {
		if err := c.next.ConsumeLogs(ctx, c.buildLogs(keep)); err != nil {
			// The sender retries a refused batch: forget what it added,
			// or the retry's calls would all be dropped as repeats.
			if len(b.undo) > 0 {
				c.mu.Lock()
				c.calls.undo(b.undo)
				c.mu.Unlock()
			}
			return err
		}
	}
	// Counted once the batch is taken, so a retry does not count twice.
	var st batchStats
	for _, r := range []derive.Reason{derive.ReasonNotGenAI, derive.ReasonScopeSkipped, derive.ReasonSpanLog, derive.ReasonUnstamped} {
		st.skip(r.String(), ds.Skipped[r])
	}
	st.skip("nested", ds.Nested)
	// Records read back that broke a bound or closed set, derived afresh
	// (invalid_records{reason}), counted and logged as the traces→metrics
	// path does.
	var invalid int64
	for why, n := range ds.Invalid {
		st.invalid[why] += n
		invalid += n
	}
	if invalid > 0 {
		if c.limiter.Allow(c.clock.Now(), "invalid_record") {
			c.logger.Warn("Records whose ttft.* attributes break a bound or closed set were not used as they are: each was derived afresh from its own evidence",
				zap.String("signal", "traces"), zap.Int64("count", invalid))
		} else {
			st.logsLimited++
		}
	}
	c.skipTel.report(ctx, "traces", &st)
	c.skipTel.reportEvidence(ctx, "traces", &ds)
	c.tel.report(ctx, ds.Reread, int64(len(keep)), &split)
	return nil
}

// buildLogs writes one log record per call, grouped by the resource the
// spans came from.
func (c *recordsConnector) buildLogs(calls []call) plog.Logs {
	ld := plog.NewLogs()
	now := pcommon.NewTimestampFromTime(c.clock.Now())
	res := newResourceDims(len(c.dims))
	vals := make([]string, len(c.dims))
	var lrs plog.LogRecordSlice
	var last pcommon.Map
	for i := range calls {
		it := &calls[i]
		resAttrs := it.res.Attributes()
		if i == 0 || resAttrs != last {
			last = resAttrs
			res.use(resAttrs)
			rl := ld.ResourceLogs().AppendEmpty()
			if v, ok := resAttrs.Get(serviceNameKey); ok && !c.isDim[serviceNameKey] {
				v.CopyTo(rl.Resource().Attributes().PutEmpty(serviceNameKey))
			}
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(metadata.ScopeName)
			lrs = sl.LogRecords()
		}
		lr := lrs.AppendEmpty()
		lr.SetEventName(RecordEventName)
		lr.SetTimestamp(it.span.EndTimestamp())
		lr.SetObservedTimestamp(now)
		lr.SetTraceID(it.trace)
		lr.SetSpanID(it.id)
		attrs := lr.Attributes()
		it.rec.Write(attrs)
		// The values the aggregating tier will key the series on, resolved
		// here where the span and its resource are at hand, and cut as that
		// tier cuts them, so the load balancer routes on the series key.
		dimValues(c.dims, &it.rec, it.span.Attributes(), res, vals)
		for j, d := range c.dims {
			if vals[j] != "" {
				attrs.PutStr(d.name, vals[j])
			}
		}
	}
	res.forget()
	return ld
}

// Parts of a call seen in more than one batch.
const (
	splitInner  = iota // a GenAI span whose enclosing call was already emitted
	splitOuter         // the enclosing span of a call already emitted
	splitRepeat        // a span already emitted (a batch delivered twice)
	numSplitParts
)

var splitPartNames = [numSplitParts]string{"inner", "outer", "repeat"}

const (
	flagCall   uint8 = 1 << iota // the span carried or was folded into an emitted record
	flagParent                   // the span is the parent of an emitted record's span
)

// callKey identifies a span across batches.
type callKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

type memSlot struct {
	key callKey
	at  time.Time
}

type memEntry struct {
	flags uint8
	slot  uint64 // the ring position that owns the entry
	// callRes is the resource of the call span (flagCall); childRes that of
	// the first emitted call below this span (flagParent). derive never
	// folds across resources, so neither may the memory.
	callRes, childRes uint64
}

// callMemory remembers span ids of emitted calls for a while, in at most
// capacity entries (a ring: the oldest go first, whatever their age).
type callMemory struct {
	ttl      time.Duration
	capacity int
	ring     []memSlot
	head     uint64 // next ring position to write
	tail     uint64 // oldest live ring position
	entries  map[callKey]memEntry
}

func newCallMemory(capacity int, ttl time.Duration) *callMemory {
	return &callMemory{ttl: ttl, capacity: capacity, entries: map[callKey]memEntry{}}
}

// seen says whether span id of trace (with parent, in the resource res)
// belongs to a call already emitted, and which part of it it is.
func (m *callMemory) seen(trace pcommon.TraceID, id, parent pcommon.SpanID, res uint64) (int, bool) {
	e := m.entries[callKey{trace, id}]
	if e.flags&flagCall != 0 {
		return splitRepeat, true
	}
	if !parent.IsEmpty() {
		// derive folds a GenAI span into its GenAI parent of the same
		// resource: had both come in one batch, this span would have been
		// nested in that call.
		if p := m.entries[callKey{trace, parent}]; p.flags&flagCall != 0 && p.callRes == res {
			return splitInner, true
		}
	}
	if e.flags&flagParent != 0 && e.childRes == res {
		return splitOuter, true
	}
	return 0, false
}

// memUndo is what one add changed: the entry of key before, and the ring
// position the add gave it.
type memUndo struct {
	key  callKey
	prev memEntry
	had  bool
	pos  uint64
}

// undo takes back adds, latest first. An entry a later add (of another
// batch) owns now stays as that add left it.
func (m *callMemory) undo(us []memUndo) {
	for i := len(us) - 1; i >= 0; i-- {
		u := &us[i]
		e, ok := m.entries[u.key]
		if !ok || e.slot != u.pos {
			continue
		}
		if !u.had || u.prev.slot < m.tail {
			// New with this add, or its earlier position has gone.
			delete(m.entries, u.key)
			continue
		}
		m.entries[u.key] = u.prev
	}
}

func (m *callMemory) add(now time.Time, k callKey, flag uint8, res uint64) memUndo {
	if m.head-m.tail == uint64(len(m.ring)) {
		if len(m.ring) < m.capacity {
			m.grow()
		} else {
			m.evict()
		}
	}
	pos := m.head
	m.head++
	m.ring[pos%uint64(len(m.ring))] = memSlot{key: k, at: now}
	u := memUndo{key: k, pos: pos}
	u.prev, u.had = m.entries[k]
	e := u.prev
	switch {
	case flag == flagCall:
		e.callRes = res
	case e.flags&flagParent == 0:
		e.childRes = res
	}
	e.flags |= flag
	e.slot = pos
	m.entries[k] = e
	return u
}

// resourceFingerprints hashes each resource of a batch once. Attribute
// order does not matter: the same resource exported twice may order them
// differently.
type resourceFingerprints struct {
	last pcommon.Map
	fp   uint64
	set  bool
}

func (r *resourceFingerprints) of(res pcommon.Resource) uint64 {
	attrs := res.Attributes()
	if r.set && attrs == r.last {
		return r.fp
	}
	var fp uint64
	for k, v := range attrs.All() {
		fp += fnv64(fnv64(fnvOffset, k)^0xff, v.AsString()) // a sum: independent of order
	}
	r.last, r.fp, r.set = attrs, fp, true
	return fp
}

const fnvOffset = 14695981039346656037

// fnv64 is FNV-1a over s, from h.
func fnv64(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// grow doubles the ring (up to capacity), so a connector that never
// remembers anything holds nothing. Positions are absolute: each live one
// lands in its own place of the larger ring.
func (m *callMemory) grow() {
	ring := make([]memSlot, min(max(2*len(m.ring), 1024), m.capacity))
	for p := m.tail; p < m.head; p++ {
		ring[p%uint64(len(ring))] = m.ring[p%uint64(len(m.ring))]
	}
	m.ring = ring
}

// evict drops the oldest ring position (and its entry, unless a later
// position owns the key now).
func (m *callMemory) evict() {
	if m.tail == m.head {
		return
	}
	s := &m.ring[m.tail%uint64(len(m.ring))]
	if e, ok := m.entries[s.key]; ok && e.slot == m.tail {
		delete(m.entries, s.key)
	}
	*s = memSlot{}
	m.tail++
}

func (m *callMemory) expire(now time.Time) {
	for m.tail < m.head && now.Sub(m.ring[m.tail%uint64(len(m.ring))].at) > m.ttl {
		m.evict()
	}
}

func (m *callMemory) len() int { return len(m.entries) }

// repeatFilter drops records the logs→metrics input already aggregated: a
// load_balancing exporter retries a whole batch when one backend failed, so
// the backends that took their part get it again. A record the
// traces→logs output emitted names its call by trace and span id; other log
// records have no identity and pass.
type repeatFilter struct {
	clock clockwork.Clock
	mu    sync.Mutex
	mem   *callMemory
	count metric.Int64Counter
	attrs []metric.AddOption
}

// newRepeatFilter returns nil when records::remember_calls is 0.
func newRepeatFilter(set component.TelemetrySettings, cfg RecordsConfig, clock clockwork.Clock) (*repeatFilter, error) {
	if cfg.RememberCalls == 0 {
		return nil, nil
	}
	count, err := newSplitCounter(set)
	if err != nil {
		return nil, err
	}
	return &repeatFilter{clock: clock, mem: newCallMemory(cfg.RememberCalls, cfg.RememberFor), count: count,
		attrs: owntel.AddOpts(attribute.String("part", splitPartNames[splitRepeat]))}, nil
}

// seenBefore reports whether this record was aggregated before; a record
// seen again is remembered afresh, so retries that go on for longer than
// records::remember_for are still caught.
func (f *repeatFilter) seenBefore(ctx context.Context, lr plog.LogRecord) bool {
	if f == nil || lr.SpanID().IsEmpty() {
		return false
	}
	k := callKey{lr.TraceID(), lr.SpanID()}
	f.mu.Lock()
	now := f.clock.Now()
	f.mem.expire(now)
	seen := f.mem.entries[k].flags&flagCall != 0
	f.mem.add(now, k, flagCall, 0)
	f.mu.Unlock()
	if seen {
		f.count.Add(ctx, 1, f.attrs...)
	}
	return seen
}

// recordsTelemetry is the own telemetry of the scale-out paths.
type recordsTelemetry struct {
	reread  metric.Int64Counter
	emitted metric.Int64Counter
	split   metric.Int64Counter

	traces    []metric.AddOption
	partAttrs [numSplitParts][]metric.AddOption
}

func newRecordsTelemetry(set component.TelemetrySettings) (*recordsTelemetry, error) {
	t := &recordsTelemetry{traces: owntel.AddOpts(attribute.String("signal", "traces"))}
	err := owntel.Instruments(set.MeterProvider.Meter(metadata.ScopeName), metadataYAML, map[string]*metric.Int64Counter{
		"connector_genai_ttft_records_reread":  &t.reread,
		"connector_genai_ttft_records_emitted": &t.emitted,
		"connector_genai_ttft_split_calls":     &t.split,
	}, nil)
	for i, n := range splitPartNames {
		t.partAttrs[i] = owntel.AddOpts(attribute.String("part", n))
	}
	return t, err
}

func (t *recordsTelemetry) report(ctx context.Context, reread, emitted int64, split *[numSplitParts]int64) {
	if reread > 0 {
		t.reread.Add(ctx, reread, t.traces...)
	}
	if emitted > 0 {
		t.emitted.Add(ctx, emitted)
	}
	for p, n := range split {
		if n > 0 {
			t.split.Add(ctx, n, t.partAttrs[p]...)
		}
	}
}

func newSplitCounter(set component.TelemetrySettings) (metric.Int64Counter, error) {
	return newCounter(set, "connector_genai_ttft_split_calls")
}

// newRereadCounter counts records that arrived already derived, with their
// nested spans already folded upstream, and were read back, not derived.
func newRereadCounter(set component.TelemetrySettings) (metric.Int64Counter, error) {
	return newCounter(set, "connector_genai_ttft_records_reread")
}

// newCounter is the counter metadata.yaml lists under name.
func newCounter(set component.TelemetrySettings, name string) (metric.Int64Counter, error) {
	var c metric.Int64Counter
	err := owntel.Instruments(set.MeterProvider.Meter(metadata.ScopeName), metadataYAML,
		map[string]*metric.Int64Counter{name: &c}, nil)
	return c, err
}
