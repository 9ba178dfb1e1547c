//go:build race

package translate

// raceEnabled: the race detector is on. The property tests then draw fewer
// seeds (their check is the same; `make test` runs them again without -race,
// at every seed).
const raceEnabled = true
