package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Parse errors, named after Relay's EnvelopeError (relay-server/src/envelope/mod.rs). Every
// error of [Parse] is a [*ParseError] that wraps one of them.
var (
	ErrMissingHeader     = errors.New("missing envelope header")
	ErrInvalidHeader     = errors.New("invalid envelope header")
	ErrInvalidItemHeader = errors.New("invalid item header")
	ErrMissingNewline    = errors.New("missing newline after header or payload")
	ErrUnexpectedEOF     = errors.New("unexpected end of file")
)

// ParseError says where and why [Parse] failed.
type ParseError struct {
	Offset int   // byte offset in the envelope where the failing part starts
	Err    error // one of the Err* sentinels of this package
	Detail string
}

// Error says what failed and at which byte.
func (e *ParseError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%v at byte %d", e.Err, e.Offset)
	}
	return fmt.Sprintf("%v at byte %d: %s", e.Err, e.Offset, e.Detail)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads an envelope with Relay's grammar (Envelope = Headers { "\n" Item } [ "\n" ],
// Item = Headers "\n" Payload). An item's `length` is honored exactly and the byte after the
// payload must be "\n" or the end (else ErrMissingNewline); data that ends early is
// ErrUnexpectedEOF. Without `length` the payload runs to the next "\n" or the end. The final
// newline is optional and an envelope without items is fine.
//
// Parse is stricter than Relay where our own writer can never differ: each header must be one
// line holding exactly one JSON object (Relay would skip whitespace and blank lines before it),
// with valid UTF-8 and no duplicate key at any depth; `event_id` must be a UUID, `sent_at`
// RFC 3339, `sdk` an object with string `name` and `version`. A malformed `trace` header does
// not fail Parse (Relay treats it as absent); Parse keeps what it could read and [Validate]
// reports the problem. Unknown header keys are ignored. Payloads alias data.
func Parse(data []byte) (*Envelope, error) {
	if len(data) == 0 {
		return nil, &ParseError{Offset: 0, Err: ErrMissingHeader}
	}
	line, next := headerLine(data, 0)
	obj, err := decodeHeaderLine(line)
	if errors.Is(err, errTrailingData) {
		return nil, &ParseError{Offset: 0, Err: ErrMissingNewline, Detail: err.Error()}
	}
	if err != nil {
		return nil, &ParseError{Offset: 0, Err: ErrInvalidHeader, Detail: err.Error()}
	}
	e := &Envelope{}
	if err := e.Header.decode(obj); err != nil {
		return nil, &ParseError{Offset: 0, Err: ErrInvalidHeader, Detail: err.Error()}
	}
	for off := next; off < len(data); {
		item, end, err := parseItem(data, off)
		if err != nil {
			return nil, err
		}
		e.Items = append(e.Items, item)
		off = end + 1
	}
	return e, nil
}

// headerLine returns the header line starting at off and the offset just past its newline.
func headerLine(data []byte, off int) (line []byte, next int) {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return data[off : off+i], off + i + 1
	}
	return data[off:], len(data)
}

// parseItem reads one item starting at off. end is the offset of the newline after the
// payload (or len(data)).
func parseItem(data []byte, off int) (Item, int, error) {
	if len(bytes.TrimLeft(data[off:], " \t\r\n")) == 0 {
		// Relay's JSON reader skips whitespace and then finds nothing.
		return Item{}, 0, &ParseError{Offset: off, Err: ErrUnexpectedEOF, Detail: "no item header after a newline"}
	}
	line, start := headerLine(data, off)
	obj, err := decodeHeaderLine(line)
	if errors.Is(err, errTrailingData) {
		return Item{}, 0, &ParseError{Offset: off, Err: ErrMissingNewline, Detail: err.Error()}
	}
	if err != nil {
		return Item{}, 0, &ParseError{Offset: off, Err: ErrInvalidItemHeader, Detail: err.Error()}
	}
	it, length, err := decodeItemHeader(obj)
	if err != nil {
		return Item{}, 0, &ParseError{Offset: off, Err: ErrInvalidItemHeader, Detail: err.Error()}
	}
	if length < 0 {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i
		}
		it.Payload = data[start:end:end]
		return it, end, nil
	}
	end := start + length
	if end > len(data) {
		return Item{}, 0, &ParseError{
			Offset: start, Err: ErrUnexpectedEOF,
			Detail: fmt.Sprintf("length %d, %d bytes left", length, len(data)-start),
		}
	}
	if end < len(data) && data[end] != '\n' {
		return Item{}, 0, &ParseError{
			Offset: end, Err: ErrMissingNewline,
			Detail: fmt.Sprintf("byte %q after a payload of length %d", data[end], length),
		}
	}
	it.Payload = data[start:end:end]
	return it, end, nil
}

// errTrailingData marks a header line whose JSON object is followed by other bytes, which
// Relay reports as a missing newline.
var errTrailingData = errors.New("bytes after the JSON object")

// decodeHeaderLine decodes a header line that must be exactly one JSON object.
func decodeHeaderLine(line []byte) (map[string]any, error) {
	if len(line) == 0 {
		return nil, errors.New("empty line")
	}
	if line[0] != '{' {
		return nil, errors.New("line does not start with a JSON object")
	}
	if line[len(line)-1] != '}' || !json.Valid(line) {
		var raw json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(line))
		if dec.Decode(&raw) == nil && int(dec.InputOffset()) < len(line) {
			return nil, errTrailingData
		}
	}
	v, err := decodeStrict(line)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}
