package send

import (
	"container/heap"
	"time"
)

// fifo is a queue of jobs, oldest first; its array is reused once empty.
type fifo struct {
	jobs []*job
	head int
}

func (q *fifo) len() int { return len(q.jobs) - q.head }

func (q *fifo) push(j *job) { q.jobs = append(q.jobs, j) }

// pushFront puts j before every other job (a container split after a 413
// goes out before what came after it).
func (q *fifo) pushFront(j *job) {
	if q.head > 0 {
		q.head--
		q.jobs[q.head] = j
		return
	}
	q.jobs = append(q.jobs, nil)
	copy(q.jobs[1:], q.jobs)
	q.jobs[0] = j
}

// popNewest takes the job that came last.
func (q *fifo) popNewest() *job {
	if q.len() == 0 {
		return nil
	}
	j := q.jobs[len(q.jobs)-1]
	q.jobs[len(q.jobs)-1] = nil
	q.jobs = q.jobs[:len(q.jobs)-1]
	if q.head == len(q.jobs) {
		q.jobs, q.head = q.jobs[:0], 0
	}
	return j
}

func (q *fifo) pop() *job {
	if q.len() == 0 {
		return nil
	}
	j := q.jobs[q.head]
	q.jobs[q.head] = nil
	q.head++
	if q.head == len(q.jobs) {
		q.jobs, q.head = q.jobs[:0], 0
	}
	return j
}

// remove takes the jobs that match out of q, keeping the others in their
// order, and appends them to out.
func (q *fifo) remove(match func(*job) bool, out []*job) []*job {
	kept, out := partition(q.jobs[q.head:], match, out)
	q.jobs = q.jobs[:q.head+len(kept)]
	if q.head == len(q.jobs) {
		q.jobs, q.head = q.jobs[:0], 0
	}
	return out
}

// partition appends the jobs that match to out and keeps the others, in
// their order, at the start of jobs: kept.
func partition(jobs []*job, match func(*job) bool, out []*job) (kept, _ []*job) {
	kept = jobs[:0]
	for _, j := range jobs {
		if match(j) {
			out = append(out, j)
			continue
		}
		kept = append(kept, j)
	}
	clear(jobs[len(kept):])
	return kept, out
}

// delayed is the jobs waiting to retry, earliest not-before first.
type delayed []*job

func (d delayed) Len() int           { return len(d) }
func (d delayed) Less(a, b int) bool { return d[a].notBefore.Before(d[b].notBefore) }
func (d delayed) Swap(a, b int)      { d[a], d[b] = d[b], d[a] }
func (d *delayed) Push(x any)        { *d = append(*d, x.(*job)) }
func (d *delayed) Pop() any {
	old := *d
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*d = old[:len(old)-1]
	return j
}

func (d *delayed) add(j *job) { heap.Push(d, j) }

// next is when the earliest job is due; false when none waits.
func (d delayed) next() (time.Time, bool) {
	if len(d) == 0 {
		return time.Time{}, false
	}
	return d[0].notBefore, true
}

// popDue takes the earliest job if it is due at now.
func (d *delayed) popDue(now time.Time) *job {
	if len(*d) == 0 || (*d)[0].notBefore.After(now) {
		return nil
	}
	return heap.Pop(d).(*job)
}

// removeOldest takes the job that was first tried the longest ago.
func (d *delayed) removeOldest() *job {
	if len(*d) == 0 {
		return nil
	}
	oldest := 0
	for i, j := range *d {
		if j.first.Before((*d)[oldest].first) {
			oldest = i
		}
	}
	return heap.Remove(d, oldest).(*job)
}

// remove takes the jobs that match out of d and appends them to out.
func (d *delayed) remove(match func(*job) bool, out []*job) []*job {
	*d, out = partition(*d, match, out)
	heap.Init(d)
	return out
}
