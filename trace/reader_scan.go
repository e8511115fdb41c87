package trace

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The byte scanner. Every function works on a window b and an index i and
// returns the index after what it read; a value cut by the end of the window
// yields resShort (the caller refills and restarts the step), malformed JSON
// yields resBad through Reader.bad. A value of the wrong type for an Event
// field is recorded as the event's error (Reader.evErr) and skipped.

// skipWS returns the index of the first byte at or after i that is not JSON
// whitespace, or len(b). All JSON whitespace is <= ' ', so most bytes leave
// after one comparison.
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// scanString reads the string that starts with the quote at b[i]. It returns
// the index after the closing quote (-1 if the window ends first) and whether
// the string holds a backslash escape. It looks at 8 bytes at a time: a word
// has a byte equal to c where (y-lsb) &^ y & msb is set, with y = x ^ c*lsb
// (the "haszero" bit trick; its lowest set bit is always exact).
func scanString(b []byte, i int) (end int, esc bool) {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	j := i + 1
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ (lsb * '"')
		e := x ^ (lsb * '\\')
		if m := ((q - lsb) &^ q & msb) | ((e - lsb) &^ e & msb); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if b[j] == '"' {
				return j + 1, false
			}
			return scanEscaped(b, i), true
		}
	}
	for ; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, false
		case '\\':
			return scanEscaped(b, i), true
		}
	}
	return -1, false
}

// keyEnd returns the index of the first quote or backslash at or after j,
// or len(b); 8 bytes at a time as in scanString.
func keyEnd(b []byte, j int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ (lsb * '"')
		e := x ^ (lsb * '\\')
		if m := ((q - lsb) &^ q & msb) | ((e - lsb) &^ e & msb); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b) && b[j] != '"' && b[j] != '\\'; j++ {
	}
	return j
}

// scanEscaped is scanString for a string with escapes.
func scanEscaped(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	return -1
}

// scanNumber returns the end of the number token at b[i] (-1 if the window
// ends inside it). It accepts the characters of a JSON number; parseFloat
// checks the form.
func scanNumber(b []byte, i int) int {
	for j := i; j < len(b); j++ {
		switch c := b[j]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return j
		}
	}
	return -1
}

// numberEnd returns the end of the JSON number at b[i] (RFC 8259 §6), -1 if
// the window ends inside it, -2 if it is malformed.
func numberEnd(b []byte, i int) int {
	j := i
	if b[j] == '-' {
		j++
	}
	if j == len(b) {
		return -1
	}
	switch c := b[j]; {
	case c == '0':
		j++
	case c >= '1' && c <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return -2
	}
	if j == len(b) {
		return -1
	}
	if b[j] == '.' {
		j++
		s := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == len(b) {
			return -1
		}
		if j == s {
			return -2
		}
	}
	if b[j] == 'e' || b[j] == 'E' {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		s := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == len(b) {
			return -1
		}
		if j == s {
			return -2
		}
	}
	switch c := b[j]; {
	case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		return -2 // e.g. "01", "1.2.3"
	}
	return j
}

// literal checks the JSON literal lit at b[i].
func (r *scanner) literal(b []byte, i int, lit string) (int, result) {
	n := min(len(lit), len(b)-i)
	if string(b[i:i+n]) != lit[:n] {
		return 0, r.bad(i, fmt.Sprintf("invalid literal: want %s", lit))
	}
	if n < len(lit) {
		return 0, resShort
	}
	return i + n, resOK
}

