package jsonstr

import "slices"

// AppendHex appends id as lowercase hex digits, unquoted.
func AppendHex(b, id []byte) []byte {
	n := len(b)
	b = slices.Grow(b, 2*len(id))[:n+2*len(id)]
	d := b[n:]
	for i, c := range id {
		d[2*i], d[2*i+1] = hexDigits[c>>4], hexDigits[c&0xf]
	}
	return b
}
