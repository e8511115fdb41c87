// Command moecast predicts, plans and verifies the decode performance of
// Mixture-of-Experts LLMs. See README.md.
package main

import (
	"os"

	"github.com/moecast/moecast/cmd/moecast/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
