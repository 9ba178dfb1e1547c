package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"golang.org/x/exp/trace"
)

// summary is what scrape sent, for the checker.
type summary struct {
	Rounds int `json:"rounds"`
	// Aggregated are the pprof profiles sent (no timestamps), AggregatedSamples their
	// samples (distinct stacks).
	Aggregated        int   `json:"aggregated_profiles"`
	AggregatedSamples int64 `json:"aggregated_samples"`
	// Timestamped are the execution-trace profiles sent, Samples their CPU samples, and
	// Lonely the samples of a thread with one sample in its profile (Relay removes them).
	Timestamped int   `json:"timestamped_profiles"`
	Samples     int64 `json:"samples"`
	Lonely      int64 `json:"lonely_samples"`
	// Threads is the most threads one timestamped profile had samples on.
	Threads int `json:"max_threads"`
}

func runScrape(args []string) error {
	fs := flag.NewFlagSet("scrape", flag.ContinueOnError)
	app := fs.String("app", "", "the app's base URL (http://host:port)")
	otlp := fs.String("otlp", "", "the collector's OTLP/HTTP base URL")
	rounds := fs.Int("rounds", 3, "scrapes")
	seconds := fs.Int("seconds", 5, "length of each scrape")
	pid := fs.Int("pid", 0, "the app's process id (process.pid)")
	out := fs.String("summary", "", "write the summary here")
	if err := flags(fs, args); err != nil {
		return err
	}
	if *app == "" || *otlp == "" || *rounds < 1 || *seconds < 1 {
		return errors.New("-app, -otlp, and positive -rounds and -seconds are needed")
	}
	host, _ := os.Hostname()
	res := resourceAttrs{service: "profilesreal", host: host, pid: int64(*pid)}
	var sum summary
	for range *rounds {
		cpu, tr, err := fetchBoth(*app, *seconds)
		if err != nil {
			return err
		}
		agg, n, err := fromPprof(cpu, res)
		if err != nil {
			return fmt.Errorf("the CPU profile: %w", err)
		}
		ts, st, err := fromTrace(tr, res)
		if err != nil {
			return fmt.Errorf("the execution trace: %w", err)
		}
		if err := send(*otlp, agg); err != nil {
			return err
		}
		if err := send(*otlp, ts); err != nil {
			return err
		}
		sum.Rounds++
		sum.Aggregated++
		sum.AggregatedSamples += n
		sum.Timestamped++
		sum.Samples += st.samples
		sum.Lonely += st.lonely
		sum.Threads = max(sum.Threads, st.threads)
		fmt.Printf("round %d: pprof %d stacks; trace %d CPU samples on %d threads (%d lonely)\n", sum.Rounds, n, st.samples, st.threads, st.lonely)
	}
	b, _ := json.MarshalIndent(sum, "", "  ")
	if *out != "" {
		return os.WriteFile(*out, append(b, '\n'), 0o600)
	}
	fmt.Println(string(b))
	return nil
}

// fetchBoth takes the app's CPU profile and execution trace over the same seconds: with
// the CPU profiler on, the runtime also writes its samples into the trace.
func fetchBoth(app string, seconds int) (cpu, tr []byte, err error) {
	var wg sync.WaitGroup
	var cpuErr, trErr error
	wg.Go(func() { cpu, cpuErr = get(app + "/debug/pprof/profile?seconds=" + strconv.Itoa(seconds)) })
	time.Sleep(100 * time.Millisecond) // the profiler first, so the whole trace has samples
	wg.Go(func() { tr, trErr = get(app + "/debug/pprof/trace?seconds=" + strconv.Itoa(seconds-1)) })
	wg.Wait()
	return cpu, tr, errors.Join(cpuErr, trErr)
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // the app on 127.0.0.1
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// send POSTs one profiles export to the collector's OTLP/HTTP receiver.
func send(otlp string, pd pprofile.Profiles) error {
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, otlp+"/v1development/profiles", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the collector answered %s: %s", resp.Status, body)
	}
	return nil
}

// resourceAttrs is the process's resource, as the eBPF profiler and the OTel SDK name it.
type resourceAttrs struct {
	service, host string
	pid           int64
}

