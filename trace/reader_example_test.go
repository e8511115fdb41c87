package trace_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/trace"
)

func ExampleReader() {
	const file = `{"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
   "pid": 0, "tid": 7, "ts": 1000.5, "dur": 18.25, "args": {"correlation": 42, "stream": 7, "grid": [2, 1, 1]}},
  {"ph": "X", "cat": "kernel", "name": "_fwd_grouped_kernel_stage1", "pid": 0, "tid": 7, "ts": "soon", "dur": 14}
],
 "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}}`
	r, err := trace.NewReader(strings.NewReader(file)) // gzip input works the same
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		var te *trace.Error
		if errors.As(err, &te) && !te.Fatal {
			fmt.Println("skipped:", err)
			continue
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%c %s... stream %d, %.2f us from %.1f us, correlation %d\n", ev.Ph, ev.Name[:22], ev.Stream, ev.Dur.Us(), ev.TS.Seconds().Us(), ev.Correlation)
	}
	fmt.Println("rank", r.Meta().Distributed.Rank, "of", r.Meta().Distributed.WorldSize)
	// Output:
	// X ncclDevKernel_AllReduc... stream 7, 18.25 us from 1000.5 us, correlation 42
	// skipped: trace: event 1 at byte 343: ts: want a number, found a string
	// rank 3 of 8
}
