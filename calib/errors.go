package calib

import "errors"

// InputError is an error of the input a caller gave calib: a calibration
// file that cannot be read or does not parse, a reference that names no
// embedded file, a directory or output of nccl-tests or perfdb that cannot
// be imported. Every error of Open, Parse, ImportNCCLTests and ImportPerfDB
// is one (wrapping the positioned error, such as a *curve.RowError, where
// there is one), so that a caller tells bad input from a failure by type:
// the CLI exits 2 on it. Its text is Err's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// asInput makes *err an *InputError unless it is nil or one already; the
// exported readers and importers defer it.
func asInput(err *error) {
	if *err != nil && !errors.As(*err, new(*InputError)) {
		*err = &InputError{Err: *err}
	}
}
