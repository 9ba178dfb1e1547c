// Durability with a persistent queue (docs/durability.md): exporterhelper
// lets go of a batch in its persistent queue (sending_queue::storage) when
// the push returns, so with one configured the push returns only once every
// envelope it handed to the send stage is settled: stored by Sentry, or
// dropped and counted. Until then the batch stays on disk, and a crash
// sends it again after the restart. Without storage the push returns at
// once, as its memory queue gives nothing back after a crash anyway.

package sentryexporter

import (
	"context"
	"errors"
	"fmt"

	"github.com/otel-sentry/sentryexporter/internal/settle"
)

// durable reports whether cfg's sending queue is persistent.
func (cfg *Config) durable() bool {
	return cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().StorageID != nil
}

// settled is push made to return only once every envelope it handed on is
// settled, when the pipeline's queue is persistent; push itself otherwise.
// The wait ends early when the pipeline's shutdown begins: from then on,
// what is still sending is bounded by pending::drain_timeout and counted,
// as without storage (a pipeline's exporterhelper waits for its pushes
// before the exporter can stop).
func settled[B any](p *pipeline, push func(context.Context, B) error) func(context.Context, B) error {
	if !p.shared.cfg.durable() {
		return push
	}
	return func(ctx context.Context, b B) error {
		g := settle.NewGroup()
		err := push(settle.With(ctx, g), b)
		g.Close()
		select {
		case <-g.Settled():
		case <-p.stopped:
		case <-ctx.Done():
		}
		return err
	}
}

// validateDurable refuses a persistent queue beside what holds items in
// memory beyond a push: spans held for trace assembly (up to
// assembly::wait) and error events held for their duplicate (up to
// error_events::dedupe_window). A push that waited for them would hold a
// queue consumer that long; one that did not would let go of them on disk
// while only memory has them, and a crash would lose them.
func (cfg *Config) validateDurable() error {
	if !cfg.durable() {
		return nil
	}
	var errs []error
	if cfg.Assembly.Wait > 0 {
		errs = append(errs, errors.New("`sending_queue::storage` needs `assembly::wait: 0`: held spans live only in memory, and a crash would lose them (docs/durability.md)"))
	}
	if ee := cfg.ErrorEvents; ee.FromSpanExceptions && ee.FromLogs && ee.DedupeWindow > 0 {
		errs = append(errs, fmt.Errorf("`sending_queue::storage` needs `error_events::dedupe_window: 0` (it is %s): held error events live only in memory, and a crash would lose them (docs/durability.md)", ee.DedupeWindow))
	}
	return errors.Join(errs...)
}
