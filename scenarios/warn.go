package scenarios

import (
	"fmt"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/serve"
)

// pos is where key stands for a warning: "file:line", or "file" where
// the file does not hold the key (its default, or a flag sets it).
func (s *Scenario) pos(key string) string {
	if l := s.doc.line(key); l > 0 {
		return fmt.Sprintf("%s:%d", s.File, l)
	}
	return s.File
}

// hardwareWarnings are the remarks on a valid but unusual box: a layout
// wider than one node of its fabric, and a custom all-reduce that the stock
// engine would not run there (comm.Policy.Refusal says why). Each names the
// scenario line.
func (s *Scenario) hardwareWarnings() []string {
	c := s.Config
	var out []string
	at := func(key string) string { return s.pos(key) + ": " + key }
	if n := c.Fabric.NodeGPUs; n > 0 && c.GPUs > n && !(c.NIC.BW > 0) {
		out = append(out, fmt.Sprintf("%s: %d GPUs span %d nodes of fabric %s, which joins %d GPUs per node; without hardware.nic collectives are priced as if %s joined all %d (across nodes they are slower: set hardware.nic, one of %s)",
			at("hardware.gpus"), c.GPUs, (c.GPUs+n-1)/n, c.Fabric.Name, n, c.Fabric.Name, c.GPUs, strings.Join(comm.NICNames(), ", ")))
	}
	if impl := c.AllReduce; impl == comm.OneShot || impl == comm.TwoShot {
		// The engine's policy says why it would not run impl here (an
		// unknown runtime.engine is reported by buildServing).
		e, _ := serve.ParseEngine(s.doc.raw.Runtime.Engine)
		if why := e.Info().AllReduce.Refusal(c.Fabric, c.Layout.TP, impl); why != "" {
			out = append(out, fmt.Sprintf("%s = %q: %s", at("runtime.allreduce"), impl, why))
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
