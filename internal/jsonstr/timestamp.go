package jsonstr

import "strconv"

// AppendTimestamp appends ns nanoseconds since the epoch as seconds with
// exactly microsecond precision (a JSON number), without going through a
// float.
func AppendTimestamp(b []byte, ns uint64) []byte {
	sec, us := ns/1e9, (ns%1e9)/1e3
	if sec < 1e9 { // before 2001: rare
		b = strconv.AppendUint(b, sec, 10)
		var d [7]byte
		d[0] = '.'
		put6(&d, us)
		return append(b, d[:]...)
	}
	var d [17]byte // up to the year 2286: ten digits of seconds
	hi, lo := sec/1e5%1e5, sec%1e5
	d[0] = byte('0' + hi/1e4)
	copy(d[1:3], digitPairs[hi%1e4/100*2:][:2])
	copy(d[3:5], digitPairs[hi%100*2:][:2])
	d[5] = byte('0' + lo/1e4)
	copy(d[6:8], digitPairs[lo%1e4/100*2:][:2])
	copy(d[8:10], digitPairs[lo%100*2:][:2])
	d10 := (*[7]byte)(d[10:])
	d10[0] = '.'
	put6(d10, us)
	if sec >= 1e10 {
		b = strconv.AppendUint(b, sec/1e10, 10)
	}
	return append(b, d[:]...)
}

// put6 writes us (< 1e6) as six digits after d[0].
func put6(d *[7]byte, us uint64) {
	copy(d[1:3], digitPairs[us/1e4*2:][:2])
	copy(d[3:5], digitPairs[us/100%100*2:][:2])
	copy(d[5:7], digitPairs[us%100*2:][:2])
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"
