// Package pending holds one project's envelopes between the push that built
// them and Sentry's answer. Pushes hand envelopes over and return; the
// project's own workers, at most its adaptive concurrency limit, send them.
// The bytes it holds, queued and in flight, are bounded per project and,
// through a [Total], over all projects: a hung Sentry holds at most its
// project's share, never the pipeline.
//
// Its one job is that bounded hand-over. It must not speak HTTP, build or
// split envelopes, look at rate limits, or record an item's fate: when an
// envelope does not fit, [Queue.Offer] says why, and the caller counts it.
package pending
