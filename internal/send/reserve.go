package send

// Reserve counts n bytes for l in the memory budget before they are held
// outside the stage (a profile chunk while it is rendered), making room as
// for an envelope (makeRoom); false when there is none. Unreserve gives
// them back.
func (l *Lane) Reserve(n int64) bool { return l.stage.makeRoom(l, n) }

// Unreserve gives back n bytes Reserve counted.
func (l *Lane) Unreserve(n int64) { l.mem.Add(-n) }
