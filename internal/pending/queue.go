package pending

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/send"
)

// workerLinger is how long a worker whose queue ran empty waits for the next
// envelope before it ends. Envelopes come in bursts, one per push; a new
// goroutine per envelope of each burst grew its stack again through the HTTP
// client and the compressor (8 % of the collector's CPU under make compare's
// load, in runtime.newstack).
const workerLinger = time.Second

// Queue is one project's envelopes between the push that built them
// and Sentry's answer. Pushes hand envelopes over and return; the project's
// own workers (at most its adaptive concurrency limit, itself at most
// max_concurrent_requests; started on demand, gone workerLinger after the
// queue ran empty, or at close) send them. The bytes
// it holds, queued and in flight, are bounded per project and, through
// shared, over all projects: one project's slow Sentry can hold at most its
// share, never the pipeline.
type Queue struct {
	deliver    func(ctx context.Context, o *encode.Outgoing) // sends and accounts for one envelope
	ctx        context.Context                               // ends when the drain time after shutdown is over
	maxWorkers int
	// Allowed, when set, is how many workers are worth running now: the
	// project's adaptive concurrency limit (internal/admit). No new worker
	// starts beyond it; workers already running when the limit falls go on
	// until the queue is empty, each waiting in admit for a place, so a hung
	// project still holds only as many requests as its limit allows.
	Allowed  func() int
	linger   time.Duration // workerLinger; tests shorten it
	MaxBytes int64         // pending::max_bytes_per_project; set before the first Offer (tests lower it)
	shared   *Total

	mu      sync.Mutex
	entries []entry // FIFO from entries[head]; the array is reused once empty
	head    int
	bytes   int64 // queued and in flight
	workers int   // started and not ended, parked ones included
	parked  int   // workers waiting for the next envelope
	closed  bool
	waiters []*roomWaiter // pushes waiting for room, first come first served
	idle    chan struct{} // made by waitUntil, closed when a worker parks or ends
	wake    chan struct{} // one token per parked worker called back to work
	quit    chan struct{} // closed by close: parked workers end
}

// Total is the bytes all projects hold, against pending::max_bytes.
// Up to share (max_bytes / routing::max_projects, at most the per-project
// bound) a project takes envelopes whatever the total: when many hanging
// projects have filled the total, the healthy ones keep flowing. The total
// can so reach max + max_projects × share ≤ 2 × max.
type Total struct {
	bytes atomic.Int64
	Max   int64 // pending::max_bytes
	Share int64 // what a project may hold whatever the total
}

type entry struct {
	o    *encode.Outgoing
	push *Push
	size int64
}

// Push runs release once every envelope of one push is settled: the
// push's container payloads and translated items live until then.
type Push struct {
	left    atomic.Int32
	release func()
}

// NewPush is a push of n envelopes; release may be nil.
func NewPush(n int, release func()) *Push {
	d := &Push{release: release}
	d.left.Store(int32(n))
	return d
}

// Settle marks one envelope of the push settled (sent, or dropped and counted).
func (d *Push) Settle() {
	if d != nil && d.left.Add(-1) == 0 && d.release != nil {
		d.release()
	}
}

// New is one project's queue: at most maxWorkers workers, at most maxBytes
// held, within shared; deliver sends and accounts for one envelope.
func New(ctx context.Context, maxWorkers int, maxBytes int64, shared *Total, deliver func(context.Context, *encode.Outgoing)) *Queue {
	return &Queue{
		deliver: deliver, ctx: ctx, maxWorkers: maxWorkers, linger: workerLinger, MaxBytes: maxBytes, shared: shared,
		wake: make(chan struct{}, maxWorkers), quit: make(chan struct{}),
	}
}

