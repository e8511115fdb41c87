package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputErrorType: Search's and Sweep's errors are *InputError.
func TestInputErrorType(t *testing.T) {
	_, err := Sweep([]Axis{{Name: "a"}}, func([]Setting) (int, error) { return 0, nil }, 1)
	require.Error(t, err)
	var ie *InputError
	assert.ErrorAs(t, err, &ie)
	assert.Equal(t, "sweep: axis \"a\" has no values", err.Error())

	_, err = Search(&Space{}, Options{})
	require.Error(t, err)
	assert.ErrorAs(t, err, &ie)
}