// skipValue returns the end of the JSON value at b[i]. In objects and arrays
// it checks brackets and strings only. A value nested more than maxDepth
// levels deep yields resDeep, with the opening bracket past the limit at
// r.deepPos: the bracket stack, and the window that must hold the value
// while it is checked, cannot grow with the depth.
func (r *scanner) skipValue(b []byte, i int) (int, result) {
	switch c := b[i]; c {
	case '"':
		end, _ := scanString(b, i)
		if end < 0 {
			return 0, resShort
		}
		return end, resOK
	case 't':
		return r.literal(b, i, "true")
	case 'f':
		return r.literal(b, i, "false")
	case 'n':
		return r.literal(b, i, "null")
	case '{', '[':
		st := r.stack[:0]
		for j := i; j < len(b); j++ {
			switch c := b[j]; c {
			case '"':
				end, _ := scanString(b, j)
				if end < 0 {
					r.stack = st
					return 0, resShort
				}
				j = end - 1
			case '{', '[':
				if len(st) == maxDepth {
					r.stack, r.deepPos = st, j
					return 0, resDeep
				}
				st = append(st, c)
			case '}', ']':
				if len(st) == 0 || st[len(st)-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
					r.stack = st
					return 0, r.bad(j, fmt.Sprintf("unbalanced %s", quoteByte(c)))
				}
				st = st[:len(st)-1]
				if len(st) == 0 {
					r.stack = st
					return j + 1, resOK
				}
			}
		}
		r.stack = st
		return 0, resShort
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			switch end := numberEnd(b, i); end {
			case -1:
				return 0, resShort
			case -2:
				return 0, r.bad(i, "invalid number")
			default:
				return end, resOK
			}
		}
		return 0, r.bad(i, fmt.Sprintf("want a JSON value, found %s", quoteByte(c)))
	}
}

// typeErr records that field has a value of the wrong type at b[i] and skips
// the value.
func (r *scanner) typeErr(b []byte, i int, field, want string) (int, result) {
	if r.evErr == "" {
		r.evErr, r.evErrPos = fmt.Sprintf("%s: want %s, found %s", field, want, kindOf(b[i])), i
	}
	return r.skipValue(b, i)
}

// maxTime bounds the magnitude of ts and dur, in microseconds (about 3e16
// years). JSON numbers such as 1e999 parse as infinities (strconv reports
// ErrRange); an infinite, negative or absurd ts or dur would turn the step
// arithmetic (end = ts + dur, wall = last end - first start, sums over
// events, shares) into Inf or NaN, so such an event is malformed. The bound
// is far above any real trace (microseconds since 1970 are about 1.8e15;
// even nanoseconds or picoseconds written by mistake stay below 1e22), and
// sums of up to 1e270 events within it stay finite.
const maxTime = 1e30

// rangeErr records that field holds v, which is not want, at b[i] (the value
// has been read).
func (r *scanner) rangeErr(i int, field, want string, v float64) {
	if r.evErr == "" {
		r.evErr, r.evErrPos = fmt.Sprintf("%s: want %s, found %v", field, want, v), i
	}
}

// isDevice reports whether events of category c run on the GPU: their ts and
// dur are what the step analysis sums.
func isDevice(c Cat) bool {
	return c == CatKernel || c == CatMemcpy || c == CatMemset || c == CatGPUUserAnnotation
}

// untimed records that a complete device event at b[i] has no ts or no dur:
// it cannot be placed in time, so it is malformed rather than read as 0 (a
// kernel at instant 0 would stretch its step over the epoch; one of zero
// duration would drop its time).
func (r *scanner) untimed(i int, ev *Event, hasTS bool) {
	if r.evErr != "" {
		return
	}
	missing := "dur"
	if !hasTS {
		missing = "ts"
	}
	r.evErr, r.evErrPos = fmt.Sprintf("%s event %q has no %s: it cannot be timed", ev.CatRaw, shortName(ev.Name), missing), i
}

