package rendezvous

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The file rendezvous: in a directory every rank sees, each message is a
// file named moecast-rdv-<token>.<kind>.<seq>.<rank>, written to a
// temporary name and renamed (atomic on one file system), and waited for
// by polling. Join: every rank writes hello.0.<rank> holding its world
// size; rank 0 waits for all of them, checks them and writes welcome.0.0
// (or fail.0.0 with the reason), which the others wait for. Rank 0
// removes the session's files on Close.

// pollEvery is how often a waiting rank looks for files.
const pollEvery = 20 * time.Millisecond

type fileSession struct {
	env Env
	// since is when this rank wrote its hello: files of kind welcome and
	// fail older than it are an earlier run's, left by a crash, and are
	// not read.
	since time.Time
	// broken is set once an exchange failed: Close then waits for no one.
	broken bool
}

func (s *fileSession) name(kind string, seq uint32, rank int) string {
	tok := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '\\' {
			return '_'
		}
		return r
	}, s.env.Token)
	return filepath.Join(s.env.Dir, fmt.Sprintf("moecast-rdv-%s.%s.%d.%d", tok, kind, seq, rank))
}

func (s *fileSession) write(kind string, seq uint32, rank int, data []byte) error {
	p := s.name(kind, seq, rank)
	f, err := os.CreateTemp(s.env.Dir, ".moecast-rdv-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// wait polls for the files of kind #seq from ranks until deadline; fail
// files of rank 0 end it early.
func (s *fileSession) wait(op, kind string, seq uint32, ranks []int, d time.Duration) ([][]byte, error) {
	deadline := time.Now().Add(d)
	got := make([][]byte, s.env.World)
	have := make([]bool, s.env.World)
	for {
		left := 0
		for _, r := range ranks {
			if have[r] {
				continue
			}
			b, err := s.read(kind, seq, r)
			switch {
			case err == nil:
				got[r], have[r] = b, true
			case errors.Is(err, fs.ErrNotExist):
				left++
			default:
				return nil, &Error{Op: op, Msg: err.Error()}
			}
		}
		if left == 0 {
			return got, nil
		}
		if s.env.Rank != 0 {
			if b, err := s.read("fail", 0, 0); err == nil {
				s.broken = true
				return nil, &Error{Op: op, Msg: "rank 0 reports: " + string(b)}
			}
		}
		if time.Now().After(deadline) {
			var missing []int
			for _, r := range ranks {
				if !have[r] {
					missing = append(missing, r)
				}
			}
			s.broken = true
			return nil, &Error{Op: op, Missing: missing, Timeout: d, Msg: "waiting on " + s.env.Dir}
		}
		time.Sleep(pollEvery)
	}
}

// read reads one message file; welcome and fail files from before this
// rank's hello count as absent.
func (s *fileSession) read(kind string, seq uint32, rank int) ([]byte, error) {
	p := s.name(kind, seq, rank)
	if kind == "welcome" || kind == "fail" {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.ModTime().Before(s.since) {
			return nil, fs.ErrNotExist
		}
	}
	return os.ReadFile(p)
}

func (s *fileSession) fail(e *Error) error {
	if s.env.Rank == 0 {
		s.write("fail", 0, 0, []byte(e.Error()))
	}
	return e
}

func joinFiles(env Env, opt Options) (transport, error) {
	if st, err := os.Stat(env.Dir); err != nil || !st.IsDir() {
		return nil, &Error{Op: "join", Msg: fmt.Sprintf("MOECAST_RENDEZVOUS_DIR %q is not a directory", env.Dir)}
	}
	s := &fileSession{env: env}
	d := opt.timeout()
	if env.Rank == 0 {
		s.remove(func(kind string) bool { return kind != "hello" }) // a crashed run's leftovers
	}
	if err := s.write("hello", 0, env.Rank, []byte(strconv.Itoa(env.World))); err != nil {
		return nil, &Error{Op: "join", Msg: err.Error()}
	}
	if st, err := os.Stat(s.name("hello", 0, env.Rank)); err == nil {
		s.since = st.ModTime()
	}
	if env.Rank != 0 {
		if _, err := s.wait("join", "welcome", 0, []int{0}, d); err != nil {
			// Withdraw the hello: left behind, the next run's rank 0
			// would take it for this rank's and welcome it before it
			// came, and the rank would ignore that welcome as older
			// than its new hello.
			os.Remove(s.name("hello", 0, env.Rank))
			return nil, err
		}
		return s, nil
	}
	var others []int
	for r := 1; r < env.World; r++ {
		others = append(others, r)
	}
	hellos, err := s.wait("join", "hello", 0, others, d)
	if err != nil {
		return nil, s.fail(err.(*Error))
	}
	for _, r := range others {
		if w := string(hellos[r]); w != strconv.Itoa(env.World) {
			return nil, s.fail(&Error{Op: "join", Msg: fmt.Sprintf("rank %d says the world size is %s, rank 0 has %d: the ranks were started inconsistently", r, w, env.World)})
		}
	}
	if err := s.write("welcome", 0, 0, nil); err != nil {
		return nil, &Error{Op: "join", Msg: err.Error()}
	}
	return s, nil
}

func (s *fileSession) all() []int {
	r := make([]int, s.env.World)
	for i := range r {
		r[i] = i
	}
	return r
}

func (s *fileSession) broadcast(seq uint32, blob []byte, d time.Duration) ([]byte, error) {
	if s.env.Rank == 0 {
		if err := s.write("bcast", seq, 0, blob); err != nil {
			return nil, &Error{Op: "broadcast", Msg: err.Error()}
		}
		return blob, nil
	}
	got, err := s.wait("broadcast", "bcast", seq, []int{0}, d)
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

func (s *fileSession) barrier(seq uint32, d time.Duration) error {
	if err := s.write("barrier", seq, s.env.Rank, nil); err != nil {
		return &Error{Op: "barrier", Msg: err.Error()}
	}
	_, err := s.wait("barrier", "barrier", seq, s.all(), d)
	return err
}

func (s *fileSession) gather(seq uint32, blob []byte, d time.Duration) ([][]byte, error) {
	if err := s.write("gather", seq, s.env.Rank, blob); err != nil {
		return nil, &Error{Op: "gather", Msg: err.Error()}
	}
	if s.env.Rank != 0 {
		return nil, nil
	}
	got, err := s.wait("gather", "gather", seq, s.all(), d)
	if err != nil {
		return nil, err
	}
	got[0] = blob
	return got, nil
}

// close: the other ranks say goodbye; rank 0 waits for them (a few
// seconds at most: they may still be reading the last exchange's files)
// and removes the session's files.
func (s *fileSession) close() error {
	if s.env.Rank != 0 {
		return s.write("bye", 0, s.env.Rank, nil)
	}
	var others []int
	for r := 1; r < s.env.World; r++ {
		others = append(others, r)
	}
	if !s.broken {
		s.wait("close", "bye", 0, others, 10*time.Second)
	}
	s.remove(func(string) bool { return true })
	return nil
}

// remove deletes the session's files whose kind drop accepts.
func (s *fileSession) remove(drop func(kind string) bool) {
	prefix := strings.TrimSuffix(s.name("x", 0, 0), "x.0.0")
	matches, _ := filepath.Glob(prefix + "*")
	for _, m := range matches {
		kind, _, _ := strings.Cut(strings.TrimPrefix(m, prefix), ".")
		if drop(kind) {
			os.Remove(m)
		}
	}
}
