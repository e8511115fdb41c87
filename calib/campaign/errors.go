package campaign

import "errors"

// InputError is an error of the caller's options: NewPlan's checks of
// Options and Result.File's (the date, the GPU preset). Its text is its
// wrapped error's. A failed measurement is never one.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// asInput makes *err an *InputError unless it is nil or one already; the
// exported functions that check options defer it.
func asInput(err *error) {
	if *err != nil && !errors.As(*err, new(*InputError)) {
		*err = &InputError{Err: *err}
	}
}