// shortName cuts a name for an error message.
func shortName(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// kindOf names the kind of JSON value that starts with c.
func kindOf(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return quoteByte(c)
}

// readString reads a string value; null gives nil. The result may point
// into b or into r.scratch: use it before the next read.
func (r *scanner) readString(b []byte, i int, field string) ([]byte, int, result) {
	switch b[i] {
	case '"':
		end, esc := scanString(b, i)
		if end < 0 {
			return nil, 0, resShort
		}
		s := b[i+1 : end-1]
		if esc {
			var ok bool
			if r.scratch, ok = unescape(r.scratch[:0], s); !ok {
				return nil, 0, r.bad(i, fmt.Sprintf("%s: invalid escape in string", field))
			}
			s = r.scratch
		}
		return s, end, resOK
	case 'n':
		end, res := r.literal(b, i, "null")
		return nil, end, res
	}
	end, res := r.typeErr(b, i, field, "a string")
	return nil, end, res
}

// readFloat reads a number, a string holding a number, or null (0).
func (r *scanner) readFloat(b []byte, i int, field string) (float64, int, result) {
	c := b[i]
	if c == '-' || (c >= '0' && c <= '9') {
		v, end, res := numberAt(b, i)
		if res == resBad {
			return 0, 0, r.bad(i, fmt.Sprintf("%s: invalid number", field))
		}
		return v, end, res
	}
	if c == '"' {
		s, end, res := r.readString(b, i, field)
		if res != resOK {
			return 0, end, res
		}
		v, ok := parseFloat(s)
		if !ok {
			r.typeErr(b, i, field, "a number")
			return 0, end, resOK
		}
		return v, end, resOK
	}
	if c == 'n' {
		end, res := r.literal(b, i, "null")
		return 0, end, res
	}
	end, res := r.typeErr(b, i, field, "a number")
	return 0, end, res
}

// readInt reads an integer like readFloat; a number with a fraction is a
// type error.
func (r *scanner) readInt(b []byte, i int, field string) (int64, int, result) {
	c := b[i]
	if c >= '0' && c <= '9' {
		// Fast path: plain digits.
		var v int64
		j := i
		for ; j < len(b) && j-i < 18 && b[j] >= '0' && b[j] <= '9'; j++ {
			v = v*10 + int64(b[j]-'0')
		}
		if j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\n', '\r', '\t':
				return v, j, resOK
			}
		}
	}
	f, end, res := r.readFloat(b, i, field)
	if res != resOK {
		return 0, end, res
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		if r.evErr == "" {
			r.evErr, r.evErrPos = fmt.Sprintf("%s: want an integer, found %v", field, f), i
		}
		return 0, end, resOK
	}
	return int64(f), end, resOK
}

// readID reads a pid or tid: a number, or a string (a numeric string gives
// its value, any other string -1, as Kineto's "Spans" and "Traces" pids).
func (r *scanner) readID(b []byte, i int, field string) (int64, int, result) {
	if b[i] == '"' {
		s, end, res := r.readString(b, i, field)
		if res != resOK {
			return 0, end, res
		}
		if v, ok := parseFloat(s); ok && v == math.Trunc(v) && math.Abs(v) <= 1<<62 {
			return int64(v), end, resOK
		}
		if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
			if v, err := strconv.ParseInt(unsafe.String(&s[2], len(s)-2), 16, 64); err == nil {
				return v, end, resOK
			}
		}
		return -1, end, resOK
	}
	return r.readInt(b, i, field)
}

// readDim3 reads a grid or block array [x, y, z]; missing elements stay 0,
// elements past the third are ignored.
func (r *scanner) readDim3(b []byte, i int, field string, dst *[3]int32) (int, result) {
	if b[i] != '[' {
		if b[i] == 'n' {
			return r.literal(b, i, "null")
		}
		return r.typeErr(b, i, field, "an array")
	}
	i++
	for k := 0; ; k++ {
		if i = skipWS(b, i); i == len(b) {
			return 0, resShort
		}
		if b[i] == ']' {
			return i + 1, resOK
		}
		if k > 0 {
			if b[i] != ',' {
				return 0, r.bad(i, fmt.Sprintf("%s: want ',' or ']', found %s", field, quoteByte(b[i])))
			}
			if i = skipWS(b, i+1); i == len(b) {
				return 0, resShort
			}
		}
		v, end, res := r.readInt(b, i, field)
		if res != resOK {
			return 0, res
		}
		if k < 3 {
			dst[k] = int32(v)
		}
		i = end
	}
}

