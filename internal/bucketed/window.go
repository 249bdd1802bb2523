package bucketed

import (
	"math"
	"slices"
	"time"
	"unsafe"
)

// Window is a ring of time slices of bucketed increments, aligned like
// internal/window's (slice numbers since the Unix epoch; a slice is stale
// when it is `slices` or more behind the newest), so a histogram source and
// an exact source of the same configuration look back over the same span.
type Window struct {
	ring       []wslice
	sliceLen   int64
	head       int64
	kind       Kind
	maxBuckets int
	// coarsened counts merges that lost resolution (layout change, downscale).
	coarsened uint64
	// bounds is the explicit layout the slices share: a slice whose bounds
	// are equal points at it rather than at a copy of its own (Bounds are
	// never written in place: a merge to another layout replaces them).
	bounds []float64
}

type wslice struct {
	num int64
	d   *Dist
}

// NewWindow returns an empty window for distributions of one kind.
// maxBuckets caps an exponential slice (it is downscaled to fit).
func NewWindow(kind Kind, window time.Duration, slices, maxBuckets int, now time.Time) *Window {
	slices = max(slices, 1)
	w := &Window{
		ring:       make([]wslice, slices),
		sliceLen:   max(int64(window)/int64(slices), 1),
		kind:       kind,
		maxBuckets: max(maxBuckets, 1),
	}
	for i := range w.ring {
		w.ring[i].num = math.MinInt64
	}
	w.head = w.num(now)
	return w
}

// Kind is the kind of distribution the window holds.
func (w *Window) Kind() Kind { return w.kind }

// Coarsened counts merges that lost resolution.
func (w *Window) Coarsened() uint64 { return w.coarsened }

func (w *Window) num(now time.Time) int64 {
	const (
		minSec = math.MinInt64/1_000_000_000 + 1
		maxSec = math.MaxInt64/1_000_000_000 - 1
	)
	var n int64
	switch sec := now.Unix(); {
	case sec < minSec:
		n = math.MinInt64
	case sec > maxSec:
		n = math.MaxInt64
	default:
		n = sec*1e9 + int64(now.Nanosecond())
	}
	q := n / w.sliceLen
	if n%w.sliceLen < 0 {
		q--
	}
	return q
}

func (w *Window) advance(now time.Time) {
	if n := w.num(now); n > w.head {
		w.head = n
	}
}

func (w *Window) live(s *wslice) bool {
	return s.d != nil && s.num <= w.head && s.num != math.MinInt64 && uint64(w.head)-uint64(s.num) < uint64(len(w.ring))
}

// Add enters one interval's increment (per-bucket counts) at now. A
// distribution of another kind is ignored and reported false.
func (w *Window) Add(d *Dist, now time.Time) bool {
	if d == nil || d.Kind != w.kind {
		return false
	}
	w.advance(now)
	s := &w.ring[mod(w.head, len(w.ring))]
	if s.num != w.head || s.d == nil {
		s.num = w.head
		s.d = d.Clone()
		if s.d.Kind == Explicit {
			if slices.Equal(s.d.Bounds, w.bounds) {
				s.d.Bounds = w.bounds
			} else {
				w.bounds = s.d.Bounds
			}
		}
		if s.d.Kind == Exponential {
			s.d.Trim()
			if s.d.Fit(w.maxBuckets) {
				w.coarsened++
			}
		}
		return true
	}
	if s.d.Merge(d, w.maxBuckets) {
		w.coarsened++
	}
	return true
}

func mod(a int64, n int) int {
	m := int(a % int64(n))
	if m < 0 {
		m += n
	}
	return m
}

// Snapshot merges the live slices into one distribution (nil when none is live).
func (w *Window) Snapshot(now time.Time) *Dist {
	w.advance(now)
	var out *Dist
	for i := range w.ring {
		s := &w.ring[i]
		if !w.live(s) {
			continue
		}
		if out == nil {
			out = s.d.Clone()
			continue
		}
		if out.Merge(s.d, w.maxBuckets) {
			w.coarsened++
		}
	}
	return out
}

// Empty reports whether no live slice holds a sample; it releases the
// memory of stale slices on the way.
func (w *Window) Empty(now time.Time) bool {
	w.advance(now)
	empty := true
	for i := range w.ring {
		s := &w.ring[i]
		if !w.live(s) {
			s.d = nil
			continue
		}
		if empty && s.d.Holds() {
			empty = false
		}
	}
	return empty
}

// SizeBytes is the memory held by the window, shared bounds counted once.
func (w *Window) SizeBytes() int {
	n := int(unsafe.Sizeof(*w)) + cap(w.ring)*int(unsafe.Sizeof(wslice{}))
	shared := false
	for i := range w.ring {
		d := w.ring[i].d
		n += d.SizeBytes()
		if d != nil && len(w.bounds) > 0 && unsafe.SliceData(d.Bounds) == unsafe.SliceData(w.bounds) {
			n -= cap(d.Bounds) * 8
			shared = true
		}
	}
	if shared {
		n += cap(w.bounds) * 8
	}
	return n
}
