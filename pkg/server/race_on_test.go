//go:build race

package server

// raceEnabled is set when the race detector is on: the large shared
// golden catalogs take minutes under it and are skipped.
const raceEnabled = true
