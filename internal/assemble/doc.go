// Package assemble holds the spans of a request until the request's local
// root span arrives, so that a trace split across batches goes out as one
// transaction per request, as the Sentry SDKs send it.
//
// An OpenTelemetry SDK exports spans as they end: a request's children end,
// and are exported, before its root. [Assembler.Admit] takes one batch's span
// references and decides, span by span:
//   - a span whose local root is in the batch, or which is a local root
//     itself, passes at once (a batch that is already complete is not copied
//     and nothing is held: the caller hands it on as it is);
//   - a span whose local root has not arrived is held, keyed by owner (the
//     caller's project) and trace id, with ancestry resolved through the
//     held spans of its owner;
//   - a span whose parent was already sent (a late child) passes at once as a
//     fragment, [AfterRoot].
//
// When a local root arrives, every held descendant is released with it
// ([WithRoot]). Held spans that never see their root are released as
// fragments, each group (a held span with its held ancestors and
// descendants) with a reason: the wait is over ([Expired], by
// [Assembler.Expire]), the byte bound is full ([MemoryBound], oldest first,
// of the owner furthest past its share), or shutdown ([Shutdown], by
// [Assembler.Flush]).
//
// A local root ([LocalRoot]) is a span without a parent, or whose parent is
// remote: the OTLP span flags carry HAS_IS_REMOTE (0x100) and IS_REMOTE
// (0x200). Where HAS_IS_REMOTE is absent, a SERVER or CONSUMER span is a
// local root. A local root never waits for a parent in another service.
//
// The package must never drop a span: every span admitted comes out exactly
// once, passed or released. It must not serialize or count outcomes: the
// caller translates what comes out and counts fragments by reason. It holds
// caller payloads of any type and reads no clock: every call takes now.
package assemble
