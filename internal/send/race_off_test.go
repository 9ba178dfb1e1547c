//go:build !race

package send

const raceEnabled = false
