// Package membudget is the exporter's one memory budget ([Memory]): every
// byte held on data's way to Sentry counts against it, shared fairly between
// the projects' holders.
//
// It only counts. It must not decide what is dropped or drop anything (the
// holders do, and count it), hold data itself, or block: a holder with no room
// is told so at once.
package membudget
