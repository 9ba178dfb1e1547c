package send

import (
	"context"
	"io"
	"net/http"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// requestTemplate builds one project's envelope requests without parsing its
// URL or canonicalising header names per envelope: the URL is parsed once, and
// the header values are slices built once and shared, read only, by every
// request (each request has its own header map and its own copy of the URL,
// so round trippers that set headers or rewrite the URL in place stay safe).
type requestTemplate struct {
	base                         *http.Request // POST to the envelope URL, no body
	contentType, auth, userAgent []string
	encodings                    [EncodingZstd + 1][]string // Content-Encoding by BodyEncoding
}

func newRequestTemplate(url, auth, userAgent string) (requestTemplate, error) {
	base, err := http.NewRequest(http.MethodPost, url, http.NoBody)
	if err != nil {
		return requestTemplate{}, err
	}
	t := requestTemplate{
		base:        base,
		contentType: []string{envelope.ContentType},
		auth:        []string{auth},
		userAgent:   []string{userAgent},
	}
	for _, enc := range []BodyEncoding{EncodingGzip, EncodingZstd} {
		t.encodings[enc] = []string{enc.ContentEncoding()}
	}
	return t, nil
}

// new is the request for one envelope body of n bytes in encoding enc
// (EncodingLeftToConfighttp: no Content-Encoding of ours).
func (t *requestTemplate) new(ctx context.Context, body io.ReadCloser, n int64, enc BodyEncoding) *http.Request {
	req := t.base.WithContext(ctx)
	u := *t.base.URL
	req.URL = &u
	h := make(http.Header, 4)
	h["Content-Type"] = t.contentType
	h["X-Sentry-Auth"] = t.auth
	h["User-Agent"] = t.userAgent
	if v := t.encodings[enc]; v != nil {
		h["Content-Encoding"] = v
	}
	req.Header = h
	req.Body = body
	req.ContentLength = n
	return req
}
