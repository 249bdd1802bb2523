package quantile

import (
	"math"
	"slices"
)

// A store starts sparse: sorted (index, count) pairs, 8 bytes per non-empty
// bucket. A slice of a low-volume series holds a handful of values, and a
// dense run from 1 µs to 3,000 s would cost 4 KB for two of them
// (connector README, "Trust": window memory is bounded whatever the
// values). It turns dense once the pairs would cost more than the dense run,
// a count outgrows 32 bits, or the range needs the cap's folding. "Cost"
// counts the pairs' buffer as append holds it, not just the pairs in use.

// pair is one non-empty bucket of a sparse store.
type pair struct {
	idx int32
	n   uint32
}

// sparseMin is the number of pairs a store may always hold before it
// compares its cost with a dense run.
const sparseMin = 16

// find is the position of bucket i among the pairs, or where it would go.
// A plain loop on the index: slices.BinarySearchFunc's comparison closure
// cost three times as much per step.
func (st *store) find(i int) (int, bool) {
	pairs, x := st.pairs, int32(i)
	lo, hi := 0, len(pairs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pairs[m].idx < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(pairs) && pairs[lo].idx == x
}

// addSparse adds n to bucket i of a sparse store, or turns it dense and
// returns false for add to finish.
func (st *store) addSparse(i int, n uint64) bool {
	if n == 0 {
		return true
	}
	if i >= st.lo && i <= st.hi {
		// Within the range held (the common case once a slice has seen
		// its spread): no range check, and a bucket already there is one
		// search and one add.
		if p, found := st.find(i); found {
			if c := uint64(st.pairs[p].n) + n; c <= math.MaxUint32 {
				st.pairs[p].n = uint32(c)
				return true
			}
		}
	}
	lo, hi := i, i
	if !st.empty() {
		lo, hi = min(st.lo, i), max(st.hi, i)
	}
	if hi-lo+1 > MaxBuckets || i < math.MinInt32 || i > math.MaxInt32 {
		st.densify()
		return false
	}
	p, found := st.find(i)
	if found {
		if c := uint64(st.pairs[p].n) + n; c <= math.MaxUint32 {
			st.pairs[p].n = uint32(c)
			return true
		}
		st.densify()
		return false
	}
	if n > math.MaxUint32 || (len(st.pairs) >= sparseMin && st.denseNoDearer(hi-lo+1)) {
		st.densify()
		return false
	}
	st.pairs = slices.Insert(st.pairs, p, pair{idx: int32(i), n: uint32(n)})
	st.lo, st.hi = lo, hi
	return true
}

// denseNoDearer reports whether a dense run over span buckets would hold
// no more memory than the pairs after one more: the pairs' buffer as it is,
// or as append would grow it when it is full. Turning dense early saves the
// search and the insert of every later sample.
func (st *store) denseNoDearer(span int) bool {
	held := len(st.pairs) + 1
	if c := cap(st.pairs); held > c {
		// append's growth: doubling below 256 elements, then a quarter
		// and 192 more (before rounding to a size class).
		if held = 2 * c; c >= 256 {
			held = c + (c+3*256)/4
		}
	}
	return held*8 >= span+2*growSlack
}

// densify moves a sparse store's counts into a dense run.
func (st *store) densify() {
	if st.dense {
		return
	}
	pairs := st.pairs
	st.dense, st.pairs = true, nil
	st.lo, st.hi = 1, 0
	if st.width == 0 {
		st.width = 8
	}
	if len(pairs) == 0 {
		return
	}
	lo, hi := int(pairs[0].idx), int(pairs[len(pairs)-1].idx)
	st.relocate(lo, hi)
	st.lo, st.hi = lo, hi
	for _, p := range pairs {
		st.inc(int(p.idx)-st.off, uint64(p.n))
	}
}

func (st *store) getSparse(i int) uint64 {
	if p, ok := st.find(i); ok {
		return uint64(st.pairs[p].n)
	}
	return 0
}

func (st *store) sumSparse(from, to int) uint64 {
	var n uint64
	for _, p := range st.pairs {
		if int(p.idx) >= from && int(p.idx) <= to {
			n += uint64(p.n)
		}
	}
	return n
}

func (st *store) rankSparse(k uint64) (int, bool) {
	var cum uint64
	for _, p := range st.pairs {
		cum += uint64(p.n)
		if cum >= k {
			return int(p.idx), true
		}
	}
	return 0, false
}
