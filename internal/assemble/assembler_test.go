package assemble

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// sp is a test span: trace t, id, parent (0: none); names are "t/id".
type sp struct {
	t, id, parent byte
	root          bool
}

func (s sp) ref() Ref {
	r := Ref{Trace: [16]byte{s.t}, ID: [8]byte{s.id}, Root: s.root || s.parent == 0}
	if s.parent != 0 {
		r.Parent = [8]byte{s.parent}
	}
	return r
}

func (s sp) name() string { return string([]byte{'a' + s.t, '0' + s.id}) }

// step is one call on the assembler and what it must give.
type step struct {
	at     time.Duration // since t0
	batch  []sp          // Admit
	expire bool          // Expire
	flush  bool          // Flush

	pass, late []string // names passed / late in the batch
	out        []string // released groups, "reason:name name" sorted within a group
}

func run(t *testing.T, a *Assembler[string], steps []step) {
	t.Helper()
	for k, s := range steps {
		now := t0.Add(s.at)
		var rel []Released[string]
		var pass, late []string
		switch {
		case s.batch != nil:
			refs := make([]Ref, len(s.batch))
			for i, x := range s.batch {
				refs[i] = x.ref()
			}
			v := make([]Verdict, len(refs))
			rel = a.Admit(now, refs, v, func(i int) (string, int64) { return s.batch[i].name(), 100 })
			for i, x := range v {
				switch x {
				case Pass:
					pass = append(pass, s.batch[i].name())
				case Late:
					late = append(late, s.batch[i].name())
				}
			}
		case s.expire:
			rel = a.Expire(now)
		case s.flush:
			rel = a.Flush()
		}
		var out []string
		for _, r := range rel {
			items := slices.Clone(r.Items)
			slices.Sort(items)
			out = append(out, r.Reason.String()+":"+strings.Join(items, " "))
		}
		if !slices.Equal(pass, s.pass) || !slices.Equal(late, s.late) || !slices.Equal(out, s.out) {
			t.Fatalf("step %d: pass %v late %v out %v; want pass %v late %v out %v", k, pass, late, out, s.pass, s.late, s.out)
		}
	}
}

// assemblerConfig is the config of TestAssembler's cases that set none.
var assemblerConfig = Config{Wait: 10 * time.Second, MaxBytes: 1 << 20, Remember: 100}

