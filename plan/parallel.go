package plan

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// maxChunk is the most consecutive items a worker takes at a time.
const maxChunk = 64

// chunkShare: a worker takes 1/(chunkShare x workers) of the items left.
const chunkShare = 4

// forEach calls f(i) for i in [0, n) on workers goroutines (0: GOMAXPROCS),
// each taking chunks of consecutive indices. A chunk is a share of the
// items not yet handed out: 1/(chunkShare x workers) of them, at most
// maxChunk, at least 1 (a variant of guided self-scheduling, whose chunk
// is 1/workers of the rest: Polychronopoulos and Kuck,
// IEEE Trans. Computers 36(12), 1987). Chunks shrink as the work runs out,
// so the workers finish within about one item of each other even when
// items differ in cost (the refine stage's serving simulations: from 1 to
// 30 ms each), while cheap items (the screen's) still go out many at a
// time. f writes its result by index, so the output order does not
// depend on the workers. On errors it returns the one of the lowest index
// (chunks are handed out in index order and a chunk taken is finished up
// to its error, so every index below an error is run), and stops handing
// out work.
func forEach(n, workers int, f func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next    atomic.Int64
		stop    atomic.Bool
		mu      sync.Mutex
		firstAt = n
		first   error
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				lo, hi := take(&next, n, workers)
				if lo >= n {
					return
				}
				for i := lo; i < hi; i++ {
					if err := f(i); err != nil {
						mu.Lock()
						if i < firstAt {
							firstAt, first = i, err
						}
						mu.Unlock()
						stop.Store(true)
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// take hands out the next chunk [lo, hi) of [0, n) (lo = n: none left).
func take(next *atomic.Int64, n, workers int) (lo, hi int) {
	for {
		cur := next.Load()
		if cur >= int64(n) {
			return n, n
		}
		c := int64(min(maxChunk, max(1, (n-int(cur))/(chunkShare*workers))))
		if next.CompareAndSwap(cur, cur+c) {
			return int(cur), int(cur + c)
		}
	}
}
