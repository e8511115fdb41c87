//go:build !unix

package cli

import "os"

// cpuSeconds is not measured here.
func cpuSeconds() float64 { return 0 }

// maxRSSBytes is not measured here.
func maxRSSBytes(*os.ProcessState) float64 { return 0 }
