package discovery

import "time"

// Budgets of what senders may make the Resolver do, so that no sender
// inventing names spends what every sender shares: the management API's
// own rate limit (its 429 stops discovery for all), and the organization's
// projects.
//
// A lookup that reaches the API (a slug neither cached nor in flight) is
// charged to its spender (Config.LookupsPerMinute each); a project created
// is charged to the Resolver (Config.MaxCreatedPerHour and
// Config.MaxCreated). What is over a budget is refused at once, with an
// error wrapping ErrUnresolved, and is not cached: the slug is looked up
// again once there is budget.

// maxSpenders bounds the spenders remembered; the one seen longest ago
// is forgotten (and starts over with a full budget) beyond it.
const maxSpenders = 10000

// bucket is one spender's lookups: a token bucket of LookupsPerMinute
// tokens, refilled continuously.
type bucket struct {
	spender string
	tokens  float64
	at      time.Time
}

// spend takes one lookup from spender's bucket; false when it is empty.
// The spender "" (Resolve: no sender to charge) is never refused. r.mu
// must be held.
func (r *Resolver) spend(spender string, now time.Time) bool {
	perMinute := float64(r.cfg.LookupsPerMinute)
	if perMinute <= 0 || spender == "" {
		return true
	}
	var b *bucket
	if el, ok := r.spenders[spender]; ok {
		b = el.Value.(*bucket)
		r.spenderOrder.MoveToBack(el)
		b.tokens = min(perMinute, b.tokens+now.Sub(b.at).Minutes()*perMinute)
		b.at = now
	} else {
		b = &bucket{spender: spender, tokens: perMinute, at: now}
		r.spenders[spender] = r.spenderOrder.PushBack(b)
		for r.spenderOrder.Len() > maxSpenders {
			oldest := r.spenderOrder.Front()
			r.spenderOrder.Remove(oldest)
			delete(r.spenders, oldest.Value.(*bucket).spender)
		}
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// creations counts the projects created, in total and in the current hour.
type creations struct {
	total      int
	hour       int
	hourBegins time.Time
}

// mayCreate charges one creation; false (and nothing charged) when the
// hour's or the total budget is spent. r.mu must be held.
func (r *Resolver) mayCreate(now time.Time) bool {
	c := &r.creations
	if now.Sub(c.hourBegins) >= time.Hour {
		c.hour, c.hourBegins = 0, now
	}
	if (r.cfg.MaxCreated > 0 && c.total >= r.cfg.MaxCreated) || (r.cfg.MaxCreatedPerHour > 0 && c.hour >= r.cfg.MaxCreatedPerHour) {
		return false
	}
	c.total++
	c.hour++
	return true
}

// Created is the number of projects created so far.
func (r *Resolver) Created() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.creations.total
}
