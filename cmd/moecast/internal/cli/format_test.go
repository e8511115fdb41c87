package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckFormat(t *testing.T) {
	for _, f := range []string{"text", "json", "csv"} {
		assert.NoError(t, checkFormat(f))
	}
	err := checkFormat("yaml")
	require.Error(t, err)
	var ie *InputError
	assert.ErrorAs(t, err, &ie)
	assert.Equal(t, `--format: unknown format "yaml" (want text, json or csv)`, err.Error())
}
