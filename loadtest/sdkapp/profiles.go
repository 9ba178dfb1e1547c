package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// With --profiles-endpoint, every service runs in its own container (container.id on its
// resource, as the SDK's container detector writes it), and every second sdkapp exports
// what the eBPF profiler on their node would for the second past: one OTLP profile per
// service, to that endpoint alone (one replica: the loadbalancing exporter has no profiles
// pipeline, docs/scale-out.md). Its resource is the eBPF profiler's
// (opentelemetry-ebpf-profiler's setResourceAttributes, plus the node's host.name from the
// resourcedetection processor): container.id, process.pid in the host's namespace,
// process.executable.*, no service.* and no telemetry.sdk.*. Its samples: 20 Hz on two OS
// threads, every frame one of the service's own Go functions
// (github.com/example/<service>/server), which tells sdkcheck whose chunk it is.

// containerID is service name's container.id: 64 hex digits, as a container runtime's.
func containerID(name string) string {
	sum := sha256.Sum256([]byte("sdkapp/" + name))
	return hex.EncodeToString(sum[:])
}

// profileHz is how often each thread is sampled (the eBPF profiler's default).
const profileHz = 20

// profileSecond is the eBPF profiler's export of [from, to) for every service.
func (a *app) profileSecond(from, to time.Time) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	strs := map[string]int32{}
	str := func(s string) int32 {
		if i, ok := strs[s]; ok {
			return i
		}
		strs[s] = int32(d.StringTable().Len())
		d.StringTable().Append(s)
		return strs[s]
	}
	str("")
	d.StackTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	attr := func(k string, v int64) int32 {
		at := d.AttributeTable().AppendEmpty()
		at.SetKeyStrindex(str(k))
		at.Value().SetInt(v)
		return int32(d.AttributeTable().Len() - 1)
	}
	goFrame := d.AttributeTable().AppendEmpty()
	goFrame.SetKeyStrindex(str("profile.frame.type"))
	goFrame.Value().SetStr("go")
	goType := int32(d.AttributeTable().Len() - 1)

	for i, s := range a.services {
		rp := pd.ResourceProfiles().AppendEmpty()
		r := rp.Resource().Attributes()
		r.PutStr("container.id", containerID(s.name))
		r.PutInt("process.pid", int64(40_000+i))
		r.PutStr("process.executable.name", "server")
		r.PutStr("process.executable.path", "/app/server")
		r.PutStr("host.name", "node-1")
		sp := rp.ScopeProfiles().AppendEmpty()
		sp.Scope().SetName("go.opentelemetry.io/ebpf-profiler")
		p := sp.Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(str("samples"))
		p.SampleType().SetUnitStrindex(str("count"))
		p.SetPeriod(int64(time.Second / profileHz))
		p.SetTime(pcommon.NewTimestampFromTime(from))
		p.SetDurationNano(uint64(to.Sub(from)))

		var locs []int32
		for _, fn := range []string{"(*Handler).query", "(*Handler).serve"} {
			f := d.FunctionTable().AppendEmpty()
			f.SetNameStrindex(str(fmt.Sprintf("github.com/example/%s/server.%s", s.name, fn)))
			f.SetFilenameStrindex(str("/app/server/handlers.go"))
			l := d.LocationTable().AppendEmpty()
			l.AttributeIndices().Append(goType)
			ln := l.Lines().AppendEmpty()
			ln.SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
			ln.SetLine(int64(20 + len(locs)))
			locs = append(locs, int32(d.LocationTable().Len()-1))
		}
		d.StackTable().AppendEmpty().LocationIndices().FromRaw(locs)
		stack := int32(d.StackTable().Len() - 1)
		for th := range int64(2) {
			tid := attr("thread.id", int64(40_000+i)*10+th)
			for at := from; at.Before(to); at = at.Add(time.Second / profileHz) {
				smp := p.Samples().AppendEmpty()
				smp.SetStackIndex(stack)
				smp.AttributeIndices().Append(tid)
				smp.TimestampsUnixNano().Append(uint64(at.UnixNano()))
				smp.Values().Append(1)
			}
		}
	}
	return pd
}

// profileLoop exports a second of profiles every second until stop is closed, and the
// last part second then.
func (a *app) profileLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	from := time.Now()
	for {
		select {
		case <-stop:
			if now := time.Now(); now.Sub(from) >= 100*time.Millisecond {
				a.sendProfiles(from, now)
			}
			return
		case now := <-t.C:
			a.sendProfiles(from, now)
			from = now
		}
	}
}

// sendProfiles POSTs the services' profiles of [from, to) as OTLP/HTTP protobuf and
// counts them exported or failed.
func (a *app) sendProfiles(from, to time.Time) {
	n := int64(len(a.services))
	b, err := pprofileotlp.NewExportRequestFromProfiles(a.profileSecond(from, to)).MarshalProto()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, "http://"+a.o.profilesEndpoint+"/v1development/profiles", bytes.NewReader(b))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-protobuf")
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkapp: profiles:", err)
		a.profilesFailed.Add(n)
		return
	}
	a.profilesExported.Add(n)
}
