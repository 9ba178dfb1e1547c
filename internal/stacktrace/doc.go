// Package stacktrace parses the text of OpenTelemetry's exception.stacktrace
// attribute into Sentry exceptions with stack frames.
//
// Sentry wants chained exceptions oldest first (the one actually thrown is
// last) and frames caller to callee (the last frame is where the error
// happened), see https://develop.sentry.dev/sdk/data-model/event-payloads/exception/.
// Most runtimes print the opposite way round, so each parser collects frames
// in the order of the text and reverses where needed.
//
// The parsers scan line by line without regular expressions, so the work is
// linear in the input. They must never panic, whatever the text; they keep at
// most [MaxFrames] frames per exception (the ones nearest the crash site) and
// at most [MaxExceptions] chained exceptions (the ones nearest the thrown
// exception), and must not hold more while parsing: what a parse allocates
// is set by these caps, not by the size of the text.
package stacktrace
