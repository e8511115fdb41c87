package cli

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds a Chromium or Chrome binary; .ci/run installs Debian's
// chromium package where it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (.ci/run installs it with apt-get install chromium); the HTML reports are not tested in a browser")
	return ""
}

// headless runs Chromium on file with extra flags and returns its stdout
// and stderr.
func headless(t *testing.T, bin, file string, flags ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--enable-logging=stderr", "--v=0"}, flags...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "chromium %v: %s", args, errb.String())
	return out.String(), errb.String()
}

// consoleErrors are the page's console errors as Chromium logs them
// ("CONSOLE" lines at ERROR or WARNING level, failed loads, uncaught
// exceptions).
var consoleLine = regexp.MustCompile(`(?m)^.*(:ERROR:CONSOLE|:WARNING:CONSOLE|Uncaught |Failed to load resource|net::ERR_).*$`)

func consoleErrors(stderr string) []string { return consoleLine.FindAllString(stderr, -1) }

// probe is appended to a copy of a report (never to the report itself,
// which holds no script): it measures each chart's drawn content as the
// browser laid it out.
const probe = `<script>
(function () {
  var out = [];
  document.querySelectorAll('figure.chart svg').forEach(function (svg, i) {
    var b = svg.getBBox(), n = 0;
    svg.querySelectorAll('path, text').forEach(function (e) {
      var r = e.getBBox();
      if (r.width > 0 || r.height > 0) { n++; }
    });
    var box = svg.getBoundingClientRect();
    out.push([i, Math.round(b.width), Math.round(b.height), n, Math.round(box.width), Math.round(box.height)].join(','));
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = out.join(';');
  document.body.appendChild(pre);
})();
</script>
`

var probeOut = regexp.MustCompile(`<pre id="probe">([^<]*)</pre>`)

// TestHTMLInBrowser renders each report kind in headless Chromium: no
// console error, every chart drawn (its SVG content has a non-empty
// bounding box and drawn paths and text, and the figure takes room on the
// page), and a screenshot that is not blank.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	for _, r := range htmlReports {
		t.Run(r.kind, func(t *testing.T) {
			file := filepath.Join(dir, r.kind+".html")
			code, _, errs := runCLI(t, append(r.args, "--html", file)...)
			require.Equal(t, ExitOK, code, errs)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			charts := strings.Count(string(data), `<figure class="chart"`)
			require.Positive(t, charts)

			// A probed copy (the report and a script that measures each
			// chart's drawn extent as laid out), dumped and shot in one run.
			probed := filepath.Join(dir, r.kind+".probe.html")
			s := strings.Replace(string(data), "</body>", probe+"</body>", 1)
			require.NoError(t, os.WriteFile(probed, []byte(s), 0o644))
			shot := filepath.Join(dir, r.kind+".png")
			dom, stderr := headless(t, bin, probed, "--dump-dom", "--screenshot="+shot, "--window-size=1200,2400", "--hide-scrollbars")
			assert.Empty(t, consoleErrors(stderr), "console errors rendering %s", probed)
			assert.Greater(t, inkShare(t, shot), 0.02, "the screenshot of %s is (nearly) blank", file)
			if dst := os.Getenv("MOECAST_SCREENSHOTS"); dst != "" {
				b, err := os.ReadFile(shot)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dst, r.kind+".png"), b, 0o644))
			}
			m := probeOut.FindStringSubmatch(dom)
			require.NotNil(t, m, "the probe ran: %.300s", dom)
			t.Logf("probe (chart, content w, h, drawn elements, page w, h): %s", m[1])
			got := strings.Split(m[1], ";")
			require.Len(t, got, charts, "one measure per chart: %q", m[1])
			for _, c := range got {
				f := strings.Split(c, ",")
				require.Len(t, f, 6)
				n := make([]int, 6)
				for i := range f {
					n[i], err = strconv.Atoi(f[i])
					require.NoError(t, err, c)
				}
				assert.Greater(t, n[1], 200, "chart %d content width (px): %s", n[0], c)
				assert.Greater(t, n[2], 150, "chart %d content height (px): %s", n[0], c)
				assert.Greater(t, n[3], 20, "chart %d drawn paths and texts: %s", n[0], c)
				assert.Greater(t, n[4], 200, "chart %d on-page width: %s", n[0], c)
				assert.Greater(t, n[5], 150, "chart %d on-page height: %s", n[0], c)
			}
		})
	}
}

// TestBrowserCatchesConsoleErrors is the control of TestHTMLInBrowser: a
// page that fetches from the network and throws is caught.
func TestBrowserCatchesConsoleErrors(t *testing.T) {
	bin := chromium(t)
	file := filepath.Join(t.TempDir(), "bad.html")
	require.NoError(t, os.WriteFile(file, []byte(`<!DOCTYPE html><html><body><img src="missing-image.png">`+
		`<script>throw new Error("boom")</script></body></html>`), 0o644))
	_, stderr := headless(t, bin, file, "--dump-dom")
	errs := consoleErrors(stderr)
	assert.NotEmpty(t, errs, "stderr: %s", stderr)
	assert.Contains(t, fmt.Sprint(errs), "boom")
}

// inkShare is the share of a PNG's pixels that are not (near) white.
func inkShare(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	ink, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			all++
			if !nearWhite(img, x, y) {
				ink++
			}
		}
	}
	return float64(ink) / float64(all)
}

func nearWhite(img image.Image, x, y int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return r > 0xf000 && g > 0xf000 && b > 0xf000
}