// objectKey reads `"key" :` at the position of a member of an object whose
// opening brace has been read (first: no member read yet). It returns the
// key, or done when the object closes, and the index of the value. The fast
// paths follow Kineto's layout, `, "key": value`.
func (r *scanner) objectKey(b []byte, i int, first bool, what string) (key []byte, done bool, next int, res result) {
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) {
		return nil, false, 0, resShort
	}
	c := b[i]
	if c == '}' {
		return nil, true, i + 1, resOK
	}
	if !first {
		if c != ',' {
			return nil, false, 0, r.bad(i, fmt.Sprintf("want ',' or '}' in %s, found %s", what, quoteByte(c)))
		}
		i++
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			return nil, false, 0, resShort
		}
		c = b[i]
	}
	if c != '"' {
		return nil, false, 0, r.bad(i, fmt.Sprintf("want a key string in %s, found %s", what, quoteByte(c)))
	}
	j := keyEnd(b, i+1)
	if j >= len(b) {
		return nil, false, 0, resShort
	}
	if b[j] == '"' {
		key = b[i+1 : j]
		j++
	} else {
		end := scanEscaped(b, i)
		if end < 0 {
			return nil, false, 0, resShort
		}
		var ok bool
		if r.keyBuf, ok = unescape(r.keyBuf[:0], b[i+1:end-1]); !ok {
			return nil, false, 0, r.bad(i, fmt.Sprintf("invalid escape in a key of %s", what))
		}
		key, j = r.keyBuf, end
	}
	if j < len(b) && b[j] <= ' ' {
		j = skipWS(b, j)
	}
	if j >= len(b) {
		return nil, false, 0, resShort
	}
	if b[j] != ':' {
		return nil, false, 0, r.bad(j, fmt.Sprintf("want ':' after a key in %s, found %s", what, quoteByte(b[j])))
	}
	j++
	if j < len(b) && b[j] <= ' ' {
		j = skipWS(b, j)
	}
	if j >= len(b) {
		return nil, false, 0, resShort
	}
	return key, false, j, resOK
}

// parseEvent decodes the event object at b[i] into ev.
func (r *scanner) parseEvent(b []byte, i int, ev *Event) (int, result) {
	start := i
	i++
	prev := uint16(prevEvent)
	hasTS, hasDur := false, false
	for first := true; ; first = false {
		id, kind, done, j, res := r.memberKey(b, i, first, prev, "an event")
		if res != resOK {
			return 0, res
		}
		if done {
			if ev.Ph == PhaseComplete && (!hasTS || !hasDur) && isDevice(ev.Cat) {
				r.untimed(start, ev, hasTS)
			}
			return j, resOK
		}
		prev = id
		var s []byte
		var f float64
		switch kind {
		case keyPh:
			s, i, res = r.readString(b, j, "ph")
			if len(s) > 0 {
				ev.Ph = Phase(s[0])
			}
		case keyCat:
			s, i, res = r.readString(b, j, "cat")
			if res == resOK {
				ev.CatRaw = r.strs.intern(s)
				ev.Cat = catOf(ev.CatRaw)
			}
		case keyName:
			s, i, res = r.readString(b, j, "name")
			if res == resOK {
				ev.Name = r.strs.intern(s)
			}
		case keyPid:
			ev.Pid, i, res = r.readID(b, j, "pid")
		case keyTid:
			ev.Tid, i, res = r.readID(b, j, "tid")
		case keyTS:
			hasTS = true
			f, i, res = r.readFloat(b, j, "ts")
			ev.TS = timeFromMicros(f)
			if !(math.Abs(f) <= maxTime) { // also NaN
				r.rangeErr(j, "ts", "a finite number", f)
			}
		case keyDur:
			hasDur = true
			f, i, res = r.readFloat(b, j, "dur")
			ev.Dur = secondsFromMicros(f)
			if !(f >= 0 && f <= maxTime) { // also NaN
				r.rangeErr(j, "dur", "a finite number >= 0", f)
			}
		case keyID:
			ev.ID, i, res = r.readID(b, j, "id")
		case keyArgs:
			i, res = r.parseArgs(b, j, ev)
		default:
			i, res = r.skipValue(b, j)
		}
		if res != resOK {
			return 0, res
		}
	}
}

