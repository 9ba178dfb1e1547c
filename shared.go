// The one exporter that a component config's traces and logs pipelines
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

// sharedExporters hands the traces and logs pipelines of one component config
// the same exporter. It lives in the factory, not in a package variable.
type sharedExporters struct {
	mu       sync.Mutex
	byConfig map[*Config]*sharedExporter
	clk      clocks
}

type sharedExporter struct {
	owner *sharedExporters
	cfg   *Config
	exp   *sentryExporter

	mu      sync.Mutex
	started int // pipelines started and not yet shut down
	users   int // pipelines created
}

func (s *sharedExporters) acquire(cfg *Config, set exporter.Settings) (*sharedExporter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byConfig[cfg]; ok {
		e.users++
		return e, nil
	}
	exp, err := newExporter(cfg, set, s.clk)
	if err != nil {
		return nil, err
	}
	e := &sharedExporter{owner: s, cfg: cfg, exp: exp, users: 1}
	s.byConfig[cfg] = e
	return e, nil
}

// start starts the exporter with the first pipeline that starts.
func (s *sharedExporter) start(ctx context.Context, host component.Host) error {
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
	return nil
}

// shutdown runs after exporterhelper drained the pipeline's queue; the
// exporter shuts down with the last pipeline.
func (s *sharedExporter) shutdown(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	last := s.users <= 0
	if last {
		s.owner.mu.Lock()
		delete(s.owner.byConfig, s.cfg)
		s.owner.mu.Unlock()
	}
	if s.started > 0 {
		s.started--
		if s.started == 0 {
			return s.exp.shutdown(ctx)
		}
	}
	return nil
}
