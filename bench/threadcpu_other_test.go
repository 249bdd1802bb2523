//go:build !linux

package bench

import "time"

func threadCPU() time.Duration { return 0 }

const haveThreadCPU = false
