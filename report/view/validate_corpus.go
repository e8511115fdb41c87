package view

import (
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

// CorpusResult is a scored corpus and what goes around it.
type CorpusResult struct {
	Manifest  *scenarios.Manifest
	Card      *validate.Scorecard
	Every     int
	Baselines []CorpusBaseline
	Warnings  []string
}

// CorpusBaseline is a peer's own error on an entry (LLMServingSim's
// summary.txt) beside moecast's.
type CorpusBaseline struct {
	Entry, File, Text string
	Row               *validate.CorpusRow // moecast's row of the entry (nil if none)
}