// assemblerCases are TestAssembler's steps and what each passes or releases.
var assemblerCases = []struct {
	name  string
	cfg   Config
	steps []step
}{
	{
		name: "complete batch passes, nothing held",
		steps: []step{
			{batch: []sp{{1, 2, 1, false}, {1, 1, 0, false}, {1, 3, 2, false}}, pass: []string{"b2", "b1", "b3"}},
			{flush: true},
		},
	},
	{
		name: "children first, root later: released with the root",
		steps: []step{
			{batch: []sp{{1, 2, 1, false}, {1, 3, 2, false}}},
			{at: 2 * time.Second, batch: []sp{{1, 1, 0, false}}, pass: []string{"b1"}, out: []string{"with_root:b2 b3"}},
			{at: time.Minute, expire: true},
		},
	},
	{
		name: "ancestry through held spans: grandchild first, then child, then root",
		steps: []step{
			{batch: []sp{{1, 3, 2, false}}},
			{at: time.Second, batch: []sp{{1, 2, 1, false}}},
			{at: 2 * time.Second, batch: []sp{{1, 4, 1, false}, {1, 1, 0, false}}, pass: []string{"b4", "b1"}, out: []string{"with_root:b2 b3"}},
		},
	},
	{
		name: "two local roots of one trace: each takes only its own children",
		steps: []step{
			// server span 5 (remote parent 9) and server span 7 (remote parent 9), children 6 and 8
			{batch: []sp{{1, 6, 5, false}, {1, 8, 7, false}}},
			{at: time.Second, batch: []sp{{1, 5, 9, true}}, pass: []string{"b5"}, out: []string{"with_root:b6"}},
			{at: 11 * time.Second, expire: true, out: []string{"expired:b8"}},
		},
	},
	{
		name: "a local root with a remote parent never waits",
		steps: []step{
			{batch: []sp{{1, 5, 9, true}, {1, 6, 5, false}}, pass: []string{"b5", "b6"}},
		},
	},
	{
		name: "late child after its root: sent at once, with its held children",
		steps: []step{
			{batch: []sp{{1, 1, 0, false}}, pass: []string{"b1"}},
			{at: time.Second, batch: []sp{{1, 3, 2, false}}},
			{at: 2 * time.Second, batch: []sp{{1, 2, 1, false}}, late: []string{"b2"}, out: []string{"after_root:b3"}},
			{at: 3 * time.Second, batch: []sp{{1, 4, 3, false}}, late: []string{"b4"}},
		},
	},
	{
		name: "expiry: each group with its held ancestors and descendants, oldest first",
		steps: []step{
			{batch: []sp{{1, 3, 2, false}, {2, 3, 2, false}}},
			{at: 5 * time.Second, batch: []sp{{1, 2, 1, false}, {1, 4, 1, false}}},
			{at: 9 * time.Second, expire: true},
			{at: 10 * time.Second, expire: true, out: []string{"expired:b2 b3", "expired:c3"}},
			{at: 15 * time.Second, expire: true, out: []string{"expired:b4"}},
			// the parent of what expired was sent: a child of b3 is late
			{at: 16 * time.Second, batch: []sp{{1, 5, 3, false}}, late: []string{"b5"}},
		},
	},
	{
		name: "byte bound: the oldest group goes first",
		cfg:  Config{Wait: time.Minute, MaxBytes: 250, Remember: 100},
		steps: []step{
			{batch: []sp{{1, 3, 2, false}, {2, 3, 2, false}}},
			{at: time.Second, batch: []sp{{1, 2, 1, false}}, out: []string{"memory_bound:b2 b3"}},
			{at: 2 * time.Second, batch: []sp{{3, 3, 2, false}}},
			{flush: true, out: []string{"shutdown:c3", "shutdown:d3"}},
		},
	},
	{
		name: "exactly at the byte bound: nothing pushed out",
		cfg:  Config{Wait: time.Minute, MaxBytes: 200, Remember: 100},
		steps: []step{
			{batch: []sp{{1, 3, 2, false}, {2, 3, 2, false}}},
			{flush: true, out: []string{"shutdown:b3", "shutdown:c3"}},
		},
	},
	{
		name: "a group pushed out by the bound leaves its held siblings to their root",
		cfg:  Config{Wait: time.Minute, MaxBytes: 250, Remember: 100},
		steps: []step{
			// b2 and b3 are siblings under the absent b1; c5 pushes b2 out
			{batch: []sp{{1, 2, 1, false}, {1, 3, 1, false}}},
			{at: time.Second, batch: []sp{{2, 5, 4, false}}, out: []string{"memory_bound:b2"}},
			{at: 2 * time.Second, batch: []sp{{1, 1, 0, false}}, pass: []string{"b1"}, out: []string{"with_root:b3"}},
			{flush: true, out: []string{"shutdown:c5"}},
		},
	},
	{
		name: "Remember 0: a child after its root is not known late, it waits",
		cfg:  Config{Wait: 10 * time.Second, MaxBytes: 1 << 20, Remember: 0},
		steps: []step{
			{batch: []sp{{1, 1, 0, false}}, pass: []string{"b1"}},
			{at: time.Second, batch: []sp{{1, 2, 1, false}}},
			{at: 11 * time.Second, expire: true, out: []string{"expired:b2"}},
		},
	},
	{
		name: "shutdown flushes all and passes everything after",
		steps: []step{
			{batch: []sp{{1, 3, 2, false}, {1, 2, 1, false}, {2, 9, 8, false}}},
			{flush: true, out: []string{"shutdown:b2 b3", "shutdown:c9"}},
			{batch: []sp{{1, 4, 1, false}}, pass: []string{"b4"}},
		},
	},
	{
		name: "cycle without a root waits, then expires whole",
		steps: []step{
			{batch: []sp{{1, 2, 3, false}, {1, 3, 2, false}}},
			{at: 10 * time.Second, expire: true, out: []string{"expired:b2 b3"}},
		},
	},
	{
		name: "self-parent waits and expires",
		steps: []step{
			{batch: []sp{{1, 2, 2, false}}},
			{at: 10 * time.Second, expire: true, out: []string{"expired:b2"}},
		},
	},
}

func TestAssembler(t *testing.T) {
	for _, tt := range assemblerCases {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg
			if c.Wait == 0 {
				c = assemblerConfig
			}
			a := New[string](c)
			run(t, a, tt.steps)
		})
	}
}

