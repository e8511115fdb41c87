// Package corpus is moecast's shipped accuracy corpus: measured serving
// results of public benchmarks, each paired with a scenario of its
// deployment, as `moecast validate corpus` reads them with no argument.
// Everything in it but this file, SOURCES.md and accuracy.json is generated
// by ./gen from ../shared/data/serving (go generate ./validate/corpus);
// sources and licenses are in SOURCES.md and manifest.toml. accuracy.json
// is the corpus scored (`moecast validate corpus --accuracy-json`, kept in
// step with docs/ACCURACY.md by the CLI's TestAccuracyDoc).
package corpus

import "embed"

//go:generate go run ./gen -serving ../../../shared/data/serving -configs ../../../shared/data/model_configs -out .

// FS holds manifest.toml and the files it names.
//
//go:embed manifest.toml SOURCES.md aiconfigurator inferencex llmservingsim configs
var FS embed.FS

// AccuracyJSON is the shipped corpus's accuracy summary
// (validate.AccuracyTable): moecast's measured error per deployment, which
// simulate quotes for a scenario like one of them.
//
//go:embed accuracy.json
var AccuracyJSON []byte

// Manifest is the path of the manifest in FS.
const Manifest = "manifest.toml"
