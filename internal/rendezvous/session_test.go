package rendezvous

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world makes the Envs of a job of n ranks over loopback TCP (rank 0's
// listener is returned) or over files in dir.
func world(t *testing.T, n int, dir string) ([]Env, net.Listener) {
	t.Helper()
	var ln net.Listener
	port := 1
	if dir == "" {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port = ln.Addr().(*net.TCPAddr).Port
	}
	envs := make([]Env, n)
	for r := range envs {
		envs[r] = Env{Launcher: Torchrun, Rank: r, World: n, LocalRank: r, MasterAddr: "127.0.0.1", MasterPort: port,
			Dir: dir, Token: "job-" + t.Name()}
	}
	return envs, ln
}

// each runs f for every rank in its own goroutine and returns the errors
// by rank.
func each(envs []Env, f func(e Env) error) []error {
	errs := make([]error, len(envs))
	var wg sync.WaitGroup
	for r := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(envs[r])
		}()
	}
	wg.Wait()
	return errs
}

// exchange is what a calibration job does: rank 0's id to all, a barrier,
// each rank's result gathered at rank 0.
func exchange(t *testing.T, envs []Env, ln net.Listener, timeout time.Duration) []error {
	id := bytes.Repeat([]byte{0xab}, 128)
	return each(envs, func(e Env) error {
		opt := Options{Timeout: timeout}
		if e.Rank == 0 {
			opt.Listener = ln
		}
		s, err := Join(e, opt)
		if err != nil {
			return err
		}
		defer s.Close()
		var mine []byte
		if e.Rank == 0 {
			mine = id
		}
		got, err := s.Broadcast(mine)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, id) {
			return fmt.Errorf("rank %d got id %x", e.Rank, got)
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		all, err := s.Gather([]byte("GPU-" + strconv.Itoa(e.Rank)))
		if err != nil {
			return err
		}
		if e.Rank == 0 {
			for r, b := range all {
				if string(b) != "GPU-"+strconv.Itoa(r) {
					return fmt.Errorf("gathered %q from rank %d", b, r)
				}
			}
		} else if all != nil {
			return fmt.Errorf("rank %d got the gather", e.Rank)
		}
		return s.Barrier()
	})
}

func TestExchange(t *testing.T) {
	for _, transport := range []string{"tcp", "file"} {
		for _, n := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/%d", transport, n), func(t *testing.T) {
				dir := ""
				if transport == "file" {
					dir = t.TempDir()
				}
				envs, ln := world(t, n, dir)
				for r, err := range exchange(t, envs, ln, 10*time.Second) {
					assert.NoError(t, err, "rank %d", r)
				}
				if dir != "" {
					left, _ := os.ReadDir(dir)
					assert.Empty(t, left, "rank 0 removes the session's files")
				}
			})
		}
	}
}

// TestMissingRank: rank 2 never comes; every other rank fails within the
// timeout, rank 0 naming rank 2.
func TestMissingRank(t *testing.T) {
	for _, transport := range []string{"tcp", "file"} {
		t.Run(transport, func(t *testing.T) {
			dir := ""
			if transport == "file" {
				dir = t.TempDir()
			}
			envs, ln := world(t, 4, dir)
			present := append(append([]Env(nil), envs[:2]...), envs[3])
			start := time.Now()
			errs := exchange(t, present, ln, 300*time.Millisecond)
			assert.Less(t, time.Since(start), 5*time.Second)
			require.Error(t, errs[0])
			assert.Equal(t, "rendezvous: join: rank 2 missing after 300ms"+rest(errs[0].Error(), "after 300ms"), errs[0].Error())
			var re *Error
			require.ErrorAs(t, errs[0], &re)
			assert.Equal(t, []int{2}, re.Missing)
			for i, err := range errs[1:] {
				require.Error(t, err, "rank %d", present[i+1].Rank)
				assert.NotContains(t, err.Error(), "\n")
			}
		})
	}
}

// rest is s after the first sep (to compare an error's fixed head).
func rest(s, sep string) string {
	_, after, _ := strings.Cut(s, sep)
	return after
}

