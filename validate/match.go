package validate

import (
	"fmt"

	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/sim"
)

// Match is what a trace says about the box it was recorded on, held
// against the scenario: the evidence that it is a trace of another
// deployment.
type Match struct {
	// GPU is the evidence that the trace ran on another GPU than the
	// scenario's ("recorded on NVIDIA H200 (preset h200-sxm); the
	// scenario's GPU is rtx-pro-6000-server"), "" when it
	// did not or the trace names no device moecast knows. Comparing may go
	// on, with a warning; calibrating from it may not.
	GPU string
}

// CheckTrace holds the ranks' metadata against cfg. It returns an
// *InputError with the evidence for a trace of another layout: a world
// size (distributedInfo) that is no multiple of the scenario's GPUs, or collective
// kernels in the trace of a one-GPU scenario, which runs none.
func CheckTrace(cfg *sim.Config, ranks []Rank) (Match, error) {
	var m Match
	for _, rk := range ranks {
		if md := rk.Meta; md != nil {
			// A world of several replicas of the scenario's GPUs (data
			// parallel engines) fits; fewer ranks than GPUs, or a world
			// that is no whole number of replicas, does not.
			if d := md.Distributed; d != nil && d.WorldSize > 0 && (d.WorldSize < cfg.GPUs || d.WorldSize%cfg.GPUs != 0) {
				return m, &InputError{rk.File, fmt.Sprintf("the trace is one rank of %d (distributedInfo.world_size), no whole number of replicas of the scenario's %d GPUs: a trace of another layout?",
					d.WorldSize, cfg.GPUs)}
			}
			if len(md.DeviceProperties) > 0 && m.GPU == "" {
				name := md.DeviceProperties[0].Name
				if p, ok := kernels.DevicePreset(name); ok && p != cfg.GPU.Name {
					m.GPU = fmt.Sprintf("recorded on %s (preset %s); the scenario's GPU is %s", name, p, cfg.GPU.Name)
				}
			}
		}
		if cfg.GPUs == 1 && len(rk.Collectives) > 0 {
			return m, &InputError{rk.File, fmt.Sprintf("the trace runs %d collective kernels (the first a %s) but the scenario has 1 GPU, which runs none: a trace of a tensor- or expert-parallel deployment?",
				len(rk.Collectives), rk.Collectives[0].Category)}
		}
	}
	return m, nil
}
