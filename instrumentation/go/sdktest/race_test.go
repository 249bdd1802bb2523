//go:build race

package sdktest

// raceSlowdown widens tolerance under the race detector (see tolerance).
const raceSlowdown = 3
