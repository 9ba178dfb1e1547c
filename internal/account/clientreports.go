package account

import (
	"sync/atomic"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// ClientReports aggregates local discards per (reason, category) for one DSN.
// It is a fixed array of counters: bounded by construction, lock-free to add,
// and taken with an atomic swap so no count is lost or sent twice.
type ClientReports struct {
	pending [NumReasons][NumCategories]atomic.Int64
	// some is set after a count is added and cleared before Take swaps: Take
	// runs for every envelope sent, and most find nothing, so they look at
	// one flag instead of every counter.
	some atomic.Bool
}

// Add records drops that Sentry has not seen; 429 answers are Relay's to record.
func (r *ClientReports) Add(why Reason, c Counts) {
	if !why.Reported() {
		return
	}
	added := false
	for cat, n := range c {
		if n > 0 {
			r.pending[why][cat].Add(n)
			added = true
		}
	}
	if added {
		r.some.Store(true)
	}
}

// Take removes and returns every pending count; nil when there is none.
func (r *ClientReports) Take() []envelope.Discard {
	if !r.some.Load() {
		return nil
	}
	r.some.Store(false) // before the swaps: a count added after one is taken sets it again
	var out []envelope.Discard
	for why := range r.pending {
		for cat := range r.pending[why] {
			if n := r.pending[why][cat].Swap(0); n > 0 {
				out = append(out, envelope.Discard{
					Reason:   Reason(why).Wire(),
					Category: string(Category(cat).Wire()),
					Quantity: uint64(n),
				})
			}
		}
	}
	return out
}

// Restore puts back what Take returned, when the report could not be delivered:
// a client report is kept until Sentry has it.
func (r *ClientReports) Restore(discards []envelope.Discard) {
	for _, d := range discards {
		why, cat, ok := indexOf(d.Reason, d.Category)
		if ok {
			r.pending[why][cat].Add(int64(d.Quantity))
			r.some.Store(true)
		}
	}
}

func indexOf(reasonName, categoryName string) (Reason, Category, bool) {
	for why := range NumReasons {
		if why.Wire() != reasonName {
			continue
		}
		for cat := range NumCategories {
			if string(cat.Wire()) == categoryName {
				return why, cat, true
			}
		}
	}
	return 0, 0, false
}
