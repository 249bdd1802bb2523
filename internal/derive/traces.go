package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// TraceVisitor receives what Traces derives.
type TraceVisitor struct {
	// Record is called once per record-carrying span; rec is only valid
	// during the call.
	Record func(res pcommon.Resource, span ptrace.Span, rec *record.Record)
	// Reread, when set, is called instead of Record for a record read back
	// from ttft.* attributes stamped upstream (and valid), not derived here.
	Reread func(res pcommon.Resource, span ptrace.Span, rec *record.Record)
	// Nested, when set, is called once per GenAI span whose evidence was
	// folded into the record of an enclosing span (outer is that span's id).
	Nested func(res pcommon.Resource, span ptrace.Span, outer pcommon.SpanID)
	// RereadNested, when set, is called once per span read back with a
	// ttft.nested_in marker stamped upstream (skipped here, as every
	// nested span is).
	RereadNested func(res pcommon.Resource, span ptrace.Span)
}

// Traces derives one record per GenAI call in the batch. Spans already
// stamped (record.Stamped) are read with record.Read, not re-derived; spans
// marked record.Nested are skipped. Nested GenAI spans of one call (same
// trace, parent/child both GenAI) are folded: the OUTER span carries the
// record with the best evidence found on either. visit is called once per
// record-carrying span; rec is only valid during the call.
func (d *Deriver) Traces(td ptrace.Traces, visit func(res pcommon.Resource, span ptrace.Span, rec *record.Record)) Stats {
	return d.TracesWith(td, TraceVisitor{Record: visit})
}

func (v *TraceVisitor) reread() func(pcommon.Resource, ptrace.Span, *record.Record) {
	if v.Reread != nil {
		return v.Reread
	}
	return v.Record
}

// entry is one GenAI call span of the batch.
type entry struct {
	res    pcommon.Resource
	span   ptrace.Span
	trace  pcommon.TraceID
	id     pcommon.SpanID
	parent pcommon.SpanID
	ev     evidence

	resFP uint64 // resource fingerprint: folding never crosses resources

	parentIdx int32
	root      int32

	foldState // meaningful on roots
}

// foldState is what fold gathers on a root from every span of its call.
type foldState struct {
	contentFrom, chunkFrom, srvFrom int32
	lastInner                       int32 // latest-starting Vercel provider request
	failedInner                     int64
	// firstInnerStart is the earliest start of the call's Vercel provider
	// requests with valid timing (0: none): a TTFT read from a later one
	// (a retry) is put on its clock, so it includes the earlier attempts.
	firstInnerStart uint64
	// innerTarget is the provider and model of the first Vercel provider
	// request; innerRetarget: a later one went to another target.
	innerTarget                     [2]string
	innerTargeted                   bool
	innerRetarget                   bool
	inner                           int64 // Vercel provider requests
	stream                          tri
	prompt, cached, output          int64
	hasPrompt, hasCached, hasOutput bool
	// outputSeen: a span counted output that says content came (not the
	// Messages API's message_start placeholder of 1).
	outputSeen    bool
	maxGap        float64
	hasGap        bool
	contentChunks int64
	outcome       string
	// abandoned: a span of the call says the client walked away from the
	// stream (outcome closed, whatever another span's status says).
	abandoned bool
	// lastEnd is the latest end of the call's spans with valid timing: a
	// nested span may outlive its root (an instrumentation that ends its
	// span when it hands the stream back), and the call lasts until then.
	lastEnd uint64
	// longest is the longest own duration of the call's spans with valid
	// timing: a time folded from a span lies within that span's duration
	// (checkTimings), not always within the root's.
	longest uint64

	// Target fields from the nested spans, for a root that lacks them: the
	// first nested span (in batch order) that has each.
	nestedProvider, nestedModel, nestedRoute string
	// Over the root and its nested spans: a refused TTFT or span timing; a
	// "TTFT" refused for equalling the duration.
	invalidTiming, durationAsTTFT bool

	// Attempts of a gateway call: per fallback index, 1 + the most retries
	// seen (0: no attempt seen); the highest fallback index seen (-1: none).
	fallbackAttempts [maxFallbacks]int64
	maxFallback      int64
	// lastAttempt: the gateway attempt span with the highest fallback index
	// and retry count; earlier attempts were superseded (-1: none).
	lastAttempt int32
	// nestedClient: a CLIENT call span is folded into this root.
	nestedClient bool
}

