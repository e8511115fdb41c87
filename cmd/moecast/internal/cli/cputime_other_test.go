//go:build !unix

package cli

// cpuSeconds is not measured here.
func cpuSeconds() float64 { return 0 }
