package calib

import (
	"bytes"
	"fmt"
	"slices"
)

// Stack makes one file of several, layered as Select layers them: a table
// of a later file replaces every table of the earlier ones with the same op
// and keys, and the later file's tables come first, so they answer first.
// Each table keeps its own file's provenance, made whole (Effective); the
// stacked file's own provenance holds only the GPU, when all files name
// the same one. The result is encoded and parsed again as name, so it is
// checked as any file is. Table names must differ across the files.
func Stack(name string, files ...*File) (*File, error) {
	var stack []Table
	gpu, first := "", true
	for _, f := range files {
		if f == nil {
			continue
		}
		var mine []Table
		for i := range f.Tables {
			t := f.Tables[i]
			t.Provenance = f.Effective(&f.Tables[i])
			if first {
				gpu, first = t.Provenance.GPU, false
			} else if gpu != t.Provenance.GPU {
				gpu = "\x00" // tables for several GPUs: none in common
			}
			mine = append(mine, t)
		}
		stack = slices.DeleteFunc(stack, func(l Table) bool {
			return slices.ContainsFunc(mine, func(m Table) bool { return m.Op == l.Op && m.Keys == l.Keys })
		})
		for _, m := range mine {
			if slices.ContainsFunc(stack, func(l Table) bool { return l.Name == m.Name }) {
				return nil, fmt.Errorf("%s: table %q of %s is also in an earlier file", name, m.Name, f.Name)
			}
		}
		stack = append(mine, stack...)
	}
	out := &File{Schema: Schema, Tables: stack}
	if gpu != "\x00" {
		out.Provenance.GPU = gpu
	}
	var b bytes.Buffer
	if err := out.Encode(&b); err != nil {
		return nil, err
	}
	return Parse(name, b.Bytes())
}