// maxFallbacks bounds the fallback targets counted one by one; attempts on
// fallback indexes past it count one each.
const maxFallbacks = 16

// maxFallbackIndex caps a fallback index read from a span: no gateway tries
// more targets than this for one request.
const maxFallbackIndex = 1000

// scratch is per-call working memory, reused so a batch allocates nothing
// once warm. The Deriver keeps one spare across garbage collections (a
// sync.Pool alone is emptied by each one, and the next batch would grow a
// new scratch); concurrent calls take more from the pool.
type scratch struct {
	entries []entry
	index   map[pcommon.SpanID]int32 // by span id alone: hashing 8 bytes, not 24
	exact   map[spanKey]int32        // by both ids, built only for a batch where traces share span ids
	shared  bool                     // this batch looks spans up in exact
	// The spans of the batch that a walk through intermediate spans may
	// pass (those of a trace with a call whose parent is not a call in the
	// batch), built only when there is such a call.
	// Keyed by both ids: a sender may give every span of the batch one
	// span id, and a chain of same-id spans would make every hop of
	// every walk scan all of them.
	all      map[spanKey]int32
	allSpans []otherSpan
	walked   map[uint64]struct{} // traceKey of the traces all holds
	calls    map[uint64]int32    // calls of the batch per traceKey (markWalked)
	rec      record.Record       // handed to visitors; reused so it never escapes per span
	used     int                 // high-water mark of entries this call, cleared on release
	room     mapRoom             // the most entries each map has held since it was made
}

// mapRoom is, for each of a scratch's maps, the most entries it has held
// since it was made (reuse).
type mapRoom struct{ index, exact, all, walked, calls int }

// reuse empties m for a batch that puts at most want entries in it, and
// returns it; size is the room a new map is made with (want when the
// count is known, else 0). Go maps never shrink, and clear costs what a map
// has room for, not what it holds: after one batch of 8,192 calls every
// later batch would pay to clear that room (BenchmarkBatchAfterLarge). A
// map with room for more than eight times want, and more than 64 entries,
// is made anew instead, so emptying stays within a constant factor of
// the batch's own size (a slot costs a few instructions to clear, a call
// thousands to derive: eight times leaves batch sizes room to vary without
// making maps again). Call held with the map's length once filled.
func reuse[K comparable, V any](m map[K]V, room *int, want, size int) map[K]V {
	if m == nil || tooRoomy(*room, want) {
		*room = size
		return make(map[K]V, size)
	}
	clear(m)
	return m
}

// tooRoomy says a kept map or slice with room for room entries is to be
// made anew for a batch that puts at most want in it (reuse).
func tooRoomy(room, want int) bool { return room > 8*want && room > 64 }

// held records that a map now holds n entries.
func held(room *int, n int) { *room = max(*room, n) }

// acquire takes the spare working memory, else one from the pool.
func (d *Deriver) acquire() *scratch {
	sc := d.spare.Swap(nil)
	if sc == nil {
		sc = d.pool.Get().(*scratch)
	}
	sc.entries, sc.used = sc.entries[:0], 0
	return sc
}

// release drops every reference into the batch before pooling, so a pooled
// scratch never keeps a batch alive.
func (d *Deriver) release(sc *scratch) {
	clear(sc.entries[:sc.used])
	sc.entries, sc.used = sc.entries[:0], 0
	sc.rec = record.Record{}
	if cap(sc.entries) <= spareLimit && d.spare.CompareAndSwap(nil, sc) {
		return
	}
	d.pool.Put(sc)
}

// spareLimit bounds the working memory a Deriver keeps across garbage
// collections (~800 bytes an entry). Larger scratches go back to the
// sync.Pool, which the collector empties.
const spareLimit = 8192

// linearLimit: below this many GenAI spans, a linear parent search beats
// building the index.
const linearLimit = 16

