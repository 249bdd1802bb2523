package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Kinds of series, each one table (own telemetry: overflowed{kind}, series{kind}).
const (
	kindHistograms = iota
	kindRequests
	kindWindows
	kindHistogramSources // cumulative histogram series whose last point is kept (metrics.go)
	numSeriesKinds
)

var seriesKindNames = [numSeriesKinds]string{"histograms", "requests", "windows", "histogram_sources"}

// target is the dimension values of the record in hand, from which every
// series key and attribute set starts. The aggregator resolves it once per
// record and hands it to the stores; none of them keeps it.
type target struct {
	dims       []dimension
	instanceID string
	vals       []string
	res        *resourceDims
}

func newTarget(dims []string, instanceID string) *target {
	return &target{
		dims:       newDimensions(dims),
		instanceID: instanceID,
		vals:       make([]string, len(dims)),
		res:        newResourceDims(len(dims)),
	}
}

// resolve fills the dimension values of rec (keys.go, dimValues).
func (t *target) resolve(rec *record.Record, attrs pcommon.Map) {
	dimValues(t.dims, rec, attrs, t.res, t.vals)
}

// attrs starts the attribute set of a new series: the dimensions and the
// instance id, with room for extra more.
func (t *target) attrs(extra int) pcommon.Map {
	attrs := pcommon.NewMap()
	attrs.EnsureCapacity(len(t.dims) + extra + 1)
	putDims(attrs, t.dims, t.vals)
	putNonEmpty(attrs, attrCollectorInstanceID, t.instanceID)
	return attrs
}

// overflowAttrs are the attributes of an overflow series: the marker only,
// as in spanmetrics, plus the instance id so replicas' overflow series stay
// apart.
func (t *target) overflowAttrs() pcommon.Map {
	attrs := pcommon.NewMap()
	attrs.PutBool(attrOverflow, true)
	putNonEmpty(attrs, attrCollectorInstanceID, t.instanceID)
	return attrs
}

// seriesHead is what every series keeps besides its values.
type seriesHead struct {
	attrs    pcommon.Map
	lastSeen time.Time
	// dead marks a series its table dropped, so links to it are re-resolved.
	dead bool
	// unsent marks a series holding records no flush exported yet: it is
	// not expired before a flush wrote it (metrics_expiration may be
	// shorter than flush_interval, and a tick may come late).
	unsent bool
}

func (h *seriesHead) head() *seriesHead { return h }

type series interface{ head() *seriesHead }

// table holds the series of one kind by key. It is the connector's one
// find-or-create and its one overflow rule (README, "Cardinality"): a
// table holds at most aggregation_cardinality_limit series of its own; a
// record of a new key beyond that goes to the kind's overflow series, made
// on first use with attributes otel.metric.overflow=true (and
// collector.instance.id) only, or, for a kind without one (windows: a
// recommendation over unrelated targets would be wrong), is kept out.
// Either way it is counted in overflowed{kind}.
type table[S series] struct {
	kind  int
	limit int
	// overflows says whether the kind has an overflow series.
	overflows bool
	byKey     map[string]S
	overflow  S
	hasOver   bool
	// key is the key being looked up: keyFor starts it, the caller adds
	// the kind's fields, find and add read it.
	key keyBuilder
}

func newTable[S series](kind, limit int, overflows bool) table[S] {
	return table[S]{kind: kind, limit: limit, overflows: overflows, byKey: map[string]S{}}
}

// keyFor starts a key with the target's dimension values.
func (t *table[S]) keyFor(tgt *target) *keyBuilder {
	t.key.reset()
	t.key.strs(tgt.vals)
	return &t.key
}

// find returns the series of the key built since keyFor.
func (t *table[S]) find() (S, bool) {
	s, ok := t.byKey[string(t.key.buf)]
	return s, ok
}

// add makes the series of the key built since keyFor, which find did not
// hold. create builds a series from its attributes: own series get the
// target's attributes, to which create adds the kind's own; the overflow
// series gets overflowAttrs and own=false. add reports whether the series is
// the key's own (false: the overflow series, which mixes keys and must not
// be linked), and ok=false when the record is kept out.
func (t *table[S]) add(tgt *target, extra int, st *batchStats, create func(attrs pcommon.Map, own bool) S) (s S, own, ok bool) {
	if len(t.byKey) < t.limit {
		s = create(tgt.attrs(extra), true)
		t.byKey[string(t.key.buf)] = s
		return s, true, true
	}
	st.overflowed[t.kind]++
	if !t.overflows {
		return s, false, false
	}
	if !t.hasOver {
		t.overflow, t.hasOver = create(tgt.overflowAttrs(), false), true
	}
	return t.overflow, false, true
}

// get is find, then add.
func (t *table[S]) get(tgt *target, extra int, st *batchStats, create func(attrs pcommon.Map, own bool) S) (S, bool, bool) {
	if s, ok := t.find(); ok {
		return s, true, true
	}
	return t.add(tgt, extra, st, create)
}

// expire drops the series idle for longer than exp (none when exp ≤ 0) and
// those done reports finished (done may be nil), marking each dead.
func (t *table[S]) expire(now time.Time, exp time.Duration, done func(S) bool) {
	for k, s := range t.byKey {
		h := s.head()
		if h.unsent {
			continue
		}
		if (exp > 0 && now.Sub(h.lastSeen) > exp) || (done != nil && done(s)) {
			h.dead = true
			delete(t.byKey, k)
		}
	}
	if t.hasOver && !t.overflow.head().unsent && exp > 0 && now.Sub(t.overflow.head().lastSeen) > exp {
		t.overflow.head().dead = true
		var none S
		t.overflow, t.hasOver = none, false
	}
}

// len is the number of series held, the overflow series included.
func (t *table[S]) len() int {
	if t.hasOver {
		return len(t.byKey) + 1
	}
	return len(t.byKey)
}

// each calls f for every series, the overflow series last.
func (t *table[S]) each(f func(S)) {
	for _, s := range t.byKey {
		f(s)
	}
	if t.hasOver {
		f(t.overflow)
	}
}
