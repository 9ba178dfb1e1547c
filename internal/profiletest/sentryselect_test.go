package profiletest

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunk of profiler p: thread "7" sampled at 10.0, 10.1, 10.2 and 10.3 s,
// thread "8" at 10.05 and 10.15 s.
func chunk(p string) []byte {
	return []byte(`{"profiler_id":"` + p + `","profile":{"samples":[` +
		`{"stack_id":0,"thread_id":"7","timestamp":10.0},{"stack_id":1,"thread_id":"8","timestamp":10.05},` +
		`{"stack_id":0,"thread_id":"7","timestamp":10.1},{"stack_id":1,"thread_id":"8","timestamp":10.15},` +
		`{"stack_id":2,"thread_id":"7","timestamp":10.2},{"stack_id":0,"thread_id":"7","timestamp":10.3}]}}`)
}

func TestTransactionSamples(t *testing.T) {
	tx := func(profiler, thread string, start, end float64) []byte {
		data := ""
		if thread != "" {
			data = `,"data":{"thread.id":` + thread + `}`
		}
		return []byte(`{"start_timestamp":` + ftoa(start) + `,"timestamp":` + ftoa(end) +
			`,"contexts":{"profile":{"profiler_id":"` + profiler + `"},"trace":{"trace_id":"t"` + data + `}}}`)
	}
	chunks := [][]byte{chunk("a"), chunk("b")}
	for name, c := range map[string]struct {
		tx   []byte
		want []float64
	}{
		"a thread named as a string":             {tx("a", `"7"`, 10.12, 10.25), []float64{10.1, 10.2}},
		"a thread named as a number":             {tx("a", `8`, 10.0, 10.3), []float64{10.05}},
		"no thread: not a candidate":             {tx("a", "", 10.0, 10.3), nil},
		"no profiler: not a candidate":           {tx("", `"7"`, 10.0, 10.3), nil},
		"another profiler's chunks":              {tx("c", `"7"`, 10.0, 10.3), nil},
		"the thread's last sample only ends one": {tx("a", `"7"`, 10.25, 10.4), []float64{10.2}},
		"a chunk outside the transaction":        {tx("a", `"7"`, 11.0, 12.0), nil},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := TransactionSamples(c.tx, chunks)
			require.NoError(t, err)
			var ts []float64
			for _, s := range got {
				ts = append(ts, s.Timestamp)
			}
			assert.Equal(t, c.want, ts)
		})
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
