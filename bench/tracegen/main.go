// Command tracegen writes synthetic vLLM-like torch.profiler traces (see
// package trace/tracegen), one file per rank:
//
//	go run ./bench/tracegen -out bench/out -size 1GB -ranks 1
//
// writes bench/out/rank0.pt.trace.json.gz with at least 1 GB of
// uncompressed JSON.
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moecast/moecast/trace/tracegen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tracegen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	cfg := tracegen.DefaultConfig()
	out := fs.String("out", "bench/out", "output directory")
	size := fs.String("size", "", "uncompressed size per rank (e.g. 100MB, 1GB; GB = 1e9); overrides -steps")
	ranks := fs.Int("ranks", 1, "number of rank files to write (ranks 0..N-1)")
	world := fs.Int("world", 0, "world size (TP ranks of the all-reduce); 0: -ranks")
	plain := fs.Bool("plain", false, "write plain JSON instead of gzip")
	level := fs.Int("level", gzip.DefaultCompression, "gzip level (torch.profiler's export uses Python's default, 9)")
	prefix := fs.String("prefix", "rank", "file name prefix")
	fs.IntVar(&cfg.Steps, "steps", cfg.Steps, "decode steps per rank")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "decode batch")
	fs.IntVar(&cfg.PythonEvents, "python", cfg.PythonEvents, "python_function events per step")
	seed := fs.Uint64("seed", cfg.Seed, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Seed = *seed
	cfg.WorldSize = *ranks
	if *world > 0 {
		cfg.WorldSize = *world
	}
	if *ranks > cfg.WorldSize {
		return fmt.Errorf("-ranks %d exceeds -world %d", *ranks, cfg.WorldSize)
	}
	if *size != "" {
		n, err := parseSize(*size)
		if err != nil {
			return err
		}
		cfg.TargetBytes, cfg.Steps = n, 0
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for r := 0; r < *ranks; r++ {
		c := cfg
		c.Rank = r
		name := fmt.Sprintf("%s%d.pt.trace.json", *prefix, r)
		if !*plain {
			name += ".gz"
		}
		path := filepath.Join(*out, name)
		st, err := writeFile(path, c, !*plain, *level)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes uncompressed, %d events, %d steps, %d kernels\n", path, st.Bytes, st.Events, st.Steps, st.Kernels)
	}
	return nil
}

func writeFile(path string, cfg tracegen.Config, gz bool, level int) (tracegen.Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return tracegen.Stats{}, err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if gz {
		if zw, err = gzip.NewWriterLevel(f, level); err != nil {
			f.Close()
			return tracegen.Stats{}, err
		}
		w = zw
	}
	st, err := tracegen.Write(w, cfg)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// parseSize reads "1GB", "100MB", "512MiB" or a plain byte count.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suffix), 64)
			if err != nil {
				return 0, fmt.Errorf("size %q: %w", s, err)
			}
			return int64(v * u.mult), nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want e.g. 1GB or 100MB", s)
	}
	return v, nil
}