// parseArgs decodes the selected members of an event's "args".
func (r *scanner) parseArgs(b []byte, i int, ev *Event) (int, result) {
	if b[i] != '{' {
		if b[i] == 'n' {
			return r.literal(b, i, "null")
		}
		return r.typeErr(b, i, "args", "an object")
	}
	i++
	prev := uint16(prevArgs)
	for first := true; ; first = false {
		id, kind, done, j, res := r.memberKey(b, i, first, prev, "args")
		if res != resOK {
			return 0, res
		}
		if done {
			return j, resOK
		}
		prev = id
		var s []byte
		var v int64
		switch kind {
		case keyCorrelation:
			ev.Correlation, i, res = r.readInt(b, j, "args.correlation")
		case keyExternalID:
			ev.ExternalID, i, res = r.readInt(b, j, "args.External id")
		case keyStream:
			ev.Stream, i, res = r.readInt(b, j, "args.stream")
		case keyDevice:
			ev.Device, i, res = r.readInt(b, j, "args.device")
		case keyGrid:
			i, res = r.readDim3(b, j, "args.grid", &ev.Grid)
		case keyBlock:
			i, res = r.readDim3(b, j, "args.block", &ev.Block)
		case keyBytes:
			ev.Bytes, i, res = r.readInt(b, j, "args.bytes")
		case keyCollective:
			s, i, res = r.readString(b, j, "args.Collective name")
			if res == resOK {
				ev.Collective = r.strs.intern(s)
			}
		case keyInMsgNelems:
			ev.InMsgNelems, i, res = r.readInt(b, j, "args.In msg nelems")
		case keyOutMsgNelems:
			ev.OutMsgNelems, i, res = r.readInt(b, j, "args.Out msg nelems")
		case keyGroupSize:
			v, i, res = r.readInt(b, j, "args.Group size")
			ev.GroupSize = int32(v)
		case keyDType:
			s, i, res = r.readString(b, j, "args.dtype")
			if res == resOK {
				ev.DType = r.strs.intern(s)
			}
		default:
			i, res = r.skipValue(b, j)
		}
		if res != resOK {
			return 0, res
		}
	}
}

// catOf maps a "cat" string to a Cat. Older Kineto versions wrote "Kernel",
// "Runtime", "Memcpy", "Memset" and "Operator".
func catOf(s string) Cat {
	switch s {
	case "kernel", "Kernel":
		return CatKernel
	case "gpu_memcpy", "Memcpy":
		return CatMemcpy
	case "gpu_memset", "Memset":
		return CatMemset
	case "cuda_runtime", "Runtime":
		return CatRuntime
	case "cuda_driver":
		return CatDriver
	case "cpu_op", "Operator":
		return CatCPUOp
	case "user_annotation":
		return CatUserAnnotation
	case "gpu_user_annotation":
		return CatGPUUserAnnotation
	case "python_function":
		return CatPythonFunction
	case "ac2g", "fwdbwd", "async_cpu_to_gpu":
		return CatFlow
	}
	return CatOther
}

// numberAt parses the number token at b[i] in one pass (see parseFloat for
// the fast path); resShort when the window ends inside it, resBad when it is
// not a JSON number.
func numberAt(b []byte, i int) (float64, int, result) {
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	var mant uint64
	ds := j
	for ; j < len(b); j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		mant = mant*10 + uint64(c)
	}
	nInt := j - ds
	nFrac := 0
	if j < len(b) && b[j] == '.' {
		j++
		fs := j
		for ; j < len(b); j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			mant = mant*10 + uint64(c)
		}
		nFrac = j - fs
		if nFrac == 0 && j < len(b) {
			return 0, 0, resBad
		}
	}
	if j == len(b) {
		return 0, 0, resShort
	}
	switch b[j] {
	case 'e', 'E', '+', '-', '.':
		return slowNumberAt(b, i)
	}
	if nInt == 0 || (b[ds] == '0' && nInt > 1) {
		return 0, 0, resBad
	}
	if nInt+nFrac > 19 || mant > 1<<53 || nFrac > 22 {
		return slowNumberAt(b, i)
	}
	f := float64(mant)
	if nFrac > 0 {
		f /= pow10[nFrac]
	}
	if neg {
		f = -f
	}
	return f, j, resOK
}