func (sc *scratch) next() *entry {
	if len(sc.entries) < cap(sc.entries) {
		sc.entries = sc.entries[:len(sc.entries)+1]
	} else {
		sc.entries = append(sc.entries, entry{})
	}
	if len(sc.entries) > sc.used {
		sc.used = len(sc.entries)
	}
	return &sc.entries[len(sc.entries)-1]
}

// otherSpan is what the walk through intermediate spans needs of a span.
type otherSpan struct {
	trace  pcommon.TraceID
	parent pcommon.SpanID
	resFP  uint64
}

type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func (sc *scratch) find(trace pcommon.TraceID, id pcommon.SpanID) int32 {
	if len(sc.entries) < linearLimit {
		for i := range sc.entries {
			if sc.entries[i].id == id && sc.entries[i].trace == trace {
				return int32(i)
			}
		}
		return -1
	}
	if !sc.shared {
		i, ok := sc.index[id]
		if !ok {
			return -1
		}
		if sc.entries[i].trace == trace {
			return i
		}
		// Another trace's span has this id: from here on, this batch looks
		// spans up by both ids (built once, so lookups stay constant-time
		// whatever the ids).
		sc.buildExact()
	}
	if i, ok := sc.exact[spanKey{trace, id}]; ok {
		return i
	}
	return -1
}

// buildIndex indexes the batch's spans by span id.
func (sc *scratch) buildIndex() {
	sc.index = reuse(sc.index, &sc.room.index, len(sc.entries), len(sc.entries))
	sc.shared = false
	for i := range sc.entries {
		sc.index[sc.entries[i].id] = int32(i)
	}
	held(&sc.room.index, len(sc.index))
}

func (sc *scratch) buildExact() {
	sc.exact = reuse(sc.exact, &sc.room.exact, len(sc.entries), len(sc.entries))
	for i := range sc.entries {
		sc.exact[spanKey{sc.entries[i].trace, sc.entries[i].id}] = int32(i)
	}
	held(&sc.room.exact, len(sc.exact))
	sc.shared = true
}

// TracesWith is Traces with a visitor for nested spans too.
func (d *Deriver) TracesWith(td ptrace.Traces, v TraceVisitor) Stats {
	var st Stats
	sc := d.acquire()
	defer d.release(sc)

	phase := d.samplePhase()
	rss := td.ResourceSpans()
	multiRes := rss.Len() > 1
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource()
		// What the resource and scope say is worked out at their first
		// span that may be a call: a batch of plain spans pays nothing.
		var fp uint64
		var resNames resNames
		resReady, fpReady := false, !multiRes
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			if d.skipScope(ss.Scope(), spans.Len(), &st) {
				continue
			}
			var si scopeInfo
			siReady := false
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				st.Examined++
				sample := false
				if d.stampedOnly {
					if !record.Carries(span.Attributes()) {
						if sample = sampled(st.Examined, phase) && d.mayBeCall(span); !sample {
							st.Skipped[ReasonNotGenAI]++
							continue
						}
					}
				} else if !d.mayBeCall(span) {
					st.Skipped[ReasonNotGenAI]++
					continue
				}
				if !resReady {
					resNames, resReady = resourceNames(res), true
				}
				if !siReady {
					si, siReady = d.scopeInfo(ss.Scope(), &resNames), true
				}
				if sample {
					// Under StampedOnly, a sampled span without a record
					// that may be a call: it is read with the call rule only
					// to tell a missing processor from a span the processor
					// found to be no call (an INTERNAL span with a model).
					st.Skipped[d.unstampedSpan(&si, span)]++
					continue
				}
				// Without ttft.outcome or ttft.nested_in there is nothing to
				// read back (Inspect would find StateNone): a length test per
				// key instead of Inspect's pass. Under StampedOnly the span
				// passed the same test above.
				if d.stampedOnly || record.Carries(span.Attributes()) {
					if state := readBackAs(d, span.Attributes(), &sc.rec, &st, v.reread(), res, span); state != record.StateNone {
						if state == record.StateNested && v.RereadNested != nil {
							v.RereadNested(res, span)
						}
						continue
					}
				}
				e := sc.next()
				d.scanSpan(&e.ev, &si, span)
				st.EventsIgnored += e.ev.eventsIgnored
				st.ChunkEvents += e.ev.chunkEvents
				st.Untrusted += e.ev.untrusted
				if !e.ev.isCall(true) {
					st.ValuesRejected += e.ev.rejected
					st.Skipped[ReasonNotGenAI]++
					sc.entries = sc.entries[:len(sc.entries)-1]
					continue
				}
				d.checkTimings(&e.ev)
				st.ValuesRejected += e.ev.rejected
				if !fpReady {
					// Only calls derived here fold: a batch of records
					// stamped upstream fingerprints nothing.
					fp, fpReady = resourceFingerprint(res), true
				}
				e.res, e.span, e.resFP = res, span, fp
				e.trace, e.id, e.parent = span.TraceID(), span.SpanID(), span.ParentSpanID()
			}
		}
	}
	if len(sc.entries) == 0 {
		return st
	}
	d.link(sc, td, st.Examined)
	d.fold(sc)
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.root != int32(i) {
			st.Nested++
			if v.Nested != nil {
				v.Nested(e.res, e.span, sc.entries[e.root].id)
			}
			continue
		}
		rec := &sc.rec
		*rec = record.Record{}
		reason, has := d.build(sc, int32(i), rec)
		st.built(reason, has)
		if v.Record != nil {
			v.Record(e.res, e.span, rec)
		}
	}
	return st
}

