// The one exporter that a component config's traces, logs and metrics pipelines
// share: contrib's sharedcomponent does this for its components, but it is
// internal to contrib (and core's to core), so it cannot be imported; this
// one also hands every pipeline's host to the component status
// (status.go).

package sentryexporter

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
)

// sharedExporters hands the traces, logs and metrics pipelines of one component config
// the same exporter. It lives in the factory, not in a package variable.
type sharedExporters struct {
	mu       sync.Mutex
	byConfig map[*Config]*sharedExporter
}

type sharedExporter struct {
	owner *sharedExporters
	cfg   *Config
	exp   *sentryExporter

	mu      sync.Mutex
	started int // pipelines started and not yet shut down
	live    int // pipelines started whose shutdown has not begun
	users   int // pipelines created
}

func (s *sharedExporters) acquire(cfg *Config, set exporter.Settings) (*sharedExporter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byConfig[cfg]; ok {
		e.users++
		return e, nil
	}
	exp, err := newExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	e := &sharedExporter{owner: s, cfg: cfg, exp: exp, users: 1}
	s.byConfig[cfg] = e
	return e, nil
}

// pipeline is one signal's pipeline of a shared exporter: its start and
// the beginning of its shutdown are counted on their own, so that one
// pipeline stopping never stops another's retries.
type pipeline struct {
	shared   *sharedExporter
	started  bool
	stopping bool
	stopped  chan struct{} // closed when stopping is set: pushes waiting for their envelopes return (durable.go)
}

// start starts the exporter with the first pipeline that starts.
func (p *pipeline) start(ctx context.Context, host component.Host) error {
	s := p.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started == 0 {
		if err := s.exp.start(ctx, host); err != nil {
			return err
		}
	} else {
		s.exp.status.addHost(host) // each pipeline's component instance gets the status
	}
	s.started++
	s.live++
	p.started = true
	return nil
}

// beginShutdown runs when the pipeline's shutdown begins, before
// exporterhelper drains its queue: the exporter stops retrying only when
// the last live pipeline begins its shutdown (the traces pipeline stopping
// must not end the logs pipeline's retries).
func (p *pipeline) beginShutdown() {
	s := p.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if !p.started || p.stopping {
		return
	}
	p.stopping = true
	close(p.stopped)
	s.live--
	if s.live == 0 {
		s.exp.beginShutdown()
	}
}

// shutdown runs after exporterhelper drained the pipeline's queue (its
// stopFirst began the pipeline's shutdown; one whose start failed was never
// live); the exporter shuts down with the last pipeline.
func (p *pipeline) shutdown(ctx context.Context) error {
	s := p.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	last := s.users <= 0
	if last {
		s.owner.mu.Lock()
		delete(s.owner.byConfig, s.cfg)
		s.owner.mu.Unlock()
	}
	if p.started {
		p.started = false
		s.started--
		if s.started == 0 {
			return s.exp.shutdown(ctx)
		}
	}
	return nil
}
