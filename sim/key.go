package sim

// StepKey is what the cost of a step depends on: the token counts, mean
// contexts and prefill sums of each pass the step is priced at (after the
// sequences are spread over the attention groups), and whether prefill
// chunks are in it. Two batches with equal keys have equal StepBatch Step
// and Breakdown, so a caller may cache them by key (a serving simulation
// meets the same shape many times: its decode contexts differ from step to
// step, but their mean repeats). Keys are comparable.
type StepKey struct {
	passes [numPasses]pass
	md     linkMode
}

// Key returns the StepKey of seqs, checking them as StepBatch does.
func (s *Sim) Key(seqs []Seq) (StepKey, error) {
	var k StepKey
	m, err := s.summarise(seqs)
	if err != nil {
		return k, err
	}
	for p := passKind(0); p < numPasses; p++ {
		if s.usedPasses&(1<<p) != 0 {
			k.passes[p] = s.pass(&m, p)
		}
	}
	g := s.graphModeOf(&m, &k.passes[passTarget])
	for p := range k.passes {
		k.passes[p].graph = g
	}
	k.md = modeOf(&m)
	return k, nil
}