// unstampedSpan is why a sampled span without a record is skipped under
// StampedOnly: ReasonUnstamped if the call rule makes it a call, else
// ReasonNotGenAI.
func (d *Deriver) unstampedSpan(si *scopeInfo, span ptrace.Span) Reason {
	var ev evidence
	d.scanSpan(&ev, si, span)
	if ev.isCall(true) {
		return ReasonUnstamped
	}
	return ReasonNotGenAI
}

// readBack reads a record stamped upstream into rec and counts it: a valid
// one (StateStamped) is handed on as it is, a nested marker (StateNested) is
// skipped, and an unusable or out-of-bounds one is counted and derived
// afresh from the span's or log record's own evidence (StateNone).
func (d *Deriver) readBack(attrs pcommon.Map, rec *record.Record, st *Stats) record.State {
	state, why := record.Inspect(attrs, rec)
	switch state {
	case record.StateNested:
		st.Nested++
	case record.StateInvalid:
		st.Invalid[why]++
		return record.StateNone
	case record.StateStamped:
		if why := record.Validate(rec, &d.limits); why != record.Valid {
			st.Invalid[why]++ // never aggregated as is
			return record.StateNone
		}
		st.Reread++
		st.Records++
	}
	return state
}

// readBackDone is readBack for one span or log record: a stamped record is
// handed to visit (nil: dropped) and a nested marker skipped; both are done
// with, and the caller goes on to the next item. False: derive the item
// from its own evidence. (Only spans are folded: a nested marker on a log
// record is foreign and skipped like a nested span rather than count a
// call twice.)
func readBackDone[T any](d *Deriver, attrs pcommon.Map, rec *record.Record, st *Stats, visit func(pcommon.Resource, T, *record.Record), res pcommon.Resource, item T) bool {
	return readBackAs(d, attrs, rec, st, visit, res, item) != record.StateNone
}

// readBackAs is readBackDone, reporting what it found: StateNested,
// StateStamped (handed to visit) or StateNone (derive the item).
func readBackAs[T any](d *Deriver, attrs pcommon.Map, rec *record.Record, st *Stats, visit func(pcommon.Resource, T, *record.Record), res pcommon.Resource, item T) record.State {
	state := d.readBack(attrs, rec, st)
	if state == record.StateStamped && visit != nil {
		visit(res, item, rec)
	}
	return state
}

