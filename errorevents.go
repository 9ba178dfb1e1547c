package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/dedupe"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// appendErrorEnvelopes appends the envelopes of a push's error events. With
// the dedupe window on, linked events are offered to it first: held ones are
// sent later (releaseDue), and an event merged with its held counterpart is
// sent once, the other counted as deduplicated.
func (p *project) appendErrorEnvelopes(ctx context.Context, out []encode.Outgoing, evs []translate.ErrorEvent) []encode.Outgoing {
	d := p.exp.dedupe
	if d == nil {
		for i := range evs {
			out = append(out, p.enc.Error(&evs[i]))
		}
		return out
	}
	now := p.exp.clk.now()
	var deduped account.Counts
	for i := range evs {
		ev, what := d.Offer(p, &evs[i], now)
		switch what {
		case dedupe.Held:
			continue
		case dedupe.Merged:
			deduped[account.CatError]++
		}
		out = append(out, p.enc.Error(&ev))
	}
	p.acct.Dropped(ctx, account.ReasonDeduplicated, deduped)
	return out
}

// releaseDue sends the held error events whose window ended; all of them when
// final (shutdown).
func (e *sentryExporter) releaseDue(ctx context.Context, final bool) {
	if e.dedupe == nil {
		return
	}
	if n := e.dedupe.TakeOverflow(); n > 0 {
		e.warnOnce.Log(e.logger, "dedupe-overflow", "Error events were sent without waiting for their duplicate: the dedupe window is full",
			zap.Int64("count", n), zap.Int("max_held_events", e.dedupe.MaxEvents), zap.Int("max_held_bytes", e.dedupe.MaxBytes))
	}
	rel := e.dedupe.Due(e.clk.now(), final)
	if len(rel) == 0 {
		return
	}
	byProject := map[*project][]encode.Outgoing{}
	for i := range rel {
		r := &rel[i]
		byProject[r.P] = append(byProject[r.P], r.P.enc.Error(&r.Ev))
	}
	for p, out := range byProject {
		p.sendAll(ctx, out)
	}
}

// dedupeTick is how often held error events are checked when no push comes
// by: a held event is sent at most this long after its window ended.
func (e *sentryExporter) dedupeTick() time.Duration {
	return min(max(e.dedupe.Length/4, 100*time.Millisecond), time.Second)
}

// every runs fn every d until shutdown begins: the held error events and
// held spans are released by it while no push comes by.
func (e *sentryExporter) every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fn()
		case <-e.stopping:
			return
		}
	}
}
