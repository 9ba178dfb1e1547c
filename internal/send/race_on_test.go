//go:build race

package send

const raceEnabled = true