// checkTimings drops candidates a span's own timing contradicts.
func (d *Deriver) checkTimings(e *evidence) {
	d.bound(e)
	if !e.timingValid {
		if e.content.ok || e.chunk.ok || e.srvTTFT.ok {
			e.invalidTTFT = true
		}
		e.content.ok, e.chunk.ok, e.srvTTFT.ok, e.headers.ok = false, false, false, false
		return
	}
	if e.hasGap && e.maxGap > e.duration+durationSlack {
		// Events are admitted up to 1 ms past the end, so a gap between
		// them is at most duration + 1 ms; computed in float64 it can round
		// above the sum record.Validate compares it with.
		e.maxGap = e.duration + durationSlack
	}
	if e.stream == triFalse {
		// No TTFT; the headers time is still checked below against the
		// bounds and the duration, or the record breaks record.Validate.
		e.content.ok, e.chunk.ok, e.srvTTFT.ok = false, false, false
	}
	for _, t := range [...]*timing{&e.content, &e.chunk, &e.srvTTFT, &e.headers} {
		if !t.ok {
			continue
		}
		if t.v > d.cfg.MaxTTFTSeconds {
			// Event times (ttft.chunk, first-token and headers events) are
			// offsets into the span, bounded by its duration only: above
			// max_ttft_seconds they are refused as attribute values are
			// (docs/architecture.md §4), or the record breaks
			// record.Validate when read back.
			t.ok = false
			e.rejected++
			if t != &e.headers {
				e.invalidTTFT = true
			}
			continue
		}
		// Some producers (LiteLLM) write the end time as the first-token
		// time of a streamed call that saw no chunk: for them a streamed
		// call's "TTFT" at the end is no evidence either.
		streamed := e.stream == triTrue && !e.durationNoTTFT
		if e.chunkAtSrc != "" && t.src == e.chunkAtSrc {
			// An absolute completion start (Langfuse's, which LiteLLM's
			// callback fills with its end time when it saw no chunk) at
			// the span's end is the end, whoever wrote the span.
			streamed = false
		}
		perChunk := t == &e.headers || t.prio == prioChunkEvents
		switch checkTTFT(t.v, e.duration, streamed, perChunk) {
		case ttftAfterEnd:
			t.ok = false
			e.rejected++
			e.invalidTTFT = true
		case ttftIsDuration:
			t.ok = false
			if e.stream != triTrue {
				e.durationAsTTFT = true // the duration of a non-streamed call
			}
		}
	}
	if e.content.ok && e.chunk.ok && e.chunk.v > e.content.v {
		// No chunk arrives after the first content: the two came from
		// different clocks, and only the content one is exact.
		e.chunk.ok = false
	}
	if e.stream == triUnknown && (e.content.ok || e.chunk.ok || e.srvTTFT.ok) {
		e.stream = triTrue
	}
}

// link finds, for each GenAI call span, the outermost GenAI call ancestor
// in the batch: within one trace and one resource, through intermediate
// spans that are no calls (a gateway's plugin, retry and fallback spans).
func (d *Deriver) link(sc *scratch, td ptrace.Traces, examined int64) {
	n := len(sc.entries)
	orphans := true
	for i := range sc.entries {
		e := &sc.entries[i]
		e.parentIdx, e.root = -1, int32(i)
		orphans = orphans && e.parent.IsEmpty()
	}
	if orphans {
		return // no span has a parent: each is its own root, no index needed
	}
	counted := n >= linearLimit
	if counted {
		// A call's parent, and the end of a walk, is another call of its
		// trace: a batch where no trace holds two calls (the usual shape,
		// one LLM call under each request handler) has nothing to link,
		// and builds no index.
		if !sc.countCalls() {
			return
		}
		sc.buildIndex()
	}
	unresolved := false
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.parent.IsEmpty() {
			continue
		}
		if p := sc.find(e.trace, e.parent); p >= 0 && p != int32(i) {
			if sc.entries[p].resFP == e.resFP {
				e.parentIdx = p
			}
			continue
		}
		unresolved = true
	}
	if unresolved && examined > int64(n) && sc.markWalked(counted) {
		// Some call's parent is another kind of span of the batch, and
		// another call of its trace is in the batch too: walk up through
		// those spans to see whether that call encloses it.
		sc.buildAll(td, examined)
		for i := range sc.entries {
			e := &sc.entries[i]
			if e.parent.IsEmpty() || e.parentIdx >= 0 {
				continue
			}
			if _, ok := sc.walked[traceKey(e.trace)]; !ok {
				continue // no other call of its trace to find
			}
			cur := e.parent
			for hop := 0; hop < maxHops; hop++ {
				if p := sc.find(e.trace, cur); p >= 0 {
					if p != int32(i) && sc.entries[p].resFP == e.resFP {
						e.parentIdx = p
					}
					break
				}
				o := sc.other(e.trace, cur)
				if o == nil || o.resFP != e.resFP || o.parent.IsEmpty() {
					break
				}
				cur = o.parent
			}
		}
	}
	for i := range sc.entries {
		r := int32(i)
		for depth := 0; sc.entries[r].parentIdx >= 0; depth++ {
			if depth == maxNesting {
				// A parent cycle, or nesting deeper than any real call:
				// cut the chain here. The span reached becomes a root (even
				// if an earlier walk passed it on the way to another), so
				// every span's evidence still lands in one record.
				sc.entries[r].parentIdx, sc.entries[r].root = -1, r
				break
			}
			r = sc.entries[r].parentIdx
		}
		sc.entries[i].root = r
	}
}

