//go:build !unix

package tracer

// cpuSeconds is not measured on this system.
func cpuSeconds() float64 { return 0 }