func (r resourceAttrs) put(res pcommon.Resource) {
	a := res.Attributes()
	a.PutStr("service.name", r.service)
	a.PutStr("host.name", r.host)
	a.PutInt("process.pid", r.pid)
	a.PutStr("process.executable.name", "profilesreal")
}

// fromPprof converts a CPU profile as pprofreceiver does: each sample a stack and its
// count, sample type samples/count, no timestamps.
func fromPprof(b []byte, res resourceAttrs) (pprofile.Profiles, int64, error) {
	p, err := profile.ParseData(b)
	if err != nil {
		return pprofile.Profiles{}, 0, err
	}
	pd, d, prof := newExport(res, time.Unix(0, p.TimeNanos), time.Duration(p.DurationNanos))
	for _, s := range p.Sample {
		frames := make([]frame, 0, len(s.Location))
		for _, loc := range s.Location {
			for _, ln := range loc.Line { // inlined first, as pprof orders them
				frames = append(frames, frame{pc: loc.Address, fn: ln.Function.Name, file: ln.Function.Filename, line: ln.Line})
			}
		}
		smp := prof.Samples().AppendEmpty()
		smp.SetStackIndex(d.stack(frames))
		smp.Values().Append(s.Value[0])
	}
	return pd, int64(len(p.Sample)), nil
}

// traceStats is what one execution trace's CPU samples were.
type traceStats struct {
	samples, lonely int64
	threads         int
}

// fromTrace converts the CPU samples of an execution trace: one OTLP sample each, with
// its wall-clock time (from the trace's clock snapshot) and its thread (the M).
func fromTrace(b []byte, res resourceAttrs) (pprofile.Profiles, traceStats, error) {
	r, err := trace.NewReader(bytes.NewReader(b))
	if err != nil {
		return pprofile.Profiles{}, traceStats{}, err
	}
	var (
		snapTrace trace.Time
		snapWall  time.Time
		first     time.Time
		last      time.Time
		st        traceStats
	)
	perThread := map[int64]int64{}
	type sample struct {
		at     time.Time
		thread int64
		frames []frame
	}
	var samples []sample
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return pprofile.Profiles{}, st, err
		}
		switch ev.Kind() {
		case trace.EventSync:
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				snapTrace, snapWall = cs.Trace, cs.Wall
			}
		case trace.EventStackSample:
			if snapWall.IsZero() {
				return pprofile.Profiles{}, st, errors.New("a CPU sample before any clock snapshot")
			}
			at := snapWall.Add(time.Duration(ev.Time() - snapTrace))
			var frames []frame
			for f := range ev.Stack().Frames() {
				frames = append(frames, frame{pc: f.PC, fn: f.Func, file: f.File, line: int64(f.Line)})
			}
			tid := int64(ev.Thread())
			samples = append(samples, sample{at: at, thread: tid, frames: frames})
			perThread[tid]++
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
	}
	pd, d, prof := newExport(res, first, last.Sub(first))
	for _, s := range samples {
		smp := prof.Samples().AppendEmpty()
		smp.SetStackIndex(d.stack(s.frames))
		smp.TimestampsUnixNano().Append(uint64(s.at.UnixNano()))
		smp.Values().Append(1)
		smp.AttributeIndices().FromRaw([]int32{d.attr("thread.id", s.thread), d.attr("thread.name", "profilesreal")})
	}
	st.samples, st.threads = int64(len(samples)), len(perThread)
	for _, n := range perThread {
		if n == 1 {
			st.lonely++
		}
	}
	return pd, st, nil
}

// newExport starts an export of one profile of the process, sample type samples/count.
func newExport(res resourceAttrs, start time.Time, d time.Duration) (pprofile.Profiles, *dict, pprofile.Profile) {
	pd := pprofile.NewProfiles()
	dc := newDict(pd.Dictionary())
	rp := pd.ResourceProfiles().AppendEmpty()
	res.put(rp.Resource())
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName("profilesreal")
	prof := sp.Profiles().AppendEmpty()
	prof.SampleType().SetTypeStrindex(dc.str("samples"))
	prof.SampleType().SetUnitStrindex(dc.str("count"))
	prof.SetTime(pcommon.NewTimestampFromTime(start))
	prof.SetDurationNano(uint64(max(d, 0)))
	return pd, dc, prof
}
