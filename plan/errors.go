package plan

import "errors"

// InputError is an error of what a caller asked Search or Sweep for: a
// search space or options that cannot be searched (no GPU type, a target
// out of range, every layout refused), a point the evaluator could not
// price, sweep axes that are empty, repeated or too many. Every error of
// Search and Sweep is one, so that a caller tells a request that cannot be
// met from a failure by type: the CLI exits 2 on it. Its text is Err's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// asInput makes *err an *InputError unless it is nil or one already.
func asInput(err *error) {
	if *err != nil && !errors.As(*err, new(*InputError)) {
		*err = &InputError{Err: *err}
	}
}
