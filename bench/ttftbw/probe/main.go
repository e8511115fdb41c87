// Command ttftprobe prices one prefill step of a scenario (one chunk of N
// tokens beside D decodes) and prints its category breakdown and the ops'
// launch share: the op-level decomposition behind bench/RESULTS-ttftbw.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

func main() {
	chunks := flag.Int("chunks", 1, "prefill chunks")
	tok := flag.Int("tokens", 1024, "tokens per chunk")
	dec := flag.Int("decodes", 0, "decodes beside")
	ctx := flag.Int("context", 1024, "decode context")
	ops := flag.Bool("ops", false, "list ops")
	flag.Parse()
	sc, err := scenarios.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sm, err := sc.Sim()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var seqs []sim.Seq
	for i := 0; i < *chunks; i++ {
		seqs = append(seqs, sim.Seq{Query: *tok, Prefill: true})
	}
	for i := 0; i < *dec; i++ {
		seqs = append(seqs, sim.Seq{Query: 1, Context: *ctx})
	}
	var r sim.BatchResult
	if err := sm.StepBatch(seqs, &r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("step %.2f ms (tokens %d)\n", float64(r.Step.Time)*1e3, r.Tokens)
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		if t := r.Breakdown[c].Time; t > 0 {
			fmt.Printf("  %-14s %8.3f ms\n", c, float64(t)*1e3)
		}
	}
	o, _ := sm.ExplainBatch(seqs)
	var kern, gpu, launch float64
	for _, x := range o {
		kern += x.Count * float64(x.Estimate.Kernels)
		gpu += x.Count * float64(x.Estimate.Time)
		launch += x.Count * float64(x.Launch)
	}
	fmt.Printf("  kernels %.0f, GPU %.2f ms, launch beyond ops %.2f ms\n", kern, gpu*1e3, launch*1e3)
	if *ops {
		sort.SliceStable(o, func(i, j int) bool {
			return o[i].Count*float64(o[i].Estimate.Time) > o[j].Count*float64(o[j].Estimate.Time)
		})
		for _, x := range o {
			fmt.Printf("  %-10s %-38s %-36s x%-4.0f %8.1f us k=%.0f launch %.1f us  [%s %s]\n", x.Layer, x.Name, x.Shape, x.Count, float64(x.Estimate.Time)*1e6, x.Estimate.Kernels, float64(x.Launch)*1e6, x.Estimate.Source.Kind, x.Estimate.Source.Formula)
		}
	}
}
