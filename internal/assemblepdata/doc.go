// Package assemblepdata passes pdata trace batches through trace assembly.
// internal/assemble holds spans of any type and knows no pdata; this package
// is its adapter: it gives the assembler each span's reference, copies the
// spans it holds, rebuilds a batch per owner (the exporter's project) from
// what comes out, and tells each owner the bytes held for it and the spans
// it sends without their local root (fragments, by reason).
//
// An owner's spans are assembled only with its own. They can come out in
// another owner's Admit, pushed out by the byte bound (the owner holding
// most gives way): the batches of other owners are returned, for
// the caller to send through their owners' pipelines.
//
// The package must not translate, send, gate or drop a span: every span it
// is given comes out exactly once, in a batch it returns. It must not read
// a clock: every call that can release spans takes now.
package assemblepdata
