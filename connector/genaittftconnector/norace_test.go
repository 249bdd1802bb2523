//go:build !race

package genaittftconnector

const raceEnabled = false
