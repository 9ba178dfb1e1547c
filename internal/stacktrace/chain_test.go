package stacktrace

// head is what the chain tests compare of an exception.
type head struct{ module, typ, value string }

func heads(excs []Exception) []head {
	var out []head
	for _, e := range excs {
		out = append(out, head{e.Module, e.Type, e.Value})
	}
	return out
}

// frame is what the chain tests compare of a frame.
type frame struct {
	module, fn, file string
	line             int
	inApp            bool
}

func frames(e Exception) []frame {
	var out []frame
	for _, f := range e.Frames {
		out = append(out, frame{f.Module, f.Function, f.Filename, f.Lineno, f.InApp})
	}
	return out
}