// Offer queues o if it fits. When it does not and wait is set, it waits for
// room, first come first served, until ctx or the queue's own context ends:
// a large envelope is never overtaken for ever by small ones. When o is not
// taken it returns why, for the caller to count: queue_overflow (no room), or
// network_error once the drain time after shutdown is over or the queue is
// closed (the project can no longer send).
func (q *Queue) Offer(ctx context.Context, o *encode.Outgoing, push *Push, wait bool) (taken bool, why account.Reason) {
	size := send.EnvelopeSize(&o.Env) // what o counts against the bounds
	q.mu.Lock()
	if q.closed || q.ctx.Err() != nil {
		q.mu.Unlock()
		return false, account.ReasonNetworkError
	}
	if len(q.waiters) == 0 && q.fits(size) {
		start := q.takeLocked(entry{o: o, push: push, size: size})
		q.mu.Unlock()
		if start {
			go q.work()
		}
		return true, 0
	}
	if !wait {
		q.mu.Unlock()
		return false, account.ReasonQueueOverflow
	}
	w := &roomWaiter{entry: entry{o: o, push: push, size: size}, admitted: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()
	select {
	case <-w.admitted:
		return true, 0
	case <-ctx.Done():
		why = account.ReasonQueueOverflow
	case <-q.ctx.Done():
		why = account.ReasonNetworkError
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-w.admitted: // admitted while giving up: it is queued
		return true, 0
	default:
	}
	for i, x := range q.waiters {
		if x == w {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			break
		}
	}
	q.startWorkers(q.admitWaitersLocked()) // the next waiter may fit where this one did not
	return false, why
}

// roomWaiter is a push waiting for room (single project, back-pressure).
type roomWaiter struct {
	entry    entry
	admitted chan struct{} // closed once entry is queued
}

// takeLocked queues e; true when the caller must start a worker for it (none
// is parked and fewer than maxWorkers run).
func (q *Queue) takeLocked(e entry) bool {
	q.shared.bytes.Add(e.size)
	q.bytes += e.size
	q.entries = append(q.entries, e)
	if q.parked > 0 {
		q.parked--
		q.wake <- struct{}{} // never blocks: at most one token per parked worker
		return false
	}
	if q.workers < q.workerCap() {
		q.workers++
		return true
	}
	return false
}

// workerCap is the most workers worth running now.
func (q *Queue) workerCap() int {
	if q.Allowed == nil {
		return q.maxWorkers
	}
	return min(q.Allowed(), q.maxWorkers)
}

// admitWaitersLocked queues the waiting envelopes that fit now, in the order
// they came; it returns how many workers the caller must start.
func (q *Queue) admitWaitersLocked() (workers int) {
	for len(q.waiters) > 0 && q.fits(q.waiters[0].entry.size) {
		w := q.waiters[0]
		q.waiters[0] = nil
		q.waiters = q.waiters[1:]
		if q.takeLocked(w.entry) {
			workers++
		}
		close(w.admitted)
	}
	if len(q.waiters) == 0 {
		q.waiters = nil
	}
	return workers
}

func (q *Queue) startWorkers(n int) {
	for range n {
		go q.work()
	}
}

// fits: a project holding nothing always takes one envelope, however large,
// so that no envelope waits for room that can never come; within its share
// it never waits on what the other projects hold.
func (q *Queue) fits(size int64) bool {
	if q.bytes == 0 {
		return true
	}
	if q.bytes+size > q.MaxBytes {
		return false
	}
	return q.bytes+size <= q.shared.Share || q.shared.bytes.Load()+size <= q.shared.Max
}

// work sends queued envelopes until none is left and none came for
// workerLinger, or the queue is closed.
func (q *Queue) work() {
	var linger *time.Timer
	for {
		q.mu.Lock()
		if q.head == len(q.entries) {
			if q.park(&linger) {
				continue
			}
			return
		}
		e := q.entries[q.head]
		q.entries[q.head] = entry{}
		q.head++
		if q.head == len(q.entries) {
			q.entries, q.head = q.entries[:0], 0
		}
		q.mu.Unlock()

		q.deliver(q.ctx, e.o)
		e.push.Settle()

		q.mu.Lock()
		q.bytes -= e.size
		q.shared.bytes.Add(-e.size)
		var start int
		if len(q.waiters) > 0 {
			start = q.admitWaitersLocked()
		}
		// The limit may have grown with this answer: one more worker for
		// what is queued and has none.
		if q.head+start < len(q.entries) && q.parked == 0 && q.workers < q.workerCap() {
			q.workers++
			start++
		}
		q.mu.Unlock()
		q.startWorkers(start)
	}
}

// park is called by a worker, with q.mu held, when the queue is empty. It
// releases q.mu and waits for the next envelope: true when there is one to
// send; false when the worker ends (nothing came for q.linger, or the
// queue was closed).
func (q *Queue) park(linger **time.Timer) bool {
	if q.closed {
		q.workers--
		q.notifyLocked()
		q.mu.Unlock()
		return false
	}
	q.parked++
	q.notifyLocked()
	q.mu.Unlock()
	if *linger == nil {
		*linger = time.NewTimer(q.linger)
	} else {
		(*linger).Reset(q.linger)
	}
	select {
	case <-q.wake:
		(*linger).Stop()
		return true
	case <-(*linger).C:
	case <-q.quit:
		(*linger).Stop()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-q.wake: // called back as the wait ended: an envelope is queued for it
		return true
	default:
	}
	q.parked--
	q.workers--
	q.notifyLocked()
	return false
}

// notifyLocked wakes waitUntil to look again.
func (q *Queue) notifyLocked() {
	if q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// Close refuses new envelopes and waits until every taken one is settled
// (sent, or failed fast once the queue's context ended) and every worker ended.
func (q *Queue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.quit)
	}
	q.mu.Unlock()
	q.waitUntil(func() bool { return q.workers == 0 && q.head == len(q.entries) })
}

// WaitIdle returns once nothing is queued or in flight.
func (q *Queue) WaitIdle() {
	q.waitUntil(func() bool { return q.workers == q.parked && q.head == len(q.entries) })
}

// waitUntil returns once done holds; done is called with q.mu held.
func (q *Queue) waitUntil(done func() bool) {
	for {
		q.mu.Lock()
		if done() {
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

// Bytes is what the project holds now.
func (q *Queue) Bytes() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}
