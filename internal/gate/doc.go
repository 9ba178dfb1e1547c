// Package gate is the rate-limit check of each kind of envelope: which
// category's limit blocks it ([Gate]), checked before translation (a limited
// category costs nothing) and again before each attempt, and the one probe
// per gate when a rate-limit window ends ([Probes]).
//
// It must not send or speak HTTP (it reads only an answer's status), wait for
// a limit to end, queue or hold envelopes, or record an item's fate: what it
// refuses, the caller drops and counts.
package gate
