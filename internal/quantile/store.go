package quantile

import "math"

// store is sparse pairs (sparse.go) until it turns dense: then a dense run of
// bucket counters covering indexes [off, off+len(buf)).
// Counters start as uint8 and widen to uint16, uint32, then uint64 when one would
// overflow: most buckets of most series stay small, so a low-volume slice costs a
// byte per bucket instead of eight.
type store struct {
	c8     []uint8
	c16    []uint16
	c32    []uint32
	c64    []uint64
	width  uint8 // 8, 16, 32 or 64; 0 until the first add
	off    int   // index of buf[0]
	lo, hi int   // range of indexes that may be non-zero; lo > hi when empty
	dense  bool  // false: the counts are in pairs
	pairs  []pair
}

type counter interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

const growSlack = 64 // extra buckets on each side when the buffer grows

func (st *store) empty() bool { return st.lo > st.hi }

func (st *store) reset() {
	clear(st.c8)
	clear(st.c16)
	clear(st.c32)
	clear(st.c64)
	st.pairs = st.pairs[:0]
	st.lo, st.hi = 1, 0
}

func (st *store) length() int {
	switch st.width {
	case 8:
		return len(st.c8)
	case 16:
		return len(st.c16)
	case 32:
		return len(st.c32)
	case 64:
		return len(st.c64)
	}
	return 0
}

func (st *store) sizeBytes() int {
	return cap(st.c8) + cap(st.c16)*2 + cap(st.c32)*4 + cap(st.c64)*8 + cap(st.pairs)*8
}

// get returns the count of bucket i.
func (st *store) get(i int) uint64 {
	p := i - st.off
	if i < st.lo || i > st.hi {
		return 0
	}
	if !st.dense {
		return st.getSparse(i)
	}
	switch st.width {
	case 8:
		return uint64(st.c8[p])
	case 16:
		return uint64(st.c16[p])
	case 32:
		return uint64(st.c32[p])
	default:
		return uint64(st.c64[p])
	}
}

// add adds n to bucket i, growing or collapsing the range as needed.
// It returns how many values lost their own bucket to the cap: the n added when i
// falls below the capped range, plus existing counts folded into the lowest bucket.
func (st *store) add(i int, n uint64) (folded uint64) {
	if !st.dense && st.addSparse(i, n) {
		return 0
	}
	if st.width == 0 {
		st.width = 8
	}
	if st.empty() {
		if l := st.length(); l == 0 || i < st.off || i >= st.off+l {
			st.relocate(i, i)
		}
		st.lo, st.hi = i, i
	} else if i < st.lo || i > st.hi {
		lo, hi := min(st.lo, i), max(st.hi, i)
		var sum uint64
		if hi-lo+1 > MaxBuckets {
			lo = hi - MaxBuckets + 1
			if i < lo {
				i, folded = lo, n
			}
			sum = st.foldBelow(lo)
			folded += sum
		}
		if lo < st.off || hi >= st.off+st.length() {
			st.relocate(lo, hi)
		}
		st.lo, st.hi = lo, hi
		if sum > 0 {
			st.inc(lo-st.off, sum)
		}
	}
	st.inc(i-st.off, n)
	return folded
}

// inc adds n at buffer position p, widening the counters when one would overflow.
func (st *store) inc(p int, n uint64) {
	for {
		switch st.width {
		case 8:
			if c := uint64(st.c8[p]) + n; c <= 0xFF {
				st.c8[p] = uint8(c)
				return
			}
		case 16:
			if c := uint64(st.c16[p]) + n; c <= 0xFFFF {
				st.c16[p] = uint16(c)
				return
			}
		case 32:
			if c := uint64(st.c32[p]) + n; c <= 0xFFFFFFFF {
				st.c32[p] = uint32(c)
				return
			}
		default:
			st.c64[p] += n
			return
		}
		st.widenOnce()
	}
}

// widenOnce moves the counters to the next wider type.
func (st *store) widenOnce() {
	switch st.width {
	case 0:
		st.width = 8
	case 8:
		st.c16 = widen[uint8, uint16](st.c8)
		st.c8, st.width = nil, 16
	case 16:
		st.c32 = widen[uint16, uint32](st.c16)
		st.c16, st.width = nil, 32
	case 32:
		st.c64 = widen[uint32, uint64](st.c32)
		st.c32, st.width = nil, 64
	}
}

// mergeFrom adds the counts of o's buckets [from, to] into the same buckets of st,
// which must already cover them. It runs typed loops over both buffers, widening st
// and resuming whenever a counter would overflow.
func (st *store) mergeFrom(o *store, from, to int) {
	for from <= to {
		var done int
		switch st.width {
		case 8:
			done = addRunTo(st.c8[from-st.off:], o, from, to, 0xFF)
		case 16:
			done = addRunTo(st.c16[from-st.off:], o, from, to, 0xFFFF)
		case 32:
			done = addRunTo(st.c32[from-st.off:], o, from, to, 0xFFFFFFFF)
		default:
			done = addRunTo(st.c64[from-st.off:], o, from, to, math.MaxUint64)
		}
		from += done
		if from <= to {
			st.widenOnce()
		}
	}
}

