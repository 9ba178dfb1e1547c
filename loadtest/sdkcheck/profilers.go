package main

import (
	"fmt"
	"sort"
	"strings"
)

// profilers checks, when sdkapp sent its services' profiles to one replica
// (--profiles), that every replica's transactions name the profiler_id their
// service's stored chunks carry (contexts.profile.profiler_id), whichever
// replica the front routed them to: all of them but --tolerance, on each
// replica. A chunk's service is the one whose module its first frame names
// (github.com/example/<service>/server).
func (ch *checker) profilers(roles map[string]spanRole) {
	app := ch.app
	fmt.Println("=== profiles sent to one replica, traces spread by the front")
	ch.eq("OTLP profiles in failed exports", app.Profiles.Failed, 0)
	ch.line(app.Profiles.Exported > 0, "OTLP profiles exported", app.Profiles.Exported, "> 0")
	ids := map[string]map[string]bool{} // service -> the profiler_ids of its chunks
	chunks := 0
	for k := range ch.recs {
		r := &ch.recs[k]
		if r.Type != "profile_chunk" {
			continue
		}
		chunks++
		svc, ok := strings.CutPrefix(r.Name, "github.com/example/")
		svc, _, _ = strings.Cut(svc, "/")
		if !ok {
			svc = ""
		}
		if ids[svc] == nil {
			ids[svc] = map[string]bool{}
		}
		ids[svc][r.Profiler] = true
	}
	ch.line(chunks > 0 && ids[""] == nil, "profile chunks stored, each of a service", chunks, "> 0, all of a service")
	several := 0
	for _, set := range ids {
		if len(set) > 1 {
			several++
		}
	}
	ch.eq("services whose chunks carry more than one profiler_id", int64(several), 0)

	type tally struct{ named, wrong, total int }
	byProject := map[string]*tally{}
	for k := range ch.recs {
		r := &ch.recs[k]
		role, ok := roles[r.SpanID]
		if r.Type != "transaction" || !ok || !role.root {
			continue
		}
		t := byProject[r.Project]
		if t == nil {
			t = &tally{}
			byProject[r.Project] = t
		}
		t.total++
		switch set := ids[app.List[role.req].Service]; {
		case r.Profiler == "":
		case set[r.Profiler] && len(set) == 1:
			t.named++
		default:
			t.wrong++
		}
	}
	projects := make([]string, 0, len(byProject))
	for p := range byProject {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	for _, p := range projects {
		t := byProject[p]
		share := float64(t.named) / float64(t.total)
		ch.line(share >= 1-ch.c.tolerance, fmt.Sprintf("project %s: transactions naming their chunks' profiler_id", p),
			fmt.Sprintf("%d/%d (%.1f %%)", t.named, t.total, 100*share), fmt.Sprintf(">= %.0f %%", 100*(1-ch.c.tolerance)))
		ch.eq(fmt.Sprintf("project %s: transactions naming another profiler_id", p), int64(t.wrong), 0)
	}
	ch.line(len(projects) > 1, "replicas with transactions", len(projects), "> 1")
}
