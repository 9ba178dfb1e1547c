package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"sync"
	"sync/atomic"
)

// envelopeOverhead is what an envelope costs beyond its item payloads (the
// headers, the outgoing struct), counted against the pending bounds.
const envelopeOverhead = 512

// pendingQueue is one project's envelopes between the push that built them
// and Sentry's answer. Pushes hand envelopes over and return; the project's
// own workers (at most max_concurrent_requests, started on demand, gone when
// the queue is empty) send them. The bytes it holds, queued and in flight,
// are bounded per project and, through shared, over all projects: one
// project's slow Sentry can hold at most its share, never the pipeline.
type pendingQueue struct {
	deliver    func(ctx context.Context, o *outgoing) // sends and accounts for one envelope
	ctx        context.Context                        // ends when the drain time after shutdown is over
	maxWorkers int
	maxBytes   int64
	shared     *pendingTotal

	mu      sync.Mutex
	entries []pendingEntry // FIFO from entries[head]; the array is reused once empty
	head    int
	bytes   int64 // queued and in flight
	workers int
	closed  bool
	room    chan struct{} // made by a push waiting for room, closed when bytes are given back
	idle    chan struct{} // made by waitIdle, closed when nothing is queued or in flight
}

// pendingTotal is the bytes all projects hold, against pending::max_bytes.
type pendingTotal struct {
	bytes atomic.Int64
	max   int64
}

type pendingEntry struct {
	o    *outgoing
	push *pushDone
	size int64
}

// pushDone runs release once every envelope of one push is settled: the
// push's container payloads and translated items live until then.
type pushDone struct {
	left    atomic.Int32
	release func()
}

func (d *pushDone) settle() {
	if d != nil && d.left.Add(-1) == 0 && d.release != nil {
		d.release()
	}
}

func newPendingQueue(ctx context.Context, maxWorkers int, maxBytes int64, shared *pendingTotal, deliver func(context.Context, *outgoing)) *pendingQueue {
	return &pendingQueue{deliver: deliver, ctx: ctx, maxWorkers: maxWorkers, maxBytes: maxBytes, shared: shared}
}

// size is what o counts against the bounds.
func (o *outgoing) size() int64 {
	n := int64(envelopeOverhead)
	for i := range o.env.Items {
		n += int64(len(o.env.Items[i].Payload))
	}
	return n
}

// offer queues o if it fits. When it does not and wait is set, it waits for
// room until ctx or the queue's own context ends. When o is not taken it
// returns why, for the caller to count: queue_overflow (no room), or
// network_error once the drain time after shutdown is over or the queue is
// closed (the project can no longer send).
func (q *pendingQueue) offer(ctx context.Context, o *outgoing, push *pushDone, wait bool) (taken bool, why reason) {
	size := o.size()
	for {
		q.mu.Lock()
		if q.closed || q.ctx.Err() != nil {
			q.mu.Unlock()
			return false, reasonNetworkError
		}
		if q.fits(size) {
			q.shared.bytes.Add(size)
			q.bytes += size
			q.entries = append(q.entries, pendingEntry{o: o, push: push, size: size})
			start := q.workers < q.maxWorkers
			if start {
				q.workers++
			}
			q.mu.Unlock()
			if start {
				go q.work()
			}
			return true, 0
		}
		if !wait {
			q.mu.Unlock()
			return false, reasonQueueOverflow
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return false, reasonQueueOverflow
		case <-q.ctx.Done():
			return false, reasonNetworkError
		}
	}
}

// fits: a project holding nothing always takes one envelope, however large,
// so that no envelope waits for room that can never come.
func (q *pendingQueue) fits(size int64) bool {
	if q.bytes == 0 {
		return true
	}
	return q.bytes+size <= q.maxBytes && q.shared.bytes.Load()+size <= q.shared.max
}

// work sends queued envelopes until none is left.
func (q *pendingQueue) work() {
	for {
		q.mu.Lock()
		if q.head == len(q.entries) {
			q.workers--
			if q.workers == 0 && q.idle != nil {
				close(q.idle)
				q.idle = nil
			}
			q.mu.Unlock()
			return
		}
		e := q.entries[q.head]
		q.entries[q.head] = pendingEntry{}
		q.head++
		if q.head == len(q.entries) {
			q.entries, q.head = q.entries[:0], 0
		}
		q.mu.Unlock()

		q.deliver(q.ctx, e.o)
		e.push.settle()

		q.mu.Lock()
		q.bytes -= e.size
		q.shared.bytes.Add(-e.size)
		if q.room != nil {
			close(q.room)
			q.room = nil
		}
		q.mu.Unlock()
	}
}

// close refuses new envelopes and waits until every taken one is settled
// (sent, or failed fast once the queue's context ended).
func (q *pendingQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.waitIdle()
}

// waitIdle returns once nothing is queued or in flight.
func (q *pendingQueue) waitIdle() {
	for {
		q.mu.Lock()
		if q.workers == 0 && q.head == len(q.entries) {
			q.mu.Unlock()
			return
		}
		if q.idle == nil {
			q.idle = make(chan struct{})
		}
		idle := q.idle
		q.mu.Unlock()
		<-idle
	}
}

// pendingBytes is what the project holds now.
func (q *pendingQueue) pendingBytes() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}
