package split

import (
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Profiles is the Signal of pprofile.Profiles. A batch's resources refer by
// index into one dictionary (strings, functions, locations, mappings,
// stacks, attributes, links) shared by the whole batch. Each part gets a
// dictionary of its own (subset): the entries its resources refer to,
// directly or through other entries, in the batch's order, each table's
// entry 0 still at 0, and its indexes rewritten to match; an index out of
// range stays as it is, out of range in the part too. So a part costs what
// it refers to, not the batch's dictionary: a request carrying a fleet's
// profiles, routed to as many projects, is no longer its dictionary copied
// per project (entries several services share are copied into each of
// their parts). The cost is two walks of each part's samples and an int32
// per dictionary entry, once per batch. BenchmarkByProfilesFleet (100
// services, each with 200 functions, locations and stacks of its own and
// 1,000 samples, cut into 100 parts): ~13 MB and ~24 ms, where a copy of
// the whole dictionary per part cost ~395 MB and ~1 s. A batch of one
// project is not copied at all.
func Profiles() Signal[pprofile.Profiles] {
	s := signal(pprofile.Profiles.ResourceProfiles, pprofile.NewProfiles)
	s.Finish = func(src pprofile.Profiles, parts []pprofile.Profiles) {
		x := newSubset(src.Dictionary())
		for _, p := range parts {
			x.give(p)
		}
	}
	return s
}
