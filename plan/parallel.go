package plan

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// maxChunk is the most consecutive items a worker takes at a time.
const maxChunk = 64

// forEach calls f(i) for i in [0, n) on workers goroutines (0: GOMAXPROCS),
// each taking chunks of consecutive indices: up to maxChunk, fewer when n
// is small, so that a few costly items (the refine stage's serving
// simulations, tens of points of ~0.1 s each) still spread over every
// worker. f writes its result by index, so the output order does not
// depend on the workers. On errors it returns the one of the lowest index
// (chunks are handed out in index order and a chunk taken is finished up
// to its error, so every index below an error is run), and stops handing
// out work.
func forEach(n, workers int, f func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	// Eight chunks per worker at least, for balance when items differ in cost.
	chunk := min(maxChunk, max(1, n/(8*max(1, workers))))
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
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
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
