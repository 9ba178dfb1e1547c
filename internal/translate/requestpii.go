package translate

import "strings"

// What the request object filters (request.go says which defaults it
// follows): the values of sensitive names, and with them cookies.

const filtered = "[Filtered]"

// sensitiveTerms are sentry-go's defaultSensitiveTerms plus "cookie", which
// @sentry/core's SENSITIVE_KEY_SNIPPETS adds.
var sensitiveTerms = [...]string{
	"auth", "bearer", "credentials", "csrf", "identity", "jwt", "key", "passwd",
	"password", "pwd", "saml", "secret", "session", "sid", "sso", "token", "xsrf", "cookie",
}

// ipTerms are sentry-go's extendedSensitiveTerms: IP addresses and user ids
// carried in headers, filtered unless SendDefaultPII.
var ipTerms = [...]string{"forwarded", "-ip", "remote-", "via", "-user"}

// sensitive reports whether a header, query parameter or cookie name has its
// value filtered: whether it contains a term, ignoring ASCII case.
func sensitive(name string, pii bool) bool {
	if containsTerm(name, &sensitiveByFirst) {
		return true
	}
	return !pii && containsTerm(name, &ipByFirst)
}

// termTable lists terms by their first byte, so a name is scanned once.
type termTable [256][]string

var sensitiveByFirst, ipByFirst = termsByFirst(sensitiveTerms[:]), termsByFirst(ipTerms[:])

func termsByFirst(terms []string) (t termTable) {
	for _, term := range terms {
		t[term[0]] = append(t[term[0]], term)
	}
	return t
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// containsTerm reports whether s contains one of the (lower-case) terms of t,
// ignoring ASCII case.
func containsTerm(s string, t *termTable) bool {
	for i := 0; i < len(s); i++ {
		for _, term := range t[lowerASCII(s[i])] {
			if len(s)-i >= len(term) && hasPrefixFold(s[i:], term) {
				return true
			}
		}
	}
	return false
}

func hasPrefixFold(s, lowerPrefix string) bool {
	for j := 1; j < len(lowerPrefix); j++ {
		if lowerASCII(s[j]) != lowerPrefix[j] {
			return false
		}
	}
	return true
}

// filterQuery replaces the values of sensitive query parameters with
// [Filtered], keeping the order and encoding of everything else.
func filterQuery(q string, pii bool) string {
	if !anySensitivePart(q, '&', pii) {
		return q
	}
	return filterPairs(q, "&", pii)
}

// filterCookies replaces the values of sensitive cookies with [Filtered].
func filterCookies(c string) string {
	if !anySensitivePart(c, ';', true) {
		return c
	}
	return filterPairs(c, ";", true)
}

// anySensitivePart reports whether a name of the name=value parts of s
// (separated by sep) is sensitive. It does not allocate.
func anySensitivePart(s string, sep byte, pii bool) bool {
	for s != "" {
		part := s
		if i := strings.IndexByte(s, sep); i >= 0 {
			part, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if i := strings.IndexByte(part, '='); i >= 0 {
			part = part[:i]
		}
		if sensitive(part, pii) {
			return true
		}
	}
	return false
}

func filterPairs(s, sep string, pii bool) string {
	parts := strings.Split(s, sep)
	for i, part := range parts {
		k, _, hasValue := strings.Cut(part, "=")
		if hasValue && sensitive(k, pii) {
			parts[i] = k + "=" + filtered
		}
	}
	return strings.Join(parts, sep)
}
