// Package split cuts one pdata batch (traces, logs, metrics or profiles) into a part
// per target, by resource: the route stage says which target each resource
// goes to, and split copies each resource into its target's part. A batch
// whose resources all go to one target is handed on as it is, without a copy.
// A profiles part gets a dictionary of its own, holding only the entries its
// resources refer to, re-indexed.
//
// It must not decide where a resource goes (the caller's route does), read
// the configuration, or push, count or drop anything: every resource of the
// batch is in exactly one part. It must not change what a part's items say:
// each index of a profiles part resolves to what it resolved to in the
// batch, and one out of range stays out of range.
package split
