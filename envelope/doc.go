// Package envelope writes and reads Sentry envelopes.
//
// It holds the byte-exact writer ([Envelope.AppendTo]), the item containers used by logs and
// span v2 ([AppendContainer], [Chunk]), Relay's size and count limits ([Limits]), client report
// payloads ([AppendClientReport]) and a strict reader ([Parse]) with a validator ([Validate])
// that tests and the fake Sentry use to reject anything Relay or Sentry would reject.
//
// The wire format follows the develop docs (sdk/foundations/transport/envelopes.mdx) and Relay
// (relay-server/src/envelope/{mod,item,container}.rs, relay-server/src/utils/sizes.rs).
// The package uses only the standard library.
package envelope
