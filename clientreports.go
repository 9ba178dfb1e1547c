package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"sync/atomic"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// clientReports aggregates local discards per (reason, category) for one DSN.
// It is a fixed array of counters: bounded by construction, lock-free to add,
// and taken with an atomic swap so no count is lost or sent twice.
type clientReports struct {
	pending [numReasons][numCategories]atomic.Int64
}

// add records drops that Sentry has not seen; 429 answers are Relay's to record.
func (r *clientReports) add(why reason, c counts) {
	if !why.reported() {
		return
	}
	for cat, n := range c {
		if n > 0 {
			r.pending[why][cat].Add(n)
		}
	}
}

// take removes and returns every pending count; nil when there is none.
func (r *clientReports) take() []envelope.Discard {
	var out []envelope.Discard
	for why := range r.pending {
		for cat := range r.pending[why] {
			if n := r.pending[why][cat].Swap(0); n > 0 {
				out = append(out, envelope.Discard{
					Reason:   reason(why).wire(),
					Category: string(category(cat).wire()),
					Quantity: uint64(n),
				})
			}
		}
	}
	return out
}

// restore puts back what take returned, when the report could not be delivered:
// a client report is kept until Sentry has it.
func (r *clientReports) restore(discards []envelope.Discard) {
	for _, d := range discards {
		why, cat, ok := indexOf(d.Reason, d.Category)
		if ok {
			r.pending[why][cat].Add(int64(d.Quantity))
		}
	}
}

func indexOf(reasonName, categoryName string) (reason, category, bool) {
	for why := range numReasons {
		if why.wire() != reasonName {
			continue
		}
		for cat := range numCategories {
			if string(cat.wire()) == categoryName {
				return why, cat, true
			}
		}
	}
	return 0, 0, false
}