// TestWrongWorldSize: a rank started with another world size fails the
// join for everyone, naming it.
func TestWrongWorldSize(t *testing.T) {
	for _, transport := range []string{"tcp", "file"} {
		t.Run(transport, func(t *testing.T) {
			dir := ""
			if transport == "file" {
				dir = t.TempDir()
			}
			envs, ln := world(t, 3, dir)
			envs[2].World = 4
			errs := exchange(t, envs, ln, time.Second)
			require.Error(t, errs[0])
			assert.Contains(t, errs[0].Error(), "rank 2")
			assert.Contains(t, errs[0].Error(), "world size is 4, rank 0 has 3")
			require.Error(t, errs[1])
			require.Error(t, errs[2])
			if transport == "tcp" {
				assert.Contains(t, errs[2].Error(), "refused by 127.0.0.1")
			}
		})
	}
}

// TestStranger: peers that are not this job (garbage, another protocol
// version, another job's token) are refused; the job still meets.
func TestStranger(t *testing.T) {
	envs, ln := world(t, 2, "")
	addr := ln.Addr().String()
	var logged []string
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() {
		s, err := Join(envs[0], Options{Timeout: 5 * time.Second, Listener: ln, Logf: func(f string, a ...any) {
			mu.Lock()
			logged = append(logged, fmt.Sprintf(f, a...))
			mu.Unlock()
		}})
		if err == nil {
			_, err = s.Broadcast([]byte("id"))
			s.Close()
		}
		done <- err
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		return c
	}
	c := dial()
	c.Write([]byte("GET / HTTP/1.0\r\n\r\n......"))
	c.Close()
	c = dial()
	b := make([]byte, headerSize)
	copy(b, magic)
	b[4], b[5] = version+1, kindHello
	c.Write(b)
	c.Close()
	other := envs[1]
	other.Token = "another-job"
	_, err := Join(other, Options{Timeout: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `job token "another-job" is not this job's`)
	s, err := Join(envs[1], Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	id, err := s.Broadcast(nil)
	require.NoError(t, err)
	assert.Equal(t, "id", string(id))
	s.Close()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, logged, 3, "%q", logged)
	assert.Contains(t, strings.Join(logged, "\n"), "bad magic")
	assert.Contains(t, strings.Join(logged, "\n"), "protocol version 2")
}

// TestRankDiesMidway: after the join, rank 1 leaves without a word; rank
// 0's barrier says rank 1 closed the connection, rank 2 hears it from
// rank 0. A rank that stays but never calls the barrier is missing.
func TestRankDiesMidway(t *testing.T) {
	envs, ln := world(t, 3, "")
	errs := each(envs, func(e Env) error {
		opt := Options{Timeout: 2 * time.Second}
		if e.Rank == 0 {
			opt.Listener = ln
		}
		s, err := Join(e, opt)
		if err != nil {
			return err
		}
		if e.Rank == 1 {
			return s.Close() // dies
		}
		defer s.Close()
		return s.Barrier()
	})
	require.NoError(t, errs[1])
	require.Error(t, errs[0])
	assert.Equal(t, "rendezvous: barrier: rank 1 closed the connection (exited or failed)", errs[0].Error())
	require.Error(t, errs[2])
	assert.Contains(t, errs[2].Error(), "rank 0 reports: rendezvous: barrier: rank 1 closed the connection")

	envs, ln = world(t, 3, "")
	errs = each(envs, func(e Env) error {
		opt := Options{Timeout: 300 * time.Millisecond}
		if e.Rank == 0 {
			opt.Listener = ln
		}
		s, err := Join(e, opt)
		if err != nil {
			return err
		}
		defer s.Close()
		if e.Rank == 2 {
			time.Sleep(time.Second) // hangs
			return nil
		}
		return s.Barrier()
	})
	require.Error(t, errs[0])
	assert.Equal(t, "rendezvous: barrier: rank 2 missing after 300ms", errs[0].Error())
}

// TestOutOfStep: ranks that run different sequences of exchanges fail
// instead of mixing blobs.
func TestOutOfStep(t *testing.T) {
	envs, ln := world(t, 2, "")
	errs := each(envs, func(e Env) error {
		opt := Options{Timeout: time.Second}
		if e.Rank == 0 {
			opt.Listener = ln
		}
		s, err := Join(e, opt)
		if err != nil {
			return err
		}
		defer s.Close()
		if e.Rank == 0 {
			return s.Barrier()
		}
		_, err = s.Gather([]byte("x"))
		return err
	})
	require.Error(t, errs[0])
	assert.Contains(t, errs[0].Error(), "rank 1 sent gather #1 where rank 0 is at barrier #1")
	require.Error(t, errs[1])
}

// TestStaleFiles: a crashed run's files (same token) do not let a rank
// through: it waits for this run's rank 0.
func TestStaleFiles(t *testing.T) {
	dir := t.TempDir()
	envs, _ := world(t, 2, dir)
	old := (&fileSession{env: envs[0]})
	require.NoError(t, old.write("welcome", 0, 0, nil))
	require.NoError(t, old.write("bcast", 1, 0, []byte("stale")))
	past := time.Now().Add(-time.Hour)
	for _, k := range []string{"welcome.0.0", "bcast.1.0"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*."+k))
		require.Len(t, matches, 1)
		require.NoError(t, os.Chtimes(matches[0], past, past))
	}
	_, err := Join(envs[1], Options{Timeout: 200 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rendezvous: join: rank 0 missing after 200ms")
	for r, err := range exchange(t, envs, nil, 5*time.Second) {
		assert.NoError(t, err, "rank %d", r)
	}
}

// Child processes as ranks: the test binary re-runs itself with
// MOECAST_RDV_CHILD set, reading its rank from the torchrun variables.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MOECAST_RDV_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	e, err := FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	s, err := Join(e, Options{Timeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	defer s.Close()
	if mode == "die" && e.Rank == 1 {
		os.Exit(7) // mid-way, without closing
	}
	id, err := s.Broadcast(nil)
	if err == nil {
		_, err = s.Gather(append([]byte("got "), id...))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 5
	}
	return 0
}

func TestChildProcesses(t *testing.T) {
	for _, mode := range []string{"ok", "die"} {
		t.Run(mode, func(t *testing.T) {
			dir := ""
			if mode == "die" {
				dir = t.TempDir() // the file transport with processes too
			}
			envs, ln := world(t, 3, dir)
			var cmds []*exec.Cmd
			var outs []*bytes.Buffer
			for r := 1; r < 3; r++ {
				c := exec.Command(os.Args[0], "-test.run=^$")
				c.Env = append(os.Environ(), "MOECAST_RDV_CHILD="+mode, "RANK="+strconv.Itoa(r), "WORLD_SIZE=3", "LOCAL_RANK="+strconv.Itoa(r),
					"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(envs[0].MasterPort), "MOECAST_JOB_TOKEN="+envs[0].Token,
					"MOECAST_RENDEZVOUS_DIR="+dir)
				var out bytes.Buffer
				c.Stderr = &out
				require.NoError(t, c.Start())
				cmds, outs = append(cmds, c), append(outs, &out)
			}
			opt := Options{Timeout: 2 * time.Second, Listener: ln}
			s, err := Join(envs[0], opt)
			require.NoError(t, err)
			var all [][]byte
			if _, err = s.Broadcast([]byte("ID")); err == nil {
				all, err = s.Gather(nil)
			}
			s.Close()
			codes := make([]int, len(cmds))
			for i, c := range cmds {
				var ee *exec.ExitError
				if err := c.Wait(); errors.As(err, &ee) {
					codes[i] = ee.ExitCode()
				}
			}
			if mode == "ok" {
				require.NoError(t, err)
				assert.Equal(t, []int{0, 0}, codes, "%s %s", outs[0], outs[1])
				assert.Equal(t, "got ID", string(all[1]))
				assert.Equal(t, "got ID", string(all[2]))
				return
			}
			require.Error(t, err)
			assert.Equal(t, "rendezvous: gather: rank 1 missing after 2s; waiting on "+dir, err.Error())
			assert.Equal(t, 7, codes[0])
			assert.Equal(t, 0, codes[1], "rank 2 wrote its blob and left: %s", outs[1])
		})
	}
}

// TestFailedJoinWithdrawsHello: a rank whose join timed out leaves no hello
// behind, so that the next rank 0 does not take that stale hello for the
// rank's (and welcome it before it has come back, which the rank would then
// ignore as older than its new hello: both would hang to the timeout).
func TestFailedJoinWithdrawsHello(t *testing.T) {
	dir := t.TempDir()
	envs, _ := world(t, 2, dir)
	_, err := Join(envs[1], Options{Timeout: 100 * time.Millisecond})
	require.Error(t, err)
	matches, _ := filepath.Glob(filepath.Join(dir, "moecast-rdv-*.hello.*"))
	assert.Empty(t, matches, "hello files left by a failed join")
	_, err = Join(envs[0], Options{Timeout: 100 * time.Millisecond})
	require.Error(t, err, "rank 0 joined with no rank 1 there")
	assert.Contains(t, err.Error(), "rank 1 missing")
}
