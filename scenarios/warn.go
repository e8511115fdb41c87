package scenarios

import (
	"fmt"

	"github.com/moecast/moecast/comm"
)

// hardwareWarnings are the remarks on a valid but unusual box: a layout
// wider than one node of its fabric, and a custom all-reduce that a stock
// engine would not run there. Each names the scenario line.
func (s *Scenario) hardwareWarnings() []string {
	c := s.Config
	var out []string
	at := func(key string) string {
		if l := s.doc.line(key); l > 0 {
			return fmt.Sprintf("%s:%d: %s", s.File, l, key)
		}
		return fmt.Sprintf("%s: %s", s.File, key)
	}
	if n := c.Fabric.NodeGPUs; n > 0 && c.GPUs > n {
		out = append(out, fmt.Sprintf("%s: %d GPUs span %d nodes of fabric %s, which joins %d GPUs per node; moecast models one node, so collectives are priced as if %s joined all %d (across nodes they are slower)",
			at("hardware.gpus"), c.GPUs, (c.GPUs+n-1)/n, c.Fabric.Name, n, c.Fabric.Name, c.GPUs))
	}
	if impl := c.AllReduce; impl == comm.OneShot || impl == comm.TwoShot {
		tp := c.Layout.TP
		key := at("runtime.allreduce")
		switch {
		case tp <= 1:
		case !c.Fabric.P2P:
			out = append(out, fmt.Sprintf("%s = %q: fabric %s has no P2P, so no custom all-reduce can run; NCCL is priced", key, impl, c.Fabric.Name))
		case tp > comm.CustomARMaxRanks || tp%2 != 0:
			out = append(out, fmt.Sprintf("%s = %q: stock vLLM runs its custom all-reduce on 2, 4, 6 or 8 GPUs, not %d (it uses NCCL); priced as asked, from a table of that kernel or its model", key, impl, tp))
		case !c.Fabric.NVLink && tp > 2:
			out = append(out, fmt.Sprintf("%s = %q: stock vLLM disables its custom all-reduce on more than 2 GPUs without NVLink (it uses NCCL on this %d-GPU %s group); priced as asked, for a patched engine, from a table of that kernel or its model, never from the engine's measured all-reduce",
				key, impl, tp, c.Fabric.Name))
		case tp == 2 && impl == comm.TwoShot:
			out = append(out, fmt.Sprintf("%s = \"twoshot\": stock vLLM always runs the one-shot kernel on 2 GPUs; priced as asked, from a table of that kernel or its model", key))
		}
	}
	return out
}

// ContextWarnings are the remarks on a context length for this
// scenario's model: beyond its max_position_embeddings.
func (s *Scenario) ContextWarnings(context int) []string {
	m := s.Config.Model
	if m == nil || m.MaxPosition <= 0 || context <= m.MaxPosition {
		return nil
	}
	return []string{fmt.Sprintf("context %d exceeds the model's max_position_embeddings (%d): an engine refuses it (or needs RoPE scaling); priced as asked", context, m.MaxPosition)}
}
