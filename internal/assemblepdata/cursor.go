package assemblepdata

import "go.opentelemetry.io/collector/pdata/ptrace"

// cursor finds the i-th span of a batch for Admit's hold callback, which
// asks in increasing order: it walks the batch once, and makes one heldScope
// per ScopeSpans that has a held span.
type cursor struct {
	rss     ptrace.ResourceSpansSlice
	r, s, k int // position of span i
	i       int
	started bool
	scope   *heldScope
	scopeAt [2]int
}

// at is the i-th span, its held scope, and whether that scope was made for
// it (the first span held with it).
func (c *cursor) at(i int) (ptrace.Span, *heldScope, bool) {
	if !c.started {
		c.started = true
		c.skipEmpty()
	}
	for c.i < i {
		c.k++
		c.i++
		c.skipEmpty()
	}
	rs := c.rss.At(c.r)
	ss := rs.ScopeSpans().At(c.s)
	fresh := false
	if c.scope == nil || c.scopeAt != [2]int{c.r, c.s} {
		h := &heldScope{rs: ptrace.NewResourceSpans()}
		copyResource(h.rs, rs)
		appendScope(h.rs, ss)
		c.scope, c.scopeAt, fresh = h, [2]int{c.r, c.s}, true
	}
	return ss.Spans().At(c.k), c.scope, fresh
}

// skipEmpty moves (r, s, k) forward to the next existing span.
func (c *cursor) skipEmpty() {
	for c.r < c.rss.Len() {
		sss := c.rss.At(c.r).ScopeSpans()
		for c.s < sss.Len() {
			if c.k < sss.At(c.s).Spans().Len() {
				return
			}
			c.s++
			c.k = 0
		}
		c.r++
		c.s, c.k = 0, 0
	}
}

// appendResource appends to dst a ResourceSpans with src's resource and
// schema URL, without its scopes.
func appendResource(dst ptrace.ResourceSpansSlice, src ptrace.ResourceSpans) ptrace.ResourceSpans {
	rs := dst.AppendEmpty()
	copyResource(rs, src)
	return rs
}

func copyResource(dst, src ptrace.ResourceSpans) {
	src.Resource().CopyTo(dst.Resource())
	dst.SetSchemaUrl(src.SchemaUrl())
}

// appendScope appends to dst a ScopeSpans with src's scope and schema URL,
// without its spans.
func appendScope(dst ptrace.ResourceSpans, src ptrace.ScopeSpans) ptrace.ScopeSpans {
	ss := dst.ScopeSpans().AppendEmpty()
	src.Scope().CopyTo(ss.Scope())
	ss.SetSchemaUrl(src.SchemaUrl())
	return ss
}
