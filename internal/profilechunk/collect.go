package profilechunk

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

// Sample timestamps outside [minTimeNs, maxTimeNs) (2000-01-01 to
// 2200-01-01) are counted invalid: zero or absurd clocks would put the
// sample decades away from its chunk.
const (
	minTimeNs = 946684800 * 1e9
	maxTimeNs = 7258118400 * 1e9
)

// sampleRec is one sample (one timestamp of an OTLP sample) of a stream.
type sampleRec struct {
	ts     int64 // ns since the epoch
	stack  int32 // index in the dictionary's stack table, validated
	thread int32 // index in stream.threads
	link   int32 // index in the dictionary's link table; <= 0 for none
}

type thread struct{ id, name string }

// stream is the samples of one process: one resource and process.pid.
type stream struct {
	res       *resInfo
	pid       string
	samples   []sampleRec
	threads   []thread
	threadIdx map[string]int32
}

// sampleType names the kind of samples a profile holds, lower case.
func sampleType(d *dict, p pprofile.Profile) string {
	return strings.ToLower(d.str(p.SampleType().TypeStrindex()))
}

// cpuRank ranks the sample types a chunk can carry, a timeline of stack
// samples: the sample count first, then CPU time, then wall time; 0 for
// any other type (allocations, in-use memory, contention, off-CPU...).
func cpuRank(typ string) int {
	switch typ {
	case "", "samples", "sample":
		return 3
	case "cpu":
		return 2
	case "wall":
		return 1
	}
	return 0
}

// primaryType returns the rank of the sample type rendered for a scope: its
// highest-ranked one. pprof conversions give one profile per sample type
// (samples/count and cpu/nanoseconds of the same samples), so only one is
// rendered; the others are counted as Duplicate.
func primaryType(d *dict, profs pprofile.ProfilesSlice) int {
	best := 0
	for i := 0; i < profs.Len(); i++ {
		best = max(best, cpuRank(sampleType(d, profs.At(i))))
	}
	return best
}

// admit decides whether profile p is rendered, and counts it when not.
func (*Translator) admit(d *dict, p pprofile.Profile, primary int, r *resInfo, res *Result) bool {
	rank := cpuRank(sampleType(d, p))
	cat := profileCategory(r.platform)
	switch {
	case rank == 0:
		res.Unsupported[cat]++
	case rank != primary:
		res.Duplicate[cat]++
	default:
		return true
	}
	return false
}

// collect adds the samples of profile p to the streams of its resource and
// counts what it cannot use; it returns the streams in first-seen order.
func collect(d *dict, p pprofile.Profile, r *resInfo, streams map[string]*stream, order []*stream, res *Result) []*stream {
	var valid, invalid, noTS int64
	ss := p.Samples()
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		ts := s.TimestampsUnixNano()
		if ts.Len() == 0 {
			noTS++
			continue
		}
		if !d.validStack(s.StackIndex()) {
			invalid += int64(ts.Len())
			continue
		}
		a := readSampleAttrs(d, s)
		pid := a.pid
		if pid == "" {
			pid = r.pid
		}
		st := streams[pid]
		if st == nil {
			st = &stream{res: r, pid: pid, threadIdx: map[string]int32{}}
			streams[pid] = st
			order = append(order, st)
		}
		th := st.thread(a.threadID, a.threadName)
		for k := 0; k < ts.Len(); k++ {
			n := ts.At(k)
			if n < minTimeNs || n >= maxTimeNs {
				invalid++
				continue
			}
			st.samples = append(st.samples, sampleRec{ts: int64(n), stack: s.StackIndex(), thread: th, link: s.LinkIndex()})
			valid++
		}
	}
	cat := profileCategory(r.platform)
	switch {
	case valid > 0:
		res.Samples.Invalid += invalid
		res.Samples.NoTimestamp += noTS
	case noTS > 0 && invalid == 0:
		res.NoTimestamps[cat]++
	default:
		res.Invalid[cat]++
	}
	return order
}

// thread returns the index of thread id in the stream, adding it first.
func (st *stream) thread(id, name string) int32 {
	if i, ok := st.threadIdx[id]; ok {
		if name != "" && st.threads[i].name == "" {
			st.threads[i].name = name
		}
		return i
	}
	i := int32(len(st.threads))
	st.threads = append(st.threads, thread{id: id, name: name})
	st.threadIdx[id] = i
	return i
}

type sampleAttrs struct{ threadID, threadName, pid string }

// readSampleAttrs reads thread.id, thread.name and process.pid of a sample.
// A sample without thread.id is put on thread "0".
func readSampleAttrs(d *dict, s pprofile.Sample) sampleAttrs {
	a := sampleAttrs{threadID: "0"}
	idx := s.AttributeIndices()
	for i := 0; i < idx.Len(); i++ {
		k, v, ok := d.attr(idx.At(i))
		if !ok {
			continue
		}
		switch k {
		case "thread.id":
			if id := threadIDString(v); id != "" {
				a.threadID = id
			}
		case "thread.name":
			a.threadName = v.AsString()
		case "process.pid":
			a.pid = PIDString(v)
		}
	}
	return a
}

func threadIDString(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeInt {
		return strconv.FormatInt(v.Int(), 10)
	}
	return v.AsString()
}

// profileCategory is the profile_chunk category of a platform.
func profileCategory(platform string) account.Category {
	if IsUI(platform) {
		return account.CatProfileChunkUI
	}
	return account.CatProfileChunk
}