func TestLocalRoot(t *testing.T) {
	p := [8]byte{1}
	tests := []struct {
		name   string
		parent [8]byte
		flags  uint32
		server bool
		want   bool
	}{
		{"no parent", [8]byte{}, 0, false, true},
		{"flags: remote parent", p, FlagHasIsRemote | FlagIsRemote, false, true},
		{"flags: local parent, even a server span", p, FlagHasIsRemote, true, false},
		{"no flags: server or consumer", p, 0, true, true},
		{"no flags: internal", p, 0, false, false},
		{"IS_REMOTE without HAS_IS_REMOTE: kind decides", p, FlagIsRemote, false, false},
		{"trace flags bits ignored", p, 0x01 | FlagHasIsRemote | FlagIsRemote, false, true},
	}
	for _, tt := range tests {
		if got := LocalRoot(tt.parent, tt.flags, tt.server); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
}

// TestExactlyOnce sends random traces, split and shuffled across batches,
// with random expiries and a small byte bound: every span comes out exactly
// once, and the bytes held never exceed the bound.
func TestExactlyOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		a := New[int](Config{Wait: 5 * time.Second, MaxBytes: int64(rng.IntN(40)+1) * 100, Remember: rng.IntN(50)})
		spans := randomSpans(rng, round)
		seen := make([]int, len(spans))
		note := func(idx []int) {
			for _, i := range idx {
				seen[i]++
			}
		}
		now := t0
		for off := 0; off < len(spans); {
			n := min(1+rng.IntN(15), len(spans)-off)
			admitRandomly(a, now, spans[off:off+n], off, note)
			if a.Bytes() > a.cfg.MaxBytes {
				t.Fatalf("round %d: %d bytes held over the bound %d", round, a.Bytes(), a.cfg.MaxBytes)
			}
			off += n
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			if rng.IntN(3) == 0 {
				for _, r := range a.Expire(now) {
					note(r.Items)
				}
			}
		}
		for _, r := range a.Flush() {
			note(r.Items)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("round %d: span %d came out %d times", round, i, c)
			}
		}
		if a.Bytes() != 0 || len(a.traces) != 0 {
			t.Fatalf("round %d: %d bytes, %d traces left after flush", round, a.Bytes(), len(a.traces))
		}
	}
}

// randomSpans are up to 20 traces of up to 12 spans, shuffled: children of
// earlier spans, roots, some with a remote or lost parent, a few with a
// repeated id.
func randomSpans(rng *rand.Rand, round int) []Ref {
	var spans []Ref
	for tr := range 1 + rng.IntN(20) {
		n := 1 + rng.IntN(12)
		for i := range n {
			r := Ref{Trace: [16]byte{byte(tr), byte(round)}, ID: [8]byte{byte(i + 1), 7}}
			if i > 0 {
				r.Parent = [8]byte{byte(rng.IntN(i) + 1), 7}
			} else if rng.IntN(4) == 0 {
				r.Parent = [8]byte{99} // remote, or lost
				r.Root = rng.IntN(2) == 0
			}
			r.Root = r.Root || r.Parent == [8]byte{}
			if rng.IntN(30) == 0 {
				r.ID = [8]byte{1, 7} // a repeated id
			}
			spans = append(spans, r)
		}
	}
	rng.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
	return spans
}

// admitRandomly admits refs, the spans from off on, and notes the index of
// each span that comes out: passed, or released.
func admitRandomly(a *Assembler[int], now time.Time, refs []Ref, off int, note func([]int)) {
	v := make([]Verdict, len(refs))
	rel := a.Admit(now, refs, v, func(i int) (int, int64) { return off + i, 100 })
	for i, x := range v {
		if x != Held {
			note([]int{off + i})
		}
	}
	for _, r := range rel {
		note(r.Items)
	}
}

func TestRecentTwoGenerations(t *testing.T) {
	r := newRecent(2)
	k := func(b byte) spanKey { return spanKey{id: [8]byte{b}} }
	r.add(k(1))
	r.add(k(2))
	r.add(k(3)) // 1,2 become old
	if !r.has(k(1)) || !r.has(k(3)) {
		t.Fatal("the last two generations are remembered")
	}
	r.add(k(4))
	r.add(k(5)) // 3,4 become old, 1,2 forgotten
	if r.has(k(1)) || !r.has(k(3)) || !r.has(k(5)) {
		t.Fatal("the oldest generation is forgotten")
	}
}

