// Package profilers remembers, per project and key, the profiler whose
// chunks recently named that key: a process identity (its profiler_id, or
// an identity an SDK's resource and a profiler's resource share, such as
// container.id) or a span its samples ran in, with the thread that ran it.
// A transaction of that process or span can then name the profiler
// (contexts.profile.profiler_id) and its thread, and Sentry shows its
// profile. An entry lives a fixed time after its last chunk; the entries
// are bounded in number, shared fairly between projects, and charged to
// the exporter's memory budget; one that finds no room is not remembered.
//
// It must not read a clock (every call is given now), read the collector's
// types, or decide whether a transaction names a profiler: it only says
// which one a key's last chunk named, and whether that was recent and
// unambiguous. A key it does not remember has no profiler, so a
// transaction never names a profiler that sends nothing.
package profilers
