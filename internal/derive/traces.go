package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// TraceVisitor receives what Traces derives.
type TraceVisitor struct {
	// Record is called once per record-carrying span; rec is only valid
	// during the call.
	Record func(res pcommon.Resource, span ptrace.Span, rec *record.Record)
	// Nested, when set, is called once per GenAI span whose evidence was
	// folded into the record of an enclosing span (outer is that span's id).
	Nested func(res pcommon.Resource, span ptrace.Span, outer pcommon.SpanID)
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

// entry is one GenAI call span of the batch.
type entry struct {
	res    pcommon.Resource
	span   ptrace.Span
	trace  pcommon.TraceID
	id     pcommon.SpanID
	parent pcommon.SpanID
	ev     evidence

	parentIdx int32
	root      int32

	foldState // meaningful on roots
}

// foldState is what fold gathers on a root from every span of its call.
type foldState struct {
	contentFrom, chunkFrom, srvFrom int32
	lastInner                       int32 // latest-starting Vercel provider request
	failedInner                     int64
	stream                          tri
	prompt, cached, output          int64
	hasPrompt, hasCached, hasOutput bool
	maxGap                          float64
	hasGap                          bool
	contentChunks                   int64
	outcome                         string

	// Target fields from the nested spans, for a root that lacks them: the
	// first nested span (in batch order) that has each.
	nestedProvider, nestedModel, nestedRoute string
	// Over the root and its nested spans: a refused TTFT or span timing; a
	// "TTFT" refused for equalling the duration.
	invalidTiming, durationAsTTFT bool
}

// scratch is per-call working memory, reused so a batch allocates nothing
// once warm. The Deriver keeps one spare across garbage collections (a
// sync.Pool alone is emptied by each one, and the next batch would grow a
// new scratch); concurrent calls take more from the pool.
type scratch struct {
	entries []entry
	index   map[pcommon.SpanID]int32 // by span id alone: hashing 8 bytes, not 24
	exact   map[spanKey]int32        // by both ids, built only for a batch where traces share span ids
	shared  bool                     // this batch looks spans up in exact
	rec     record.Record            // handed to visitors; reused so it never escapes per span
	used    int                      // high-water mark of entries this call, cleared on release
}

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
	if sc.index == nil {
		sc.index = make(map[pcommon.SpanID]int32, len(sc.entries))
	}
	clear(sc.index)
	sc.shared = false
	for i := range sc.entries {
		sc.index[sc.entries[i].id] = int32(i)
	}
}

func (sc *scratch) buildExact() {
	if sc.exact == nil {
		sc.exact = make(map[spanKey]int32, len(sc.entries))
	}
	clear(sc.exact)
	for i := range sc.entries {
		sc.exact[spanKey{sc.entries[i].trace, sc.entries[i].id}] = int32(i)
	}
	sc.shared = true
}

// TracesWith is Traces with a visitor for nested spans too.
func (d *Deriver) TracesWith(td ptrace.Traces, v TraceVisitor) Stats {
	var st Stats
	sc := d.acquire()
	defer d.release(sc)

	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource()
		envoyRes := envoyResource(res)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			si := d.scopeInfo(ss.Scope(), envoyRes)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				st.Examined++
				switch record.Inspect(span.Attributes(), &sc.rec) {
				case record.StateNested:
					st.Nested++
					continue
				case record.StateInvalid:
					st.Skipped[ReasonInvalidRecord]++
					continue
				case record.StateStamped:
					st.Reread++
					st.Records++
					sc.rec.Reread = true
					if v.Record != nil {
						v.Record(res, span, &sc.rec)
					}
					continue
				}
				e := sc.next()
				d.scanSpan(&e.ev, &si, span)
				st.EventsIgnored += e.ev.eventsIgnored
				st.ChunkEvents += e.ev.chunkEvents
				if !e.ev.genai || e.ev.notCall {
					st.ValuesRejected += e.ev.rejected
					st.Skipped[ReasonNotGenAI]++
					sc.entries = sc.entries[:len(sc.entries)-1]
					continue
				}
				d.checkTimings(&e.ev)
				st.ValuesRejected += e.ev.rejected
				e.res, e.span = res, span
				e.trace, e.id, e.parent = span.TraceID(), span.SpanID(), span.ParentSpanID()
			}
		}
	}
	if len(sc.entries) == 0 {
		return st
	}
	d.link(sc)
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
		st.Records++
		if has {
			st.WithTTFT++
		} else {
			st.Skipped[reason]++
		}
		if v.Record != nil {
			v.Record(e.res, e.span, rec)
		}
	}
	return st
}

// checkTimings drops candidates a span's own timing contradicts.
func (d *Deriver) checkTimings(e *evidence) {
	if !e.timingValid {
		if e.content.ok || e.chunk.ok || e.srvTTFT.ok {
			e.invalidTTFT = true
		}
		e.content.ok, e.chunk.ok, e.srvTTFT.ok, e.headers.ok = false, false, false, false
		return
	}
	if e.stream == triFalse {
		e.content.ok, e.chunk.ok, e.srvTTFT.ok = false, false, false
		return
	}
	for _, t := range [...]*timing{&e.content, &e.chunk, &e.srvTTFT, &e.headers} {
		if !t.ok {
			continue
		}
		if t.v > e.duration+1e-3 {
			// A first token after the span ended is from another clock.
			t.ok = false
			e.rejected++
			e.invalidTTFT = true
			continue
		}
		if e.stream != triTrue && t != &e.headers && t.prio != prioChunkEvents && t.v >= e.duration-1e-3 {
			// Producers report the duration as "TTFT" for non-streamed calls.
			t.ok = false
			e.durationAsTTFT = true
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

// link finds, for each GenAI span, the outermost GenAI ancestor in the batch.
func (d *Deriver) link(sc *scratch) {
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
	if n >= linearLimit {
		sc.buildIndex()
	}
	for i := range sc.entries {
		e := &sc.entries[i]
		if !e.parent.IsEmpty() {
			if p := sc.find(e.trace, e.parent); p >= 0 && p != int32(i) {
				e.parentIdx = p
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
		e.foldState = foldState{contentFrom: -1, chunkFrom: -1, srvFrom: -1, lastInner: -1}
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
		if e.ev.hasGap && (!r.hasGap || e.ev.maxGap > r.maxGap) {
			r.maxGap, r.hasGap = e.ev.maxGap, true
		}
		if e.ev.contentChunks > r.contentChunks {
			r.contentChunks = e.ev.contentChunks
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
		if !isRoot && e.ev.vercel == vercelInner {
			if e.ev.failed() {
				r.failedInner++
			}
			if r.lastInner < 0 || e.ev.start >= sc.entries[r.lastInner].ev.start {
				r.lastInner = idx
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
		o := e.ev.outcome(r.contentSeen())
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

func (r *entry) contentSeen() bool {
	if r.contentFrom >= 0 || r.contentChunks > 0 || (r.hasOutput && r.output > 0) {
		return true
	}
	return false
}
