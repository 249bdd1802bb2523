//go:build unix

package window

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds cpu-ns/op: process CPU time per op, which stays meaningful when
// other jobs share the cores and inflate the wall-clock ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuNow()
	return func() {
		b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
