// Package window keeps the recent past of one signal as a ring of time slices
// (docs/architecture.md §2, §8: window 24h in 24 slices), each holding a sketch of successful
// samples and one of right-censored samples (requests cut by a first-token timeout).
//
// Slices are aligned to multiples of the slice length since the Unix epoch and
// tagged with their slice number, so a slice is stale when its number is at least
// `slices` behind the newest: expiry is lazy and costs O(slices) however long the
// clock jumped. A sample lives between window−slice and window. Time is always passed
// in; times older than the newest slice land in the newest slice (the ring never
// runs backwards). Not safe for concurrent use: the caller locks.
package window // import "github.com/otelcol-ttft/otelcol-ttft/internal/window"

import (
	"math"
	"time"
	"unsafe"

	"github.com/otelcol-ttft/otelcol-ttft/internal/logindex"
	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
)

type slice struct {
	num      int64 // slice number: unix nanos / slice length
	ok       *quantile.Sketch
	censored *quantile.Sketch
}

// Window is a ring of slices over a time window.
type Window struct {
	ring     []slice
	sliceLen int64 // nanoseconds
	head     int64 // newest slice number seen
	headPos  int   // ring position of head
	// lastSec and lastNsec are the time num last computed, lastNum its
	// slice: a batch's samples share one time, so the division is done
	// once a batch, not once a sample.
	lastSec  int64
	lastNsec int32
	lastNum  int64
	// hot is the head slice's sketch of successes once current made it
	// ready for head: Observe's path without the ring.
	hot *quantile.Sketch
	// outOfRange counts samples outside the range the sketch resolves:
	// below quantile.MinValue, or folded by its bucket cap.
	outOfRange uint64
}

// New returns a window of the given length split into slices (both clamped to sane
// minimums: at least 1 slice, slices of at least 1 ns).
func New(window time.Duration, slices int, now time.Time) *Window {
	slices = max(slices, 1)
	sl := max(int64(window)/int64(slices), 1)
	w := &Window{ring: make([]slice, slices), sliceLen: sl, lastSec: math.MinInt64}
	w.setHead(w.num(now))
	for i := range w.ring {
		w.ring[i].num = math.MinInt64 // stale until written
	}
	return w
}

// Times outside UnixNano's range (years 1678–2262) saturate to its ends.
const (
	minSec = math.MinInt64/1_000_000_000 + 1
	maxSec = math.MaxInt64/1_000_000_000 - 1
)

func (w *Window) num(now time.Time) int64 {
	sec, nsec := now.Unix(), int32(now.Nanosecond())
	if sec == w.lastSec && nsec == w.lastNsec {
		return w.lastNum
	}
	var n int64
	// Plain arithmetic on seconds: cheaper than comparing time.Time bounds per sample.
	switch {
	case sec < minSec:
		n = math.MinInt64
	case sec > maxSec:
		n = math.MaxInt64
	default:
		n = sec*1e9 + int64(nsec)
	}
	q := n / w.sliceLen
	if n%w.sliceLen < 0 {
		q-- // floor for times before 1970
	}
	w.lastSec, w.lastNsec, w.lastNum = sec, nsec, q
	return q
}

// setHead makes slice number n the newest.
func (w *Window) setHead(n int64) {
	w.head, w.headPos, w.hot = n, mod(n, len(w.ring)), nil
}

// current advances the ring to now and returns the slice that takes new samples.
func (w *Window) current(now time.Time) *slice {
	if n := w.num(now); n > w.head {
		w.setHead(n)
	}
	s := &w.ring[w.headPos]
	if s.num != w.head {
		s.num = w.head
		// Released, not reset: a slice that was dense an hour ago starts
		// sparse again, so a series' memory follows its current spread.
		if s.ok != nil {
			s.ok.Release()
		}
		if s.censored != nil {
			s.censored.Release()
		}
	}
	if s.ok == nil {
		s.ok = quantile.NewSketch()
	}
	w.hot = s.ok
	return s
}

