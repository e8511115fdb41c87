package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerate: each format picks its view; the warnings go to stderr
// before CSV by default, before the formats WarnOn names otherwise, and a
// Render view renders every format itself.
func TestGenerate(t *testing.T) {
	tab := &Table{Columns: []Column{{Name: "a"}}}
	tab.Add(1)
	views := Views{
		JSON:     func() any { return map[string]int{"a": 1} },
		CSV:      func() *Table { return tab },
		Text:     func(w io.Writer) error { _, err := io.WriteString(w, "text\n"); return err },
		Warnings: []string{"w1"},
		Notes:    []string{"skipped: x"},
	}
	rendered := views
	rendered.Render = func(w io.Writer, f Format) error { _, err := io.WriteString(w, "render "+string(f)+"\n"); return err }
	rendered.WarnOn = []Format{Text}
	for _, tc := range []struct {
		name          string
		v             Views
		f             Format
		out, wantErrw string
	}{
		{"json", views, JSON, "{\n  \"a\": 1\n}\n", ""},
		{"csv", views, CSV, "a\n1\n", "warning: w1\nskipped: x\n"},
		{"text", views, Text, "text\n", ""},
		{"render json", rendered, JSON, "render json\n", ""},
		{"render csv", rendered, CSV, "render csv\n", ""},
		{"render text", rendered, Text, "render text\n", "warning: w1\nskipped: x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			require.NoError(t, Generate(&out, &errw, tc.v, tc.f))
			assert.Equal(t, tc.out, out.String())
			assert.Equal(t, tc.wantErrw, errw.String())
		})
	}
}

// TestGenerateWarnAfter: the formats WarnAfter names print the warnings
// and notes after their view (seen in order on one stream), the others
// before or not at all as without it; a view that fails prints none.
func TestGenerateWarnAfter(t *testing.T) {
	tab := &Table{Columns: []Column{{Name: "a"}}}
	tab.Add(1)
	v := Views{
		JSON:      func() any { return map[string]int{"a": 1} },
		CSV:       func() *Table { return tab },
		Text:      func(w io.Writer) error { _, err := io.WriteString(w, "text\n"); return err },
		Warnings:  []string{"w1"},
		Notes:     []string{"n1"},
		WarnAfter: []Format{Text},
	}
	for _, tc := range []struct {
		name string
		f    Format
		want string
	}{
		{"text: after", Text, "text\nwarning: w1\nn1\n"},
		{"csv: before, as by default", CSV, "warning: w1\nn1\na\n1\n"},
		{"json: none", JSON, "{\n  \"a\": 1\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var both bytes.Buffer
			require.NoError(t, Generate(&both, &both, v, tc.f))
			assert.Equal(t, tc.want, both.String())
		})
	}
	failing := v
	failing.Text = func(io.Writer) error { return io.ErrShortWrite }
	var both bytes.Buffer
	require.ErrorIs(t, Generate(&both, &both, failing, Text), io.ErrShortWrite)
	assert.Empty(t, both.String())
}
