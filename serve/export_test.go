package serve

// SetMemoHashMask sets the SimCoster cache's hash mask (0: every key
// collides) until the returned function restores it.
func SetMemoHashMask(m uint64) (restore func()) {
	old := memoHashMask
	memoHashMask = m
	return func() { memoHashMask = old }
}
