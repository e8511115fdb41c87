// Command traceread reads trace files with trace's Reader and prints,
// per file and in total, the events, the uncompressed bytes, the wall time,
// the CPU time of the process and the throughput. Files are read
// concurrently, one goroutine each (as `moecast trace summary` reads ranks).
//
//	go run ./bench/traceread [-cpuprofile F] bench/out/rank*.pt.trace.json.gz
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/moecast/moecast/trace"
)

type result struct {
	file           string
	events, kernel int64
	bytes, comp    int64
	err            error
}

func main() {
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	files := flag.Args()
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "usage: traceread [-cpuprofile F] FILE...")
		os.Exit(2)
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	cpu0 := cpuTime()
	res := make([]result, len(files))
	var wg sync.WaitGroup
	for k, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[k] = read(f)
		}()
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	cpu := cpuTime() - cpu0
	var total int64
	failed := false
	for _, r := range res {
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.file, r.err)
			failed = true
			continue
		}
		total += r.bytes
		fmt.Printf("%s: %d events, %d kernels, %.1f MB uncompressed, %.1f MB read\n", r.file, r.events, r.kernel, float64(r.bytes)/1e6, float64(r.comp)/1e6)
	}
	fmt.Printf("total: %.1f MB in %.2f s wall, %.2f s CPU: %.0f MB/s wall, %.0f MB/s per CPU-second\n",
		float64(total)/1e6, wall, cpu, float64(total)/1e6/wall, float64(total)/1e6/cpu)
	if failed {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func read(path string) result {
	res := result{file: path}
	f, err := os.Open(path)
	if err != nil {
		res.err = err
		return res
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		res.err = err
		return res
	}
	defer r.Close()
	var ev trace.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.err = err
			return res
		}
		res.events++
		if ev.Cat == trace.CatKernel {
			res.kernel++
		}
	}
	res.bytes, res.comp = r.BytesRead()
	return res
}

// cpuTime is the user+system CPU time of this process in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
