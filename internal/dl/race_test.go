//go:build race

package dl

const raceEnabled = true
