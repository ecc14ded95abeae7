//go:build unix

package tracer

import (
	"syscall"
	"time"
)

// cpuSeconds returns the user and system CPU time of the process, which the
// load of other processes on a shared machine inflates less than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
