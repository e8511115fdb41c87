package calib

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/atomicfile"
)

// Write validates f and writes it to path atomically: a reader never sees
// half a file, and on any error the old file (or none) stays in place.
func (f *File) Write(path string) error {
	data, err := f.encodeChecked()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if strings.HasSuffix(path, ".zst") {
		// zstd-compressed TOML (the embedded whole-system imports), one
		// frame per table (frames.go)
		z, err := encodeFrames(data)
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return atomicfile.WriteFile(path, z, 0o644)
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// WriteStream validates f and writes it to w (standard output, for "-o -").
func (f *File) WriteStream(w io.Writer) error {
	data, err := f.encodeChecked()
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// encodeChecked validates f, encodes it and reads the bytes back with the
// reader every command uses (Parse: schema, provenance, plausible rows), so
// that no writer (calib gpu, import, from-trace) writes a file that its
// own reader refuses: what it would refuse is refused here, before
// anything is written.
func (f *File) encodeChecked() ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := f.Encode(&buf); err != nil {
		return nil, err
	}
	if _, err := Parse("the file to write", buf.Bytes()); err != nil {
		return nil, fmt.Errorf("it would not read back (%w); nothing written", err)
	}
	return buf.Bytes(), nil
}

// validate checks an in-memory file before it is written.
func (f *File) validate() error {
	if f.Schema != Schema {
		return fmt.Errorf("schema %d: this moecast writes schema %d", f.Schema, Schema)
	}
	if len(f.Tables) == 0 {
		return fmt.Errorf("no tables")
	}
	seen := map[string]bool{}
	for i := range f.Tables {
		t := &f.Tables[i]
		if seen[t.Name] {
			return fmt.Errorf("duplicate table name %q", t.Name)
		}
		seen[t.Name] = true
		if err := f.Effective(t).check(); err != nil {
			return fmt.Errorf("table %q: %w", t.Name, err)
		}
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Encode writes f as TOML: one table after the other, rows as CSV lines.
func (f *File) Encode(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# moecast calibration file (docs/calibration.md). Latency columns carry their\n")
	fmt.Fprintf(b, "# unit in their name; rows are CSV, one measured point per line.\n")
	fmt.Fprintf(b, "schema = %d\n\n[provenance]\n", f.Schema)
	writeProvenance(b, f.Provenance)
	for i := range f.Tables {
		t := &f.Tables[i]
		fmt.Fprintf(b, "\n[[table]]\nname = %s\nop = %s\n", quote(t.Name), quote(t.Op))
		writeKeys(b, t.Keys)
		fmt.Fprintf(b, "columns = [")
		for j, c := range t.Columns {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(c))
		}
		b.WriteString("]\nrows = \"\"\"\n")
		for _, r := range t.Rows {
			for j, v := range r {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(formatNumber(v))
			}
			b.WriteByte('\n')
		}
		b.WriteString("\"\"\"\n\n[table.provenance]\n")
		writeProvenance(b, t.Provenance)
	}
	return b.Flush()
}

// formatNumber writes integers without exponent and other values in the
// shortest form that parses back to the same float64.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func writeKeys(b *bufio.Writer, k Keys) {
	k.eachSet(
		func(name, v string) { fmt.Fprintf(b, "%s = %s\n", name, quote(v)) },
		func(name string, v int) { fmt.Fprintf(b, "%s = %d\n", name, v) })
}

func writeProvenance(b *bufio.Writer, p Provenance) {
	s := func(name, v string) {
		if v != "" {
			fmt.Fprintf(b, "%s = %s\n", name, quote(v))
		}
	}
	s("gpu", p.GPU)
	s("gpu_label", p.GPULabel)
	if p.GPUCount != 0 {
		fmt.Fprintf(b, "gpu_count = %d\n", p.GPUCount)
	}
	if p.GPUL2Bytes != 0 {
		fmt.Fprintf(b, "gpu_l2_bytes = %s\n", tomlFloat(p.GPUL2Bytes))
	}
	s("fabric", p.Fabric)
	s("driver", p.Driver)
	s("cuda", p.CUDA)
	s("nccl", p.NCCL)
	s("engine", p.Engine)
	s("engine_version", p.EngineVersion)
	s("kernel", p.Kernel)
	s("date", p.Date)
	s("command", p.Command)
	s("source", p.Source)
	s("license", p.License)
	s("launch", p.Launch)
	s("cache", p.Cache)
	s("method", p.Method)
	if len(p.Corrections) > 0 {
		b.WriteString("corrections = [\n")
		for _, c := range p.Corrections {
			fmt.Fprintf(b, "  %s,\n", quote(c))
		}
		b.WriteString("]\n")
	}
}

// tomlFloat writes a float as a TOML float (always with a fraction or
// exponent, so that it decodes as a float).
func tomlFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		s = strconv.FormatFloat(v, 'f', -1, 64)
	}
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0xFFFD:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
