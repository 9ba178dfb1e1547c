package translate

// countSkipSegments counts the segments group would make of s.skip, whose
// parent indexes are set. Every span with no parent is a segment. The others
// are below a segment or on (or below) a cycle of parents: st is -1 for the
// former, -2 for the latter, and i+1 while on the chain being followed from
// span i.
func (s *state) countSkipSegments() int {
	sk := s.skip
	st := grow(s.skipSt, len(sk))
	clear(st)
	segs := 0
	for i := range sk {
		if sk[i].parentIdx < 0 {
			segs++
			st[i] = -1
		}
	}
	unrooted := 0
	for i := range sk {
		if st[i] == 0 {
			unrooted += markChain(sk, st, int32(i))
		}
	}
	s.skipSt = st
	if unrooted > 0 {
		segs += s.countCycles(sk, st)
	}
	return segs
}

// markChain follows the parents from span i up to a span already marked,
// and marks the chain as that span is marked (-1: below a segment), or -2
// when the chain closed on itself (a cycle). It returns how many spans it
// marked -2.
func markChain(sk []skipRef, st []int32, i int32) (unrooted int) {
	mark := i + 1
	j := i
	for st[j] == 0 {
		st[j] = mark
		j = sk[j].parentIdx // never -1: those are marked already
	}
	res := st[j]
	if res == mark {
		res = -2 // the chain closed on itself: a cycle
	}
	for k := i; st[k] == mark; k = sk[k].parentIdx {
		st[k] = res
		if res == -2 {
			unrooted++
		}
	}
	return unrooted
}

// countCycles counts the segments group makes of the spans that no segment
// reaches (st -2): in input order, each one not yet visited becomes a segment
// and its descendants are visited. Child lists are those group builds.
func (s *state) countCycles(sk []skipRef, st []int32) int {
	n := len(sk)
	child := grow(s.tspans, n)
	next := grow(s.order, n)
	for i := range child {
		child[i] = -1
	}
	for i := range sk {
		if st[i] == -2 {
			p := sk[i].parentIdx
			next[i] = child[p]
			child[p] = int32(i)
		}
	}
	cuts := 0
	stack := s.stack[:0]
	for i := range sk {
		if st[i] != -2 {
			continue
		}
		cuts++
		st[i] = -3 // visited
		stack = visitCycle(append(stack[:0], int32(i)), child, next, st)
	}
	s.tspans, s.order, s.stack = child, next, stack
	return cuts
}

// visitCycle marks visited (-3) every span below those on stack that no
// segment reaches, and returns the emptied stack for reuse.
func visitCycle(stack, child, next, st []int32) []int32 {
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := child[j]; c >= 0; c = next[c] {
			if st[c] == -2 {
				st[c] = -3
				stack = append(stack, c)
			}
		}
	}
	return stack
}
