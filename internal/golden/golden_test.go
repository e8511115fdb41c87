package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckWritesWithUpdateThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	*update = true
	Check(t, path, "a\nb\n")
	*update = false
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "a\nb\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	Check(t, path, "a\nb\n") // equal: must not fail
}

func TestDiffNamesFirstDifferentLine(t *testing.T) {
	tests := []struct{ want, got, out string }{
		{"a\nb\nc\n", "a\nX\nc\n", "first difference at line 2:\n  want: b\n  got:  X"},
		{"a\n", "a\nmore\n", "first difference at line 2:\n  want: (end of file)\n  got:  more"},
	}
	for _, tt := range tests {
		if d := diff(tt.want, tt.got); d != tt.out {
			t.Errorf("diff(%q, %q) =\n%s\nwant\n%s", tt.want, tt.got, d, tt.out)
		}
	}
}
