package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// outputFlags are the flags that name a file a command writes. Every
// command's output flags are checked by checkPaths before the command runs,
// so a new command with one of these flags is covered without a line of
// its own.
var outputFlags = map[string]bool{"html": true, "output": true, "out": true, "markdown": true}

// checkPaths runs before every command (the root's PersistentPreRunE): no
// input file is given twice among the arguments; each
// output flag's path must be writable as a new or regular file, in a
// directory that exists, and must not be any input: a positional argument
// or the value of another flag (comma-separated lists are split), however
// the path is spelled (hard links included). The check is done before any
// work, so a long search does not end on a typo in --html.
func checkPaths(c *cobra.Command, args []string) error {
	if err := checkFlagRanges(c); err != nil {
		return err
	}
	// An input file given twice would be read, and counted, twice (the
	// words after -- are another program's: not checked).
	files := args
	if d := c.ArgsLenAtDash(); d >= 0 && d <= len(args) {
		files = args[:d]
	}
	for i, a := range files {
		if a == infile.Stdin {
			continue
		}
		if st, err := os.Stat(a); err != nil || !st.Mode().IsRegular() {
			continue // a name, a directory, or missing: its reader says
		}
		for j, b := range files[:i] {
			if b != infile.Stdin && sameFile(a, b) {
				return inputErrf("%s: given twice (arguments %d and %d); give each input once", a, j+1, i+1)
			}
		}
	}
	inputs := append([]string(nil), args...)
	type out struct{ flag, path string }
	var outs []out
	c.Flags().Visit(func(f *pflag.Flag) {
		if outputFlags[f.Name] {
			if v := f.Value.String(); v != "" && v != infile.Stdin {
				outs = append(outs, out{f.Name, v})
			}
			return
		}
		inputs = append(inputs, flagPaths(f)...)
	})
	for i, o := range outs {
		name := "--" + o.flag
		if f := c.Flags().Lookup(o.flag); f != nil && f.Shorthand != "" {
			name = "-" + f.Shorthand
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return inputErrf("%s %s: is a directory; give a file name", name, o.path)
		}
		if err := atomicfile.CheckOutput(o.path, inputs...); err != nil {
			return fmt.Errorf("%s %w", name, err) // an *atomicfile.OutputError
		}
		dir := filepath.Dir(o.path)
		switch st, err := os.Stat(dir); {
		case errors.Is(err, fs.ErrNotExist):
			return inputErrf("%s %s: no such directory %s", name, o.path, dir)
		case err != nil:
			return inputErrf("%s %s: %v", name, o.path, err)
		case !st.IsDir():
			return inputErrf("%s %s: %s is not a directory", name, o.path, dir)
		}
		for _, p := range outs[:i] {
			if sameFile(p.path, o.path) {
				return inputErrf("%s %s: also given to --%s; give each output its own file", name, o.path, p.flag)
			}
		}
	}
	return nil
}

// flagPaths are the values of f that may name files: its value, or each
// element of a list flag, split at commas.
func flagPaths(f *pflag.Flag) []string {
	var vals []string
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		vals = sv.GetSlice()
	} else {
		vals = []string{f.Value.String()}
	}
	var paths []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && p != infile.Stdin {
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// sameFile reports whether a and b name one file (or one path).
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(sa, sb)
}

// flagRanges are the plausible ranges of the numeric flags, by name, for
// every command that has one: a value outside is refused before any work
// with the flag's name, never changed to a default nor run for hours.
// Zero where a positive is needed is an error: a flag left out is not
// checked.
// (Flags their command checks with its own words, such as --tp, --context
// or --max-gpus, are left to it.)
var flagRanges = map[string]struct{ lo, hi float64 }{
	"batch":    {1, sim.MaxBatchSize},
	"requests": {1, scenarios.MaxRequests},
	"top":      {0, 1 << 24},
}

// checkFlagRanges refuses a numeric flag given outside its range.
func checkFlagRanges(c *cobra.Command) error {
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		r, ok := flagRanges[f.Name]
		if !ok || err != nil {
			return
		}
		switch f.Value.Type() {
		case "int", "int64", "int32", "float64", "uint":
		default:
			return
		}
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		if perr != nil {
			return
		}
		if math.IsNaN(v) || v < r.lo || v > r.hi {
			err = inputErrf("--%s: %s is outside [%s, %s]", f.Name, f.Value.String(),
				strconv.FormatFloat(r.lo, 'f', -1, 64), strconv.FormatFloat(r.hi, 'f', -1, 64))
		}
	})
	return err
}
