// Retiring idle projects (routing::idle_timeout): a project that discovery
// found holds a slot of routing::max_projects and a share of every bound
// the projects share. Once nothing was routed to it for idle_timeout and it
// holds nothing (no push under way, no span held in assembly, no error
// event held for dedupe, no envelope unsettled in its lane), it is retired:
// it leaves the projects, its shares are given back, and its lane leaves
// the send stage once its final client report went out. Its next item
// discovers it again (from discovery's cache, mostly). The `dsn` and
// routing::dsns projects never retire.

package sentryexporter

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"
)

// useProject returns the project of a DSN discovery found, in use until
// done is called with it; when every slot is taken, idle projects are
// retired first to make room.
func (e *sentryExporter) useProject(rawDSN string) (*project, error) {
	e.mu.Lock()
	var gone []*project
	if _, ok := e.byDSN[rawDSN]; !ok && len(e.byDSN) >= e.cfg.Routing.MaxProjects {
		gone = e.retireIdleLocked(e.now())
	}
	p, err := e.addProjectLocked(rawDSN, true)
	if err == nil {
		p.users.Add(1)
	}
	forget := e.profilersToForgetLocked(gone)
	e.mu.Unlock()
	e.giveBack(context.Background(), gone, forget)
	return p, err
}

// done ends a use of p (useProject); nil is none.
func (e *sentryExporter) done(p *project) {
	if p == nil {
		return
	}
	p.lastUsed.Store(e.now().UnixNano()) // before the count drops: idle is measured from here
	p.users.Add(-1)
}

// retireTick is how often idle projects are looked for: a project retires
// at most a quarter of idle_timeout (a minute at most) after it could.
func (e *sentryExporter) retireTick() time.Duration {
	return min(max(e.cfg.Routing.IdleTimeout/4, 100*time.Millisecond), time.Minute)
}

// retireIdle takes the lanes retired at an earlier tick out of the send
// stage once they hold nothing (so an envelope of a push that was under
// way at retirement still finds its lane), then retires the projects idle
// now.
func (e *sentryExporter) retireIdle(ctx context.Context) {
	e.stage.Prune(ctx)
	e.mu.Lock()
	gone := e.retireIdleLocked(e.now())
	forget := e.profilersToForgetLocked(gone)
	e.mu.Unlock()
	e.giveBack(ctx, gone, forget)
}

// retireIdleLocked takes the idle projects out of the projects, freeing
// their slots, and returns them. e.mu is held.
func (e *sentryExporter) retireIdleLocked(now time.Time) []*project {
	var gone []*project
	for raw, p := range e.byDSN {
		if p.idle(now) {
			delete(e.byDSN, raw)
			gone = append(gone, p)
		}
	}
	if len(gone) > 0 {
		e.projects = slices.DeleteFunc(slices.Clone(e.projects), func(p *project) bool { return slices.Contains(gone, p) })
	}
	return gone
}

// idle reports whether p may retire at now: discovered, unused for
// idle_timeout, and holding nothing anywhere.
func (p *project) idle(now time.Time) bool {
	e := p.exp
	return p.retirable && p.users.Load() == 0 &&
		now.Sub(time.Unix(0, p.lastUsed.Load())) >= e.cfg.Routing.IdleTimeout &&
		p.heldBytes.Load() == 0 && (e.dedupe == nil || !e.dedupe.Holds(p)) && p.lane.Idle()
}

// profilersToForgetLocked is the project ids of gone whose profilers go:
// those no project left shares (two DSNs of one project share its
// profilers). e.mu is held.
func (e *sentryExporter) profilersToForgetLocked(gone []*project) []string {
	var ids []string
	for _, p := range gone {
		id := p.dsn.ProjectID
		if slices.Contains(ids, id) || slices.ContainsFunc(e.projects, func(q *project) bool { return q.dsn.ProjectID == id }) {
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// giveBack gives the shares of the retired projects back (their trace
// index view, metric streams, profilers, assembly and dedupe bookkeeping),
// retires their lanes, and counts and logs them (by project id, never a
// DSN's key).
func (e *sentryExporter) giveBack(ctx context.Context, gone []*project, profilerIDs []string) {
	if len(gone) == 0 {
		return
	}
	ids := make([]string, 0, len(gone))
	for _, p := range gone {
		if e.assembly != nil {
			e.assembly.Forget(p)
		}
		if e.dedupe != nil {
			e.dedupe.Forget(p)
		}
		p.index.Release()
		e.streamMem.Add(-p.streams.Release())
		p.lane.Retire()
		ids = append(ids, p.dsn.ProjectID)
	}
	for _, id := range profilerIDs {
		e.profilers.Forget(id)
	}
	e.tb.ExporterSentryProjectsRetired.Add(ctx, int64(len(gone)))
	e.logger.Info("Sentry projects retired: nothing was routed to them for routing::idle_timeout; their slots are free",
		zap.Strings("projects", ids), zap.Duration("idle_timeout", e.cfg.Routing.IdleTimeout),
		zap.Int("projects_left", len(e.allProjects())), zap.Int("max_projects", e.cfg.Routing.MaxProjects))
}
