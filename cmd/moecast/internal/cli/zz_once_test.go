package cli

import (
	"io"
	"testing"
)

func TestZZPlanOnce(t *testing.T) {
	if code := Run([]string{"plan", "kimi-k2.5-plan-1k1k"}, io.Discard, io.Discard); code != ExitOK {
		t.Fatal(code)
	}
}
