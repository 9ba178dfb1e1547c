// Package profiletest is a test fixture: the start of a pprofile.Profiles
// built by hand, its dictionary's tables each opened with their zero entry
// as OTLP producers write them, and the entries every profiles test needs
// (strings, interned; attributes; stacks). The component never imports it;
// each test package, and cmd/otlpgen's profiles, adds the entries its own
// cases need.
package profiletest

import "go.opentelemetry.io/collector/pdata/pprofile"

// Dict builds one pprofile.Profiles (Profiles) and its dictionary.
type Dict struct {
	Profiles pprofile.Profiles
	strs     map[string]int32
}

// NewDict is an empty batch whose dictionary tables hold their zero entry.
func NewDict() *Dict {
	b := &Dict{Profiles: pprofile.NewProfiles(), strs: map[string]int32{}}
	d := b.Profiles.Dictionary()
	b.Str("")
	d.StackTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	return b
}

// Str is the index of s in the string table, added the first time.
func (b *Dict) Str(s string) int32 {
	if i, ok := b.strs[s]; ok {
		return i
	}
	t := b.Profiles.Dictionary().StringTable()
	t.Append(s)
	b.strs[s] = int32(t.Len() - 1)
	return b.strs[s]
}

// Attr adds the attribute key = v and returns its index.
func (b *Dict) Attr(key string, v any) int32 {
	t := b.Profiles.Dictionary().AttributeTable()
	a := t.AppendEmpty()
	a.SetKeyStrindex(b.Str(key))
	_ = a.Value().FromRaw(v)
	return int32(t.Len() - 1)
}

// Stack adds a stack of locs, leaf first, and returns its index.
func (b *Dict) Stack(locs ...int32) int32 {
	t := b.Profiles.Dictionary().StackTable()
	t.AppendEmpty().LocationIndices().FromRaw(locs)
	return int32(t.Len() - 1)
}
