package main

import (
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// frame is one line of a stack, leaf first.
type frame struct {
	pc   uint64
	fn   string
	file string
	line int64
}

// dict fills an export's dictionary: each string, function, location, stack and attribute
// once, every table starting with its zero entry as OTLP producers write them.
type dict struct {
	d     pprofile.ProfilesDictionary
	strs  map[string]int32
	funcs map[[2]string]int32
	locs  map[frame]int32
	stks  map[string]int32
	attrs map[string]int32
	goTyp int32 // the profile.frame.type "go" attribute
}

func newDict(d pprofile.ProfilesDictionary) *dict {
	c := &dict{d: d, strs: map[string]int32{}, funcs: map[[2]string]int32{}, locs: map[frame]int32{}, stks: map[string]int32{}, attrs: map[string]int32{}}
	c.str("")
	d.StackTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	c.goTyp = c.attr("profile.frame.type", "go")
	return c
}

func (c *dict) str(s string) int32 {
	if i, ok := c.strs[s]; ok {
		return i
	}
	i := int32(c.d.StringTable().Len())
	c.d.StringTable().Append(s)
	c.strs[s] = i
	return i
}

// attr is the index of the attribute key=v (a string or an int64).
func (c *dict) attr(key string, v any) int32 {
	k := key + "\x00" + fmt.Sprint(v)
	if i, ok := c.attrs[k]; ok {
		return i
	}
	a := c.d.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(c.str(key))
	_ = a.Value().FromRaw(v)
	i := int32(c.d.AttributeTable().Len() - 1)
	c.attrs[k] = i
	return i
}

func (c *dict) function(name, file string) int32 {
	k := [2]string{name, file}
	if i, ok := c.funcs[k]; ok {
		return i
	}
	f := c.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(c.str(name))
	f.SetFilenameStrindex(c.str(file))
	i := int32(c.d.FunctionTable().Len() - 1)
	c.funcs[k] = i
	return i
}

func (c *dict) location(f frame) int32 {
	if i, ok := c.locs[f]; ok {
		return i
	}
	l := c.d.LocationTable().AppendEmpty()
	l.SetAddress(f.pc)
	l.AttributeIndices().Append(c.goTyp)
	ln := l.Lines().AppendEmpty()
	ln.SetFunctionIndex(c.function(f.fn, f.file))
	ln.SetLine(f.line)
	i := int32(c.d.LocationTable().Len() - 1)
	c.locs[f] = i
	return i
}

// stack is the index of the stack of frames, leaf first.
func (c *dict) stack(frames []frame) int32 {
	idx := make([]int32, len(frames))
	var key strings.Builder
	for j, f := range frames {
		idx[j] = c.location(f)
		key.WriteString(strconv.Itoa(int(idx[j])))
		key.WriteByte(',')
	}
	if i, ok := c.stks[key.String()]; ok {
		return i
	}
	s := c.d.StackTable().AppendEmpty()
	s.LocationIndices().FromRaw(idx)
	i := int32(c.d.StackTable().Len() - 1)
	c.stks[key.String()] = i
	return i
}