func mod(a int64, n int) int {
	m := int(a % int64(n))
	if m < 0 {
		m += n
	}
	return m
}

func (w *Window) live(s *slice) bool {
	// num ≤ head, so the unsigned difference is exact even across the whole int64 range.
	return s.ok != nil && s.num <= w.head && s.num != math.MinInt64 && uint64(w.head)-uint64(s.num) < uint64(len(w.ring))
}

// Observe records a successful sample of v seconds.
func (w *Window) Observe(v float64, now time.Time) {
	k, ok := logindex.Ceil(v)
	w.ObserveCeil(v, k, ok, now)
}

// ObserveCeil is Observe with logindex.Ceil(v) already computed, for a
// caller that indexes the same value elsewhere too.
func (w *Window) ObserveCeil(v float64, k int, kok bool, now time.Time) {
	sk := w.hot
	if sk == nil || w.num(now) > w.head {
		sk = w.current(now).ok
	}
	w.outOfRange += sk.AddCountedCeil(v, k, kok)
}

func (w *Window) add(sk *quantile.Sketch, v float64) {
	w.outOfRange += sk.AddCounted(v)
}

// TakeOutOfRange returns how many samples since the last call fell outside
// the range the window resolves to its relative accuracy (below
// quantile.MinValue, or more than quantile.MaxBuckets buckets under the
// slice's largest value, folded into its lowest bucket).
func (w *Window) TakeOutOfRange() uint64 {
	n := w.outOfRange
	w.outOfRange = 0
	return n
}

// ObserveCensored records a request known only to take longer than cut seconds
// (ended by timeout_first_token at cut).
func (w *Window) ObserveCensored(cut float64, now time.Time) {
	s := w.current(now)
	if s.censored == nil {
		s.censored = quantile.NewSketch() // most windows never see a timeout: allocate on first use
	}
	w.add(s.censored, cut)
}

// advance moves the head to now without creating a slice.
func (w *Window) advance(now time.Time) {
	if n := w.num(now); n > w.head {
		w.setHead(n)
	}
}

// Snapshot merges the live slices into a new Snapshot.
func (w *Window) Snapshot(now time.Time) *Snapshot {
	s := &Snapshot{}
	w.SnapshotInto(s, now)
	return s
}

// SnapshotInto is Snapshot reusing dst's buffers (no allocation once they are grown).
func (w *Window) SnapshotInto(dst *Snapshot, now time.Time) {
	w.advance(now)
	if dst.ok == nil {
		dst.ok, dst.censored = quantile.NewSketch(), quantile.NewSketch()
	} else {
		dst.ok.Reset()
		dst.censored.Reset()
	}
	for i := range w.ring {
		if s := &w.ring[i]; w.live(s) {
			dst.ok.Merge(s.ok)
			dst.censored.Merge(s.censored) // Merge ignores nil
		}
	}
}

// Empty reports whether no live slice holds a sample.
func (w *Window) Empty(now time.Time) bool {
	w.advance(now)
	for i := range w.ring {
		if s := &w.ring[i]; w.live(s) && (s.ok.Count() > 0 || (s.censored != nil && s.censored.Count() > 0)) {
			return false
		}
	}
	return true
}

// Release drops the buffers of expired slices, for callers that keep idle windows.
func (w *Window) Release(now time.Time) {
	w.advance(now)
	for i := range w.ring {
		if s := &w.ring[i]; s.ok != nil && !w.live(s) {
			s.ok, s.censored = nil, nil
		}
	}
}

// SizeBytes is the memory held by the window and its sketches.
func (w *Window) SizeBytes() int {
	n := int(unsafe.Sizeof(*w)) + cap(w.ring)*int(unsafe.Sizeof(slice{}))
	for i := range w.ring {
		if s := &w.ring[i]; s.ok != nil {
			n += s.ok.SizeBytes()
		}
		if s := &w.ring[i]; s.censored != nil {
			n += s.censored.SizeBytes()
		}
	}
	return n
}
