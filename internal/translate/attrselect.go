package translate

// attrSelect is a set of attribute keys, or all keys.
type attrSelect struct {
	all  bool
	keys map[string]struct{}
}

// newAttrSelect builds the selection of keys: def when keys is nil, all keys
// when one of them is "*".
func newAttrSelect(keys, def []string) attrSelect {
	if keys == nil {
		keys = def
	}
	sel := attrSelect{keys: make(map[string]struct{}, len(keys))}
	for _, k := range keys {
		if k == "*" {
			sel.all = true
		}
		sel.keys[k] = struct{}{}
	}
	return sel
}

func (a *attrSelect) has(k string) bool {
	if a.all {
		return true
	}
	_, ok := a.keys[k]
	return ok
}