// maxHops bounds the walk from a call span up through intermediate spans
// to the next call: a gateway puts a dozen between two; a runaway chain or
// a cycle stops here.
const maxHops = 256

// markWalked fills walked with the traces the walk in link must pass: those
// with a call whose parent is not resolved yet and at least one other call
// in the batch. The walk only ever ends at another call of the same trace,
// so a call alone in its trace in the batch (the usual case: one LLM call
// under an HTTP handler) needs no walk, and a batch of such calls does not
// look at its other spans at all. It says whether any trace is to be walked.
// counted says countCalls has filled calls for this batch.
func (sc *scratch) markWalked(counted bool) bool {
	sc.walked = reuse(sc.walked, &sc.room.walked, len(sc.entries), 0)
	if !counted {
		sc.countCalls()
	}
	for i := range sc.entries {
		e := &sc.entries[i]
		if k := traceKey(e.trace); !e.parent.IsEmpty() && e.parentIdx < 0 && sc.calls[k] > 1 {
			sc.walked[k] = struct{}{}
		}
	}
	held(&sc.room.walked, len(sc.walked))
	return len(sc.walked) > 0
}

// countCalls fills calls with the batch's calls per traceKey, and says
// whether a key holds more than one (two traces sharing a key count as one:
// at worst the batch is then linked for nothing).
func (sc *scratch) countCalls() bool {
	sc.calls = reuse(sc.calls, &sc.room.calls, len(sc.entries), 0)
	for i := range sc.entries {
		sc.calls[traceKey(sc.entries[i].trace)]++
	}
	held(&sc.room.calls, len(sc.calls))
	return len(sc.calls) < len(sc.entries)
}

// buildAll indexes by span id the spans of the batch that the walk in link
// may pass: the walk stays within the trace of the call it starts from, so
// only the traces markWalked chose are indexed. A batch where calls are a
// small share of the spans indexes a small share of them; spans of one
// trace usually come one after another, so most spans cost a comparison
// with the previous one's trace id.
func (sc *scratch) buildAll(td ptrace.Traces, examined int64) {
	want := int(min(examined, math.MaxInt32))
	sc.all = reuse(sc.all, &sc.room.all, want, 0)
	if tooRoomy(cap(sc.allSpans), want) {
		sc.allSpans = nil // as reuse does for the maps: kept room follows the batch
	}
	sc.allSpans = sc.allSpans[:0]
	var last pcommon.TraceID
	lastWalked, haveLast := false, false
	rss := td.ResourceSpans()
	multiRes := rss.Len() > 1
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var fp uint64
		fpReady := !multiRes
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				trace := span.TraceID()
				if !haveLast || trace != last {
					_, lastWalked = sc.walked[traceKey(trace)]
					last, haveLast = trace, true
				}
				if !lastWalked {
					continue
				}
				if !fpReady {
					fp, fpReady = resourceFingerprint(rs.Resource()), true
				}
				sc.all[spanKey{trace, span.SpanID()}] = int32(len(sc.allSpans))
				sc.allSpans = append(sc.allSpans, otherSpan{trace: trace, parent: span.ParentSpanID(), resFP: fp})
			}
		}
	}
	held(&sc.room.all, len(sc.all))
}

// traceKey folds a trace id into 8 bytes for the set of traces buildAll
// indexes. Two traces may share a key: the other's spans are indexed too,
// which costs a little and changes nothing (other compares whole ids).
func traceKey(t pcommon.TraceID) uint64 {
	return binary.LittleEndian.Uint64(t[:8]) ^ binary.LittleEndian.Uint64(t[8:])
}

