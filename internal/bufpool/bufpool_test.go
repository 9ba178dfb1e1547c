package bufpool

import "testing"

func TestReleaseGivesBackOnce(t *testing.T) {
	var p Pool
	if p.Releaser(nil) != nil {
		t.Fatal("a buffer with no capacity got a releaser")
	}
	var none *Releaser
	none.Release() // nil: nothing to give back, no panic

	b := p.Get(64)
	if len(b) != 0 || cap(b) < 64 {
		t.Fatalf("Get(64) = len %d cap %d", len(b), cap(b))
	}
	r := p.Releaser(append(b, "x"...))
	r.Release()
	r.Release() // a second release must not put the buffer in the pool twice
	first, second := p.Get(1), p.Get(1)
	if cap(first) > 0 && cap(second) > 0 && &first[:1][0] == &second[:1][0] {
		t.Fatal("one buffer handed to two holders")
	}
}

func TestGetSkipsABufferTooSmall(t *testing.T) {
	var p Pool
	p.Releaser(make([]byte, 0, 8)).Release()
	if b := p.Get(1024); cap(b) < 1024 {
		t.Fatalf("Get(1024) gave cap %d", cap(b))
	}
}