func slowNumberAt(b []byte, i int) (float64, int, result) {
	end := scanNumber(b, i)
	if end < 0 {
		return 0, 0, resShort
	}
	v, ok := parseFloat(b[i:end])
	if !ok {
		return 0, 0, resBad
	}
	return v, end, resOK
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a JSON number without allocating. A number without an
// exponent part whose digits form an integer m <= 2^53 and whose decimal
// exponent e is within [-22, 0] is m / 10^-e with both operands exact in
// float64 (Clinger's fast path), so one IEEE division rounds it correctly;
// others go to strconv.ParseFloat.
func parseFloat(b []byte) (float64, bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	nd, exp := 0, 0
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if mant == 0 && b[i] == '0' {
			continue
		}
		mant = mant*10 + uint64(b[i]-'0')
		nd++
		if nd > 18 {
			return slowFloat(b)
		}
	}
	if i == start || (b[start] == '0' && i-start > 1) { // no digits, or a leading zero
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if mant == 0 && b[i] == '0' {
				exp--
				continue
			}
			mant = mant*10 + uint64(b[i]-'0')
			nd++
			exp--
			if nd > 18 {
				return slowFloat(b)
			}
		}
		if i == fs {
			return 0, false
		}
	}
	if i < len(b) {
		if b[i] == 'e' || b[i] == 'E' {
			return slowFloat(b)
		}
		return 0, false
	}
	if mant > 1<<53 {
		return slowFloat(b)
	}
	f := float64(mant)
	switch {
	case exp == 0:
	case exp < 0 && exp >= -22:
		f /= pow10[-exp]
	default:
		return slowFloat(b)
	}
	if neg {
		f = -f
	}
	return f, true
}

// slowFloat parses a JSON number with strconv after checking the JSON form
// (strconv accepts more: "Inf", "0x1p3", "1_0", ".5", "+1").
func slowFloat(b []byte) (float64, bool) {
	if !validNumber(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// validNumber checks the JSON number grammar (RFC 8259 §6).
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i == len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// unescape appends the JSON string content s with its escapes decoded to
// dst (RFC 8259 §7). Unpaired surrogates become U+FFFD.
func unescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i == len(s) {
			return dst, false
		}
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r1, ok := hex4(s[i+1:])
			if !ok {
				return dst, false
			}
			i += 4
			rr := rune(r1)
			if utf16.IsSurrogate(rr) {
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if r2, ok := hex4(s[i+3:]); ok {
						if d := utf16.DecodeRune(rr, rune(r2)); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							i += 6
							continue
						}
					}
				}
				rr = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, rr)
		default:
			return dst, false
		}
	}
	return dst, true
}

func hex4(s []byte) (uint16, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var v uint16
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint16(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// interner keeps one copy of each distinct string (event names repeat
// millions of times). A small direct-mapped cache in front of the map
// answers most lookups with one comparison instead of hashing a long kernel
// name. Past maxInternBytes the map stops growing, so a trace of unique
// names cannot grow it without bound.
type interner struct {
	m     map[string]string
	size  int
	cache [1024]string
}

const maxInternBytes = 8 << 20

func newInterner() interner { return interner{m: make(map[string]string, 1024)} }

func (t *interner) intern(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	h := uint(n)*0x9E3779B1 ^ uint(b[0])<<5 ^ uint(b[n-1])<<11 ^ uint(b[n>>1])<<17 ^ uint(b[n>>2])
	h ^= h >> 10
	slot := &t.cache[h&uint(len(t.cache)-1)]
	if *slot == string(b) {
		return *slot
	}
	s, ok := t.m[string(b)]
	if !ok {
		s = string(b)
		if t.size < maxInternBytes {
			t.m[s] = s
			t.size += len(s) + 32
		}
	}
	*slot = s
	return s
}