// other finds a span of the batch by trace and span id.
func (sc *scratch) other(trace pcommon.TraceID, id pcommon.SpanID) *otherSpan {
	if i, ok := sc.all[spanKey{trace, id}]; ok {
		return &sc.allSpans[i]
	}
	return nil
}

// resourceFingerprint hashes a resource's attributes, independent of their
// order, so spans of one service split over several ResourceSpans still
// fold and those of different services never do.
func resourceFingerprint(res pcommon.Resource) uint64 {
	var sum uint64
	for k, v := range res.Attributes().All() {
		// FNV-1a of key, 0, value: hash/fnv's New64a, without its
		// allocations.
		h := fnv1a(fnvOffset64, k)
		h = (h ^ 0) * fnvPrime64
		sum += fnv1a(h, v.AsString())
	}
	return sum
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime64
	}
	return h
}

// maxNesting bounds the walk from a GenAI span up to its outermost GenAI
// ancestor.
const maxNesting = 64

// fold merges every nested span's evidence into its root.
func (d *Deriver) fold(sc *scratch) {
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.root != int32(i) {
			continue
		}
		e.foldState = foldState{contentFrom: -1, chunkFrom: -1, srvFrom: -1, lastInner: -1, maxFallback: -1, lastAttempt: -1}
	}
	for i := range sc.entries {
		e := &sc.entries[i]
		r := &sc.entries[e.root]
		idx := int32(i)
		isRoot := e.root == idx
		r.pick(sc, idx, slotContent, &r.contentFrom)
		r.pick(sc, idx, slotChunk, &r.chunkFrom)
		r.pick(sc, idx, slotServer, &r.srvFrom)

		switch e.ev.stream {
		case triTrue:
			r.stream = triTrue
		case triFalse:
			if r.stream == triUnknown {
				r.stream = triFalse
			}
		}
		if n, ok := e.ev.promptTokens(); ok && (!r.hasPrompt || n > r.prompt) {
			r.prompt, r.hasPrompt = n, true
		}
		if e.ev.hasCacheRead && (!r.hasCached || e.ev.cacheRead > r.cached) {
			r.cached, r.hasCached = e.ev.cacheRead, true
		}
		if e.ev.hasOutput && (!r.hasOutput || e.ev.output > r.output) {
			r.output, r.hasOutput = e.ev.output, true
		}
		if e.ev.hasOutput && (e.ev.output > 1 || (e.ev.output == 1 && !e.ev.anthropic)) {
			// Anthropic's message_start says output_tokens 1 before any
			// content; instrumentations that copy it (OpenInference) do
			// not say content came.
			r.outputSeen = true
		}
		if e.ev.hasGap && (!r.hasGap || e.ev.maxGap > r.maxGap) {
			r.maxGap, r.hasGap = e.ev.maxGap, true
		}
		if e.ev.contentChunks > r.contentChunks {
			r.contentChunks = e.ev.contentChunks
		}
		if e.ev.timingValid {
			r.lastEnd = max(r.lastEnd, e.ev.end)
			if e.ev.end > e.ev.start {
				r.longest = max(r.longest, e.ev.end-e.ev.start)
			}
		}
		r.invalidTiming = r.invalidTiming || e.ev.invalidTTFT || !e.ev.timingValid
		r.durationAsTTFT = r.durationAsTTFT || e.ev.durationAsTTFT
		if !isRoot {
			if r.nestedProvider == "" {
				r.nestedProvider = best(e.ev.provider[:])
			}
			if r.nestedModel == "" {
				r.nestedModel = best(e.ev.model[:])
			}
			if r.nestedRoute == "" {
				r.nestedRoute = e.ev.route
			}
		}
		if e.ev.attempt() {
			r.countAttempt(e.ev.fallbackIndex, e.ev.retries)
			if r.lastAttempt < 0 || laterAttempt(&e.ev, &sc.entries[r.lastAttempt].ev) {
				r.lastAttempt = idx
			}
		}
		if !isRoot && e.ev.kind == ptrace.SpanKindClient {
			r.nestedClient = true
		}
		if !isRoot && e.ev.vercel == vercelInner {
			if e.ev.failed() {
				r.failedInner++
			}
			r.inner++
			if tgt := [2]string{best(e.ev.provider[:]), best(e.ev.model[:])}; !r.innerTargeted {
				r.innerTarget, r.innerTargeted = tgt, true
			} else if tgt != r.innerTarget {
				r.innerRetarget = true
			}
			if r.lastInner < 0 || e.ev.start >= sc.entries[r.lastInner].ev.start {
				r.lastInner = idx
			}
			if e.ev.timingValid && (r.firstInnerStart == 0 || e.ev.start < r.firstInnerStart) {
				r.firstInnerStart = e.ev.start
			}
		}
	}
	// Outcomes need to know whether the whole call saw content.
	for i := range sc.entries {
		e := &sc.entries[i]
		r := &sc.entries[e.root]
		if e.root != int32(i) && e.ev.vercel == vercelInner && r.lastInner != int32(i) {
			continue // an earlier attempt or step; the last one decides
		}
		if e.ev.attempt() && r.lastAttempt != int32(i) {
			continue // a gateway attempt that a retry or fallback superseded
		}
		o := e.ev.outcome(r.contentSeen())
		if o == record.OutcomeClosed && e.ev.abandoned() {
			r.abandoned = true
		}
		if r.outcome == "" || severity(o) > severity(r.outcome) {
			r.outcome = o
		}
	}
}

