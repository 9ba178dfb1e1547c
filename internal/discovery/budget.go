package discovery

import (
	"time"

	"golang.org/x/time/rate"
)

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

// spend takes one look-up from spender name's budget at now (golang.org/x/time/rate's
// token bucket, LookupsPerMinute deep and refilled at that rate); false
// when it has none left. A sender of no name, or a budget of 0, is not
// limited. The spenders remembered are bounded: past maxSpenders, the one
// seen longest ago is forgotten (its next look-up starts with a full
// budget). r.mu is held.
func (r *Resolver) spend(name string, now time.Time) bool {
	perMinute := r.cfg.LookupsPerMinute
	if perMinute <= 0 || name == "" {
		return true
	}
	lim, ok := r.spenders.Get(name)
	if !ok {
		lim = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		r.spenders.Add(name, lim)
	}
	return lim.AllowN(now, 1)
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