func addRunTo[D counter](dst []D, o *store, from, to int, limit uint64) int {
	a, b := from-o.off, to-o.off+1
	switch o.width {
	case 8:
		return addRun(dst, o.c8[a:b], limit)
	case 16:
		return addRun(dst, o.c16[a:b], limit)
	case 32:
		return addRun(dst, o.c32[a:b], limit)
	default:
		return addRun(dst, o.c64[a:b], limit)
	}
}

// addRun adds src into dst element-wise and returns how many it added before one
// would exceed limit.
func addRun[D, S counter](dst []D, src []S, limit uint64) int {
	dst = dst[:len(src)]
	for k, c := range src {
		if c == 0 {
			continue
		}
		v := uint64(dst[k]) + uint64(c) // 64-bit counters wrap like the total count (2^64 samples)
		if v > limit {
			return k
		}
		dst[k] = D(v)
	}
	return len(src)
}

// sum is the total of buckets [from, to] (clipped to the live range).
func (st *store) sum(from, to int) uint64 {
	from, to = max(from, st.lo), min(to, st.hi)
	if from > to {
		return 0
	}
	if !st.dense {
		return st.sumSparse(from, to)
	}
	a, b := from-st.off, to-st.off+1
	switch st.width {
	case 8:
		return sumOf(st.c8[a:b])
	case 16:
		return sumOf(st.c16[a:b])
	case 32:
		return sumOf(st.c32[a:b])
	default:
		return sumOf(st.c64[a:b])
	}
}

func sumOf[T counter](xs []T) uint64 {
	var n uint64
	for _, x := range xs {
		n += uint64(x)
	}
	return n
}

// rankIndex returns the bucket holding the k-th counted value (1-based) after skip
// values below the store, and false when the store holds fewer than k−skip.
func (st *store) rankIndex(k, skip uint64) (int, bool) {
	if st.empty() || k <= skip {
		return 0, false
	}
	if !st.dense {
		return st.rankSparse(k - skip)
	}
	a, b := st.lo-st.off, st.hi-st.off+1
	var p int
	var ok bool
	switch st.width {
	case 8:
		p, ok = rankIn(st.c8[a:b], k-skip)
	case 16:
		p, ok = rankIn(st.c16[a:b], k-skip)
	case 32:
		p, ok = rankIn(st.c32[a:b], k-skip)
	default:
		p, ok = rankIn(st.c64[a:b], k-skip)
	}
	return st.lo + p, ok
}

func rankIn[T counter](xs []T, k uint64) (int, bool) {
	var cum uint64
	for i, x := range xs {
		cum += uint64(x)
		if cum >= k {
			return i, true
		}
	}
	return 0, false
}

func widen[F, T counter](from []F) []T {
	to := make([]T, len(from), cap(from))
	for i, c := range from {
		to[i] = T(c)
	}
	return to
}

// foldBelow zeroes the buckets below lo and returns their total, to be added to bucket lo.
func (st *store) foldBelow(lo int) uint64 {
	var sum uint64
	for i := st.lo; i < lo && i <= st.hi; i++ {
		p := i - st.off
		switch st.width {
		case 8:
			sum += uint64(st.c8[p])
			st.c8[p] = 0
		case 16:
			sum += uint64(st.c16[p])
			st.c16[p] = 0
		case 32:
			sum += uint64(st.c32[p])
			st.c32[p] = 0
		default:
			sum += st.c64[p]
			st.c64[p] = 0
		}
	}
	if st.hi < lo {
		st.lo, st.hi = 1, 0
	} else if st.lo < lo {
		st.lo = lo
	}
	return sum
}

// relocate makes the buffer cover [lo, hi], keeping the counts of [st.lo, st.hi].
func (st *store) relocate(lo, hi int) {
	switch st.width {
	case 8:
		st.c8 = relocate(st.c8, st, lo, hi)
	case 16:
		st.c16 = relocate(st.c16, st, lo, hi)
	case 32:
		st.c32 = relocate(st.c32, st, lo, hi)
	default:
		st.c64 = relocate(st.c64, st, lo, hi)
	}
}

func relocate[T counter](buf []T, st *store, lo, hi int) []T {
	need := hi - lo + 1
	oldOff := st.off
	var dst []T
	if cap(buf) >= need {
		dst = buf[:cap(buf)]
	} else {
		n := min(need+2*growSlack, MaxBuckets+2*growSlack)
		n = max(n, need+need/2)
		n = min(n, max(need, MaxBuckets))
		dst = make([]T, n)
	}
	// Centre the needed range in the buffer so growth in either direction is cheap.
	newOff := lo - (len(dst)-need)/2
	if st.empty() {
		clear(dst)
	} else {
		// copy is a memmove, so an in-place shift is safe; then clear what it left behind.
		a, b := st.lo-newOff, st.hi-newOff+1
		copy(dst[a:b], buf[st.lo-oldOff:st.hi-oldOff+1])
		clear(dst[:a])
		clear(dst[b:])
	}
	st.off = newOff
	return dst
}
