package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/infile"
)

// outputFlags are the flags that name a file a command writes. Every
// command's output flags are checked by checkPaths before the command runs,
// so a new command with one of these flags is covered without a line of
// its own.
var outputFlags = map[string]bool{"html": true, "output": true, "out": true}

// checkPaths runs before every command (the root's PersistentPreRunE): each
// output flag's path must be writable as a new or regular file, in a
// directory that exists, and must not be any input: a positional argument
// or the value of another flag (comma-separated lists are split), however
// the path is spelled (hard links included). The check is done before any
// work, so a long search does not end on a typo in --html.
func checkPaths(c *cobra.Command, args []string) error {
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
		if err := atomicfile.CheckOutput(o.path, inputs...); err != nil {
			return inputErr(fmt.Errorf("%s %w", name, err))
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return inputErrf("%s %s: is a directory; give a file name", name, o.path)
		}
		dir := filepath.Dir(o.path)
		switch st, err := os.Stat(dir); {
		case errors.Is(err, fs.ErrNotExist):
			return inputErrf("%s %s: directory %s does not exist", name, o.path, dir)
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
