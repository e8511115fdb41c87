package calib

import (
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
	out := &File{Schema: Schema, Tables: stack, Name: name}
	if gpu != "\x00" {
		out.Provenance.GPU = gpu
	}
	return out.assemble(false)
}

// assemble checks and builds a file made in memory of other files' tables
// (Stack, Prefer) as Parse checks and builds a file it reads: names
// present and unique, provenance whole, keys, columns and rows as the
// op's spec wants, then the build. Until 2026-12 both encoded the file and
// parsed it again, which gives the same tables (numbers are written in
// their shortest exact form and read back to the same float64) at the
// price of a second parse of every row: for the embedded H200 file, a
// third of its cold load. The tables keep no line of any file: errors
// name the table. parsed says that every table was read by Parse (or
// parseUnbuilt) just now and not changed since: its rows were checked
// there and are not checked again.
func (f *File) assemble(parsed bool) (*File, error) {
	tables := f.Tables
	f.Tables = make([]Table, 0, len(tables))
	seen := make(map[string]int, len(tables))
	for i, t := range tables {
		t.line, t.rowLines, t.src, t.loo = 0, nil, "", nil
		// the build may append to the corrections: never into an array
		// that a table of another (cached, shared) file still reads
		t.Provenance.Corrections = slices.Clip(t.Provenance.Corrections)
		at := fmt.Sprintf("%s: table %d (%q)", f.Name, i+1, t.Name)
		if t.Name == "" {
			return nil, fmt.Errorf("%s: name is missing", at)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%s: duplicate table name (also table %d)", at, j+1)
		}
		seen[t.Name] = i
		if err := f.Effective(&t).check(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if !parsed {
			if err := t.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
		} else if _, err := specFor(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		f.Tables = append(f.Tables, t)
	}
	if err := f.build(); err != nil {
		return nil, err
	}
	return f, nil
}
