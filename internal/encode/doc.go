// Package encode wraps one project's translated payloads into envelopes
// ([Outgoing]): a transaction or an error event per envelope, log items and
// span v2 items in containers within Relay's count and size limits, each
// envelope of a trace with the trace's dynamic sampling context, and the
// data categories and quantities each envelope carries, for the gate and
// the accountant.
//
// Its one job is the envelope's shape. It must not translate OTLP, send,
// queue, gate on rate limits or decide a drop: the one fate it records is an
// item too large for any envelope, counted invalid through the accountant.
package encode