const (
	slotContent = iota
	slotChunk
	slotServer
)

func (e *evidence) slot(k int) *timing {
	switch k {
	case slotChunk:
		return &e.chunk
	case slotServer:
		return &e.srvTTFT
	}
	return &e.content
}

// pick makes span idx the holder of a timing slot of root r when its
// candidate is better than the current holder's.
func (r *entry) pick(sc *scratch, idx int32, k int, from *int32) {
	e := &sc.entries[idx]
	t := e.ev.slot(k)
	if !t.ok {
		return
	}
	if *from < 0 {
		*from = idx
		return
	}
	holder := &sc.entries[*from]
	cur := holder.ev.slot(k)
	switch {
	case t.prio < cur.prio:
		*from = idx
	case t.prio == cur.prio && e.root != idx &&
		(*from == e.root || e.ev.start < holder.ev.start):
		// The request-issuing inner span measured it; among siblings the
		// first to start is the call the user saw.
		*from = idx
	}
}

// attempt reports a gateway attempt span (it says which fallback target and
// retry it was).
func (e *evidence) attempt() bool { return e.hasFallback || e.hasRetries }

// laterAttempt orders gateway attempts: fallback index, then retries, then
// start time.
func laterAttempt(a, b *evidence) bool {
	if a.fallbackIndex != b.fallbackIndex {
		return a.fallbackIndex > b.fallbackIndex
	}
	if a.retries != b.retries {
		return a.retries > b.retries
	}
	return a.start > b.start
}

// countAttempt records a gateway attempt: the fallback target it went to
// and the retries of that target before it.
func (r *entry) countAttempt(fallback, retries int64) {
	fallback = min(fallback, maxFallbackIndex)
	retries = min(retries, maxFallbackIndex)
	if fallback > r.maxFallback {
		r.maxFallback = fallback
	}
	if fallback < maxFallbacks && retries+1 > r.fallbackAttempts[fallback] {
		r.fallbackAttempts[fallback] = retries + 1
	}
}

// gatewayAttempts counts the attempts of a gateway call: every fallback
// target up to the highest one seen was tried at least once, each as often
// as its retries say. ok is false when no span said.
func (r *entry) gatewayAttempts() (n int64, failedOver, ok bool) {
	if r.maxFallback < 0 {
		return 0, false, false
	}
	for f := int64(0); f <= r.maxFallback; f++ {
		if f < maxFallbacks {
			n += max(r.fallbackAttempts[f], 1)
		} else {
			n++
		}
	}
	return n, r.maxFallback > 0, true
}

func (r *entry) contentSeen() bool {
	if r.contentFrom >= 0 || r.contentChunks > 0 || r.outputSeen {
		return true
	}
	return false
}
