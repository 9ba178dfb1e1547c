package profilechunk

import (
	"crypto/rand"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Translator renders pprofile.Profiles (go.opentelemetry.io/collector/pdata/pprofile
// at v0.165.0) into profile_chunk payloads. It holds only its options, so
// one Translator may serve concurrent calls.
type Translator struct {
	o        Options
	maxBytes int
}

// NewTranslator returns a Translator with the given options; zero values
// take the defaults documented on Options.
func NewTranslator(o Options) *Translator {
	t := &Translator{o: o, maxBytes: o.MaxChunkBytes}
	if t.maxBytes <= 0 {
		t.maxBytes = DefaultMaxChunkBytes
	}
	if t.o.NewID == nil {
		t.o.NewID = randomID
	}
	return t
}

func randomID() [16]byte {
	var id [16]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand documents it)
	return id
}

func (t *Translator) salt() string {
	if t.o.ProfilerSalt == nil {
		return ""
	}
	return t.o.ProfilerSalt()
}

// Profiles renders the chunks of pd that want asks for and counts the rest.
// Samples are grouped by process (resource and process.pid), sorted by
// time and cut into chunks of at most MaxChunkSpan and Options.MaxChunkBytes.
func (t *Translator) Profiles(pd pprofile.Profiles, want Want) Result {
	var res Result
	waste := wasteBudget(t.maxBytes)
	d := newDict(pd.Dictionary())
	salt := t.salt()
	rps := pd.ResourceProfiles()
	for ri := 0; ri < rps.Len(); ri++ {
		rp := rps.At(ri)
		r := t.resource(rp, ri, salt)
		streams := map[string]*stream{}
		var order []*stream
		sps := rp.ScopeProfiles()
		for si := 0; si < sps.Len(); si++ {
			profs := sps.At(si).Profiles()
			primary := primaryType(d, profs)
			for pi := 0; pi < profs.Len(); pi++ {
				p := profs.At(pi)
				if !t.admit(d, p, primary, r, &res) {
					continue
				}
				order = collect(d, p, r, streams, order, &res)
			}
		}
		for _, s := range order {
			t.emit(d, s, want, &waste, &res)
		}
	}
	return res
}
