// The sender of a request (routing::sender): who sent it, by what the
// receiver and its auth extension established, and which routing values it
// may write to. Read once per push, before any resource is routed.

package sentryexporter

import (
	"context"
	"net"
	"slices"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// sender is one push's sender. Without routing::sender it is unbound, and
// every resource is routed by its attribute.
type sender struct {
	bound bool     // routing::sender is set
	name  string   // the sender's name; "" when the request names none
	known bool     // the name is set and, with routing::sender::projects, listed
	allow []string // its routing::sender::projects entry; nil: the name is the routing value
	// spender is whom discovery charges the look-ups of this request
	// (lookups_per_minute each): a bound sender's name; unbound, the
	// client's address, or, when the request reached the exporter without
	// one (a batch the sending queue merged), one budget that all such
	// requests share. Names invented by one sender so draw on its own
	// budget, never on the management API's limit that all share.
	spender string
}

// unknownSpender is the discovery budget of unbound requests without a
// client address.
const unknownSpender = "unknown sender"

// senderOf reads the request's sender from its client info: one value of
// the metadata key (none, or several, name no sender), or the auth
// extension's attribute, when it is a string.
func (e *sentryExporter) senderOf(ctx context.Context) sender {
	cfg := &e.cfg.Routing.Sender
	info := client.FromContext(ctx)
	if !cfg.on() {
		return sender{spender: addressSpender(info.Addr)}
	}
	s := boundSender(cfg, info)
	s.spender = s.name
	return s
}

// boundSender is the sender info names, by routing::sender.
func boundSender(cfg *SenderConfig, info client.Info) sender {
	s := sender{bound: true}
	switch {
	case cfg.MetadataKey != "":
		if v := info.Metadata.Get(cfg.MetadataKey); len(v) == 1 {
			s.name = v[0]
		}
	case info.Auth != nil:
		s.name, _ = info.Auth.GetAttribute(cfg.AuthAttribute).(string)
	}
	if s.name == "" {
		return s
	}
	if len(cfg.Projects) == 0 {
		s.known = true
		return s
	}
	s.allow, s.known = cfg.Projects[s.name]
	return s
}

// addressSpender is the discovery budget of an unbound request from addr:
// its host (a sender's connections differ by port only).
func addressSpender(addr net.Addr) string {
	if addr == nil {
		return unknownSpender
	}
	a := addr.String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		a = host
	}
	if a == "" {
		return unknownSpender
	}
	return "address " + a
}

// value is the routing value of res: the sender's name when it is the
// routing value, else the resource's attribute; ok is false when there is
// none.
func (s *sender) value(res pcommon.Resource, attribute string) (string, bool) {
	if s.bound && s.allow == nil {
		return s.name, s.known
	}
	v, ok := res.Attributes().Get(attribute)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

// mayWrite reports whether the sender may write to the project of value:
// any, unbound; with an allow-list, a value listed as it is, a discovered
// project (slug is not "") listed by its slug, or any with "*". A slug
// never stands for a routing::dsns entry: "Search" and "search" may be two
// entries, two projects.
func (s *sender) mayWrite(value, slug string) bool {
	if !s.bound {
		return true
	}
	if !s.known {
		return false
	}
	if s.allow == nil {
		return true
	}
	return slices.ContainsFunc(s.allow, func(a string) bool {
		return a == "*" || (value != "" && a == value) || (slug != "" && a == slug)
	})
}

// only is p, a project of value that no slug names (routing::dsns, the
// `dsn` project), when the sender may write to it, else refused.
func (s *sender) only(value string, p, refused *project) *project {
	if s.mayWrite(value, "") {
		return p
	}
	return refused
}
