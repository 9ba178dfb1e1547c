// Package split cuts one pdata batch (traces, logs, metrics or profiles) into a part
// per target, by resource: the route stage says which target each resource
// goes to, and split copies each resource into its target's part. A batch
// whose resources all go to one target is handed on as it is, without a copy.
//
// It must not decide where a resource goes (the caller's route does), read
// the configuration, or push, count or drop anything: every resource of the
// batch is in exactly one part.
package split
