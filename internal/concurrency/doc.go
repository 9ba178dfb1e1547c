// Package concurrency bounds the requests in flight: the request budget over
// the whole exporter, shared fairly between projects ([Budget]), and each
// project's adaptive concurrency limit, which follows Sentry's answers once
// per round trip ([Limit]).
//
// It must not send or speak HTTP (it learns of an answer only through a
// [Verdict]), count bytes (the memory budget is internal/membudget's), read a
// rate limit, or record an item's fate.
package concurrency
