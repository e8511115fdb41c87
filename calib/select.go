package calib

import (
	"slices"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/kernels"
)

// Box is the hardware a calibration is chosen for: the GPU and fabric
// presets as their tables' provenance names them, and the GPU count.
type Box struct {
	GPU    string // GPU preset: "h200-sxm"
	Fabric string // fabric preset: "nvlink4"; "" for one GPU
	GPUs   int    // GPUs in the box; with one, collective tables are kept unused
}

// Use says what Select took from one calibration file.
type Use struct {
	Name   string // the file's Name: "embedded:h200-sxm" or its path
	Tables int    // tables in the file
	// KernelUsed and CommUsed count the kernel (gemm, moe, mla, gqa, elementwise) and
	// collective (collectives, ep) tables measured on the box;
	// KernelSkipped and CommSkipped those measured elsewhere, with where
	// in KernelFrom ("h100-sxm") and CommFrom ("h100-sxm over nvlink4").
	KernelUsed, KernelSkipped int
	CommUsed, CommSkipped     int
	KernelFrom, CommFrom      []string
	// Replaced counts the tables of earlier files that a table of this
	// one replaced (same op and keys).
	Replaced int
}

// Used is the number of the file's tables that apply to the box.
func (u Use) Used() int { return u.KernelUsed + u.CommUsed }

// Selection is the part of a stack of calibration files that applies to
// one box; Select builds it.
type Selection struct {
	Uses []Use // one per file, in the order given

	kt kernels.Tables
	ct comm.Tables
}

// layered is one selected table with the identity that a later file's
// table replaces it by.
type layered struct {
	op   string
	keys Keys
	file int
	tb   any // *kernels.GEMMTable ... *comm.EPTable
}

// Select returns the tables of files that apply to box, layered: files
// later in the list override earlier ones table by table. A table of a
// later file replaces every table of an earlier file with the same op and
// keys; the others stay, and lookups try the later file's tables first,
// so an imported nccl-tests file replaces the embedded all-reduce tables
// and keeps the embedded MoE and MLA tables.
//
// Kernel tables (gemm, moe, mla, gqa, elementwise) apply when their provenance names
// box.GPU; collective and EP tables when it names box.GPU and box.Fabric,
// or whatever it names when the box has one GPU (it runs no collective).
// Nil files are skipped.
func Select(box Box, files ...*File) *Selection {
	s := &Selection{}
	var stack []layered
	add := func(from *[]string, v string) {
		if !slices.Contains(*from, v) {
			*from = append(*from, v)
		}
	}
	for fi, f := range files {
		if f == nil {
			continue
		}
		u := Use{Name: f.Name, Tables: len(f.Tables)}
		var mine []layered
		for i := range f.Tables {
			t := &f.Tables[i]
			p := f.Effective(t)
			ok := false
			switch def, _ := opFor(t.Op); {
			case def != nil && !def.comm: // kernel tables
				if ok = p.GPU == box.GPU; ok {
					u.KernelUsed++
				} else {
					u.KernelSkipped++
					add(&u.KernelFrom, p.GPU)
				}
			default: // collectives and ep
				if ok = box.GPUs <= 1 || (p.GPU == box.GPU && p.Fabric == box.Fabric); ok {
					u.CommUsed++
				} else {
					u.CommSkipped++
					fab := p.Fabric
					if fab == "" {
						fab = "an unrecorded fabric"
					}
					add(&u.CommFrom, p.GPU+" over "+fab)
				}
			}
			if ok && t.loo != nil {
				mine = append(mine, layered{op: t.Op, keys: t.Keys, file: fi, tb: t.loo})
			}
		}
		n := len(stack)
		stack = slices.DeleteFunc(stack, func(l layered) bool {
			return slices.ContainsFunc(mine, func(m layered) bool { return m.op == l.op && m.keys == l.keys })
		})
		u.Replaced = n - len(stack)
		// Later files first: the first table that covers a query answers.
		stack = append(mine, stack...)
		s.Uses = append(s.Uses, u)
	}
	for _, l := range stack {
		switch tb := l.tb.(type) {
		case *kernels.GEMMTable:
			s.kt.GEMMs = append(s.kt.GEMMs, tb)
		case *kernels.MoETable:
			s.kt.MoEs = append(s.kt.MoEs, tb)
		case *kernels.MLATable:
			s.kt.MLAs = append(s.kt.MLAs, tb)
		case *kernels.GQATable:
			s.kt.GQAs = append(s.kt.GQAs, tb)
		case *kernels.PrefillTable:
			s.kt.Prefills = append(s.kt.Prefills, tb)
		case *kernels.ElementwiseTable:
			s.kt.Elementwises = append(s.kt.Elementwises, tb)
		case *kernels.UnmappedTable:
			s.kt.Unmappeds = append(s.kt.Unmappeds, tb)
		case *kernels.GDNTable:
			s.kt.GDNs = append(s.kt.GDNs, tb)
		case *comm.Table:
			s.ct.Colls = append(s.ct.Colls, tb)
		case *comm.EPTable:
			s.ct.EPs = append(s.ct.EPs, tb)
		}
	}
	s.kt.Rank() // the source policy's order (kernels/source.go)
	return s
}

// Kernels is the selected kernel lookup, or nil when no kernel table
// applies (set it as kernels.Costs.Tables).
func (s *Selection) Kernels() kernels.Lookup {
	if s == nil || s.kt.Empty() {
		return nil
	}
	kt := s.kt
	return &kt
}

// Comm is the selected collective lookup for runs with (graphs) or without
// CUDA graphs, or nil when no collective table applies (set it as
// comm.Comm.Tables).
func (s *Selection) Comm(graphs bool) comm.Lookup {
	if s == nil || s.ct.Empty() {
		return nil
	}
	ct := s.ct
	ct.Graphs = graphs
	return &ct
}
