//go:build !race

package sentryexporter

const raceEnabled = false