// TestHeld: a span is held from its Admit until it comes out, whichever way.
func TestHeld(t *testing.T) {
	cfg := Config{Wait: 10 * time.Second, MaxBytes: 1 << 20, Remember: 100}
	child, root := sp{1, 2, 1, false}, sp{1, 1, 0, false}
	held := func(a *Assembler[string], s sp) bool { r := s.ref(); return a.Held(r.Owner, r.Trace, r.ID) }
	tests := []struct {
		name  string
		steps []step
		want  bool // child held after the steps
	}{
		{"never admitted", nil, false},
		{"waiting for its root", []step{{batch: []sp{child}}}, true},
		{"released with its root", []step{{batch: []sp{child}}, {batch: []sp{root}, pass: []string{"b1"}, out: []string{"with_root:b2"}}}, false},
		{"released with its root while its trace holds another span", []step{
			{batch: []sp{child, {1, 5, 4, false}}},
			{batch: []sp{root}, pass: []string{"b1"}, out: []string{"with_root:b2"}},
		}, false},
		{"expired", []step{{batch: []sp{child}}, {at: 10 * time.Second, expire: true, out: []string{"expired:b2"}}}, false},
		{"flushed", []step{{batch: []sp{child}}, {flush: true, out: []string{"shutdown:b2"}}}, false},
		{"passed with its root in one batch", []step{{batch: []sp{child, root}, pass: []string{"b2", "b1"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New[string](cfg)
			run(t, a, tt.steps)
			if got := held(a, child); got != tt.want {
				t.Fatalf("Held(child) = %v, want %v", got, tt.want)
			}
			if held(a, sp{2, 2, 1, false}) {
				t.Fatal("a span of another trace is held")
			}
		})
	}
}

// TestFifoStaysBounded: under steady traffic (a child held, then released by
// its root, with Expire ticking in between) the assembler's arrival list is
// compacted instead of growing with every span it ever held.
func TestFifoStaysBounded(t *testing.T) {
	a := New[string](Config{Wait: time.Hour, MaxBytes: 1 << 30, Remember: 100})
	for i := range 5000 {
		tr := [16]byte{byte(i), byte(i >> 8)}
		v := make([]Verdict, 1)
		a.Admit(t0, []Ref{{Trace: tr, ID: [8]byte{2}, Parent: [8]byte{1}}}, v, func(int) (string, int64) { return "child", 100 })
		if v[0] != Held {
			t.Fatalf("round %d: the child is %v, not held", i, v[0])
		}
		a.Expire(t0) // nothing is due; the front moves past what was released
		rel := a.Admit(t0, []Ref{{Trace: tr, ID: [8]byte{1}, Root: true}}, v, func(int) (string, int64) { return "root", 100 })
		if len(rel) != 1 {
			t.Fatalf("round %d: %d groups released with the root", i, len(rel))
		}
	}
	if fifo := a.owners[0].fifo; len(fifo) > 2100 {
		t.Fatalf("the arrival list holds %d entries after 5,000 spans, none of them held", len(fifo))
	}
}

// TestOwnersNeverAssembleTogether: the same trace and span ids under two
// owners: one owner's root releases only its own held children, and one
// owner's sent span makes no child of another's late.
func TestOwnersNeverAssembleTogether(t *testing.T) {
	a := New[string](Config{Wait: time.Hour, MaxBytes: 1 << 20, Remember: 100})
	tr := [16]byte{1}
	v := make([]Verdict, 1)
	admit := func(r Ref, name string) []Released[string] {
		r.Trace = tr
		return a.Admit(t0, []Ref{r}, v, func(int) (string, int64) { return name, 100 })
	}
	steps := []struct {
		ref      Ref
		name     string
		want     Verdict
		released []string
	}{
		{Ref{Owner: 1, ID: [8]byte{2}, Parent: [8]byte{1}}, "one's child", Held, nil},
		{Ref{Owner: 2, ID: [8]byte{1}, Root: true}, "two's root: releases nothing of one's", Pass, nil},
		{Ref{Owner: 2, ID: [8]byte{3}, Parent: [8]byte{1}}, "two's child: its own root was sent", Late, nil},
		{Ref{Owner: 1, ID: [8]byte{4}, Parent: [8]byte{1}}, "one's other child: one's root was not sent, whatever two sent", Held, nil},
		{Ref{Owner: 1, ID: [8]byte{1}, Root: true}, "one's root", Pass, []string{"one's child", "one's other child: one's root was not sent, whatever two sent"}},
	}
	for _, st := range steps {
		rel := admit(st.ref, st.name)
		if v[0] != st.want {
			t.Fatalf("%s: %v, want %v", st.name, v[0], st.want)
		}
		var got []string
		for _, r := range rel {
			got = append(got, r.Items...)
		}
		slices.Sort(got)
		if !slices.Equal(got, st.released) {
			t.Fatalf("%s: released %q, want %q", st.name, got, st.released)
		}
	}
}

// TestChurnPushesOutOnlyItsOwn: two owners share 1,000 bytes (500 each). A
// quiet owner holds 3 spans; a churning one holds 100: only the churner's
// oldest are pushed out. When the quiet one grows to its share, the churner
// gives way to it.
func TestChurnPushesOutOnlyItsOwn(t *testing.T) {
	a := New[int](Config{Wait: time.Hour, MaxBytes: 1000, Remember: 100})
	v := make([]Verdict, 1)
	admit := func(owner uint32, i int) (pushed []int) {
		r := Ref{Owner: owner, Trace: [16]byte{byte(i), byte(i >> 8)}, ID: [8]byte{2}, Parent: [8]byte{1}}
		for _, rel := range a.Admit(t0, []Ref{r}, v, func(int) (int, int64) { return int(owner)*1000 + i, 100 }) {
			if rel.Reason != MemoryBound {
				t.Fatalf("released %v", rel.Reason)
			}
			pushed = append(pushed, rel.Items...)
		}
		return pushed
	}
	for i := range 3 {
		admit(1, i)
	}
	var pushed []int
	for i := range 100 {
		pushed = append(pushed, admit(2, i)...)
	}
	if len(pushed) != 93 || pushed[0] != 2000 || slices.Min(pushed) < 2000 {
		t.Fatalf("pushed out %v; want the churner's 93 oldest (it keeps the 700 bytes left)", pushed)
	}
	for i := range 3 {
		if !a.Held(1, [16]byte{byte(i)}, [8]byte{2}) {
			t.Fatalf("quiet span %d pushed out", i)
		}
	}
	for i := 3; i < 5; i++ {
		if got := admit(1, i); len(got) != 1 || got[0] < 2000 {
			t.Fatalf("quiet span %d pushed out %v; want one of the churner's, furthest past its share", i, got)
		}
	}
	if a.Bytes() > 1000 {
		t.Fatalf("%d bytes held", a.Bytes())
	}
}

// TestTieGivesWayFirstArrived: two owners holding as much as each other
// when the bound is passed: the one that first held a span gives way.
func TestTieGivesWayFirstArrived(t *testing.T) {
	a := New[int](Config{Wait: time.Hour, MaxBytes: 1100, Remember: 100})
	v := make([]Verdict, 1)
	admit := func(owner uint32, i int) []Released[int] {
		r := Ref{Owner: owner, Trace: [16]byte{byte(i)}, ID: [8]byte{2}, Parent: [8]byte{1}}
		return a.Admit(t0, []Ref{r}, v, func(int) (int, int64) { return int(owner)*1000 + i, 100 })
	}
	for i := range 6 {
		admit(1, i)
	}
	for i := range 5 {
		admit(2, i)
	}
	rel := admit(2, 5) // 1,200 bytes, 600 each
	if len(rel) != 1 || rel[0].Items[0] != 1000 {
		t.Fatalf("released %v; want owner 1's oldest", rel)
	}
}

// TestForgetOnlyAnOwnerHoldingNothing: an owner holding a span is kept;
// once its span is out, Forget drops its state, and the owners left are
// all the assembler has.
func TestForgetOnlyAnOwnerHoldingNothing(t *testing.T) {
	a := New[string](Config{Wait: time.Hour, MaxBytes: 1 << 20, Remember: 100})
	v := make([]Verdict, 1)
	a.Admit(t0, []Ref{{Owner: 7, Trace: [16]byte{1}, ID: [8]byte{2}, Parent: [8]byte{1}}}, v, func(int) (string, int64) { return "child", 100 })
	if v[0] != Held {
		t.Fatalf("the child is %v, not held", v[0])
	}
	if a.Forget(7) {
		t.Fatal("an owner holding a span was forgotten")
	}
	a.Admit(t0, []Ref{{Owner: 7, Trace: [16]byte{1}, ID: [8]byte{1}, Root: true}}, v, func(int) (string, int64) { return "root", 100 })
	if !a.Forget(7) || !a.Forget(8) {
		t.Fatal("an owner holding nothing (or never seen) was kept")
	}
	if len(a.owners) != 0 || len(a.order) != 0 {
		t.Fatalf("%d owners, %d in order after the only one was forgotten", len(a.owners), len(a.order))
	}
}
