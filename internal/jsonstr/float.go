package jsonstr

import (
	"math"
	"strconv"
)

// AppendFloat appends a finite float as a JSON number that always reads back
// as a double (1 is written 1.0). The caller handles NaN and ±Inf, which JSON
// cannot hold.
func AppendFloat(b []byte, f float64) []byte {
	start := len(b)
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
	} else {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0')
}
