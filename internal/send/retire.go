package send

import (
	"context"
	"slices"
)

// Retiring a lane: the caller decides that its project is no longer in use
// (the exporter's routing::idle_timeout); the lane leaves the stage once it
// holds nothing, so that the stage's lanes follow the projects in use.

// Retire marks l retired. It goes on taking and sending what it is offered
// (an envelope offered late is sent like any other), and leaves the stage
// at the first Stage.Prune that finds it holding nothing.
func (l *Lane) Retire() { l.retired.Store(true) }

// Idle reports whether l has no envelope offered and not yet settled.
func (l *Lane) Idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.jobs == 0
}

// Prune takes out of the stage each retired lane that holds nothing: it is
// closed (an envelope offered to it later is counted network_error, as
// after shutdown), its pending client report gets its one final attempt
// (at most finalReportTimeout, all lanes at once; its counts are logged when
// that fails, as at shutdown), and its idle connections are closed. It
// returns how many lanes left. It must not run concurrently with Shutdown.
func (s *Stage) Prune(ctx context.Context) int {
	var gone []*Lane
	for _, l := range s.Lanes() {
		if l.retired.Load() && l.closeIfIdle() {
			gone = append(gone, l)
		}
	}
	if len(gone) == 0 {
		return 0
	}
	s.mu.Lock()
	lanes := slices.DeleteFunc(slices.Clone(*s.lanes.Load()), func(l *Lane) bool { return slices.Contains(gone, l) })
	s.lanes.Store(&lanes)
	s.mu.Unlock()
	finalReports(ctx, gone)
	return len(gone)
}

// closeIfIdle closes l when it has no envelope unsettled; false (l left
// open) when it has.
func (l *Lane) closeIfIdle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.jobs > 0 {
		return false
	}
	if !l.closed {
		l.closed = true
		close(l.quit)
	}
	return true
}
