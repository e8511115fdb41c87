package validate

import "errors"

// ReadError is an error of a measured result that ReadBench, ReadBenchAs,
// ReadBenchFS, ReadBenchPath or ReadWorkload could not read: every error
// they return is one, wrapping the *BenchError that positions it where
// there is one, so that a caller tells bad input from a failure by type
// (the CLI exits 2 on it). Its text is Err's.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// asRead makes *err a *ReadError unless it is nil or one already.
func asRead(err *error) {
	if *err != nil && !errors.As(*err, new(*ReadError)) {
		*err = &ReadError{Err: *err}
	}
}
