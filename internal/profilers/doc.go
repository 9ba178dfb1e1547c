// Package profilers remembers, per process, the profiler that recently sent
// a profile chunk, so that a transaction of that process can name it
// (contexts.profile.profiler_id) and Sentry shows the transaction's profile.
// An entry lives a fixed time after the process's last chunk; the entries
// are bounded in number and charged to the exporter's memory budget, and
// one that finds no room is not remembered.
//
// It must not read a clock (every call is given now), read the collector's
// types, or decide whether a transaction names a profiler: it only says
// which one a process's last chunk named, and whether that was recent. A
// process it does not remember has no profiler, so a transaction never
// names a profiler that sends nothing.
package profilers
