// Package view holds each moecast command's result and every view of it:
// the text report, the JSON schema (the `--format json` structs), the CSV
// table and the HTML page, built on report's table and page model. The CLI
// fills a result (a Prediction, Simulation, Planned, Swept, ...) from its
// computation and hands it here; nothing in this package reads files,
// flags or the clock. Figures are written as the goldens of
// cmd/moecast/internal/cli fix them: moving a view here changes no byte.
package view
