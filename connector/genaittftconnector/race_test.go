//go:build race

package genaittftconnector

// raceEnabled shrinks the heavy tests: the race detector is ~10× slower.
const raceEnabled = true
