package discovery

// Lookups returns the number of API calls made so far.
func (r *Resolver) Lookups() int64 { return r.lookups.Load() }
