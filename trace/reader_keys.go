package trace

import (
	"encoding/binary"
	"fmt"
)

// Member keys of events and their args get small ids. Kineto writes the
// members of an event type in a fixed order, so each scanner remembers,
// for every key, the last few keys that followed it (a few event types
// interleave) together with their exact spelling up to the value
// (`"correlation": `), and first checks whether the input holds one of
// those spellings: a comparison or two instead of scanning the key,
// hashing it and switching on it. A miss falls back to scanning.

// Known key ids.
const (
	keyOther uint16 = iota // a key the scanner does not decode
	keyPh
	keyCat
	keyName
	keyPid
	keyTid
	keyTS
	keyDur
	keyID
	keyArgs
	keyCorrelation
	keyExternalID
	keyStream
	keyDevice
	keyGrid
	keyBlock
	keyBytes
	keyCollective
	keyInMsgNelems
	keyOutMsgNelems
	keyGroupSize
	keyDType
	numKnownKeys
)

var knownKeys = [numKnownKeys]string{
	keyPh: "ph", keyCat: "cat", keyName: "name", keyPid: "pid", keyTid: "tid", keyTS: "ts", keyDur: "dur",
	keyID: "id", keyArgs: "args",
	keyCorrelation: "correlation", keyExternalID: "External id", keyStream: "stream", keyDevice: "device",
	keyGrid: "grid", keyBlock: "block", keyBytes: "bytes", keyCollective: "Collective name",
	keyInMsgNelems: "In msg nelems", keyOutMsgNelems: "Out msg nelems", keyGroupSize: "Group size", keyDType: "dtype",
}

const (
	maxKeys    = 1024    // distinct keys given an id; others are keyOther, never predicted
	maxKeyPat  = 48      // longest spelling remembered
	prevEvent  = maxKeys // "previous key" at the start of an event
	prevArgs   = maxKeys + 1
	keyNoGuess = 0xffff
	numGuesses = 4 // keys remembered after each key
)

// keyTable holds the ids, spellings and predictions of one scanner.
type keyTable struct {
	ids  map[string]uint16
	kind []uint16 // id -> known key id (keyOther for unknown keys)
	pat  [][]byte // id -> spelling from the opening quote to the value, nil if none
	// word and mask: the first 8 bytes of pat, for a first check; word2
	// and mask2 the next 8.
	word, mask, word2, mask2 []uint64
	guess                    [maxKeys + 2][numGuesses]uint16 // most recent first
}

func newKeyTable() *keyTable {
	t := &keyTable{ids: make(map[string]uint16, 64), kind: make([]uint16, 1, 64), pat: make([][]byte, 1, 64),
		word: make([]uint64, 1, 64), mask: make([]uint64, 1, 64), word2: make([]uint64, 1, 64), mask2: make([]uint64, 1, 64)}
	for k := range t.guess {
		for g := range t.guess[k] {
			t.guess[k][g] = keyNoGuess
		}
	}
	return t
}

// id returns the id of key, adding it while there is room (0 past maxKeys).
func (t *keyTable) id(key []byte) uint16 {
	if id, ok := t.ids[string(key)]; ok {
		return id
	}
	if len(t.kind) >= maxKeys {
		return 0
	}
	kind := keyOther
	for k, name := range knownKeys {
		if k > 0 && name == string(key) {
			kind = uint16(k)
		}
	}
	id := uint16(len(t.kind))
	t.ids[string(key)] = id
	t.kind = append(t.kind, kind)
	t.pat = append(t.pat, nil)
	t.word = append(t.word, 0)
	t.mask = append(t.mask, 0)
	t.word2 = append(t.word2, 0)
	t.mask2 = append(t.mask2, 0)
	return id
}

// setPat records the spelling of key id.
func (t *keyTable) setPat(id uint16, p []byte) {
	t.pat[id] = append([]byte(nil), p...)
	var w [16]byte
	n := copy(w[:], p)
	t.word[id] = binary.LittleEndian.Uint64(w[:8])
	t.mask[id] = ^uint64(0) >> (64 - 8*min(n, 8))
	t.word2[id] = binary.LittleEndian.Uint64(w[8:])
	if n > 8 {
		t.mask2[id] = ^uint64(0) >> (64 - 8*min(n-8, 8))
	}
}

// learn makes id the first guess after prev.
func (t *keyTable) learn(prev, id uint16) {
	g := &t.guess[prev]
	k := 0
	for k < numGuesses-1 && g[k] != id {
		k++
	}
	copy(g[1:k+1], g[:k])
	g[0] = id
}

// memberKey reads the separator before a member of an event or its args
// (',' unless first, or the closing '}'), the key and the colon. prev is the
// id of the previous key (prevEvent or prevArgs first). It returns the key's
// id and known kind, or done when the object closes, and the index of the
// value.
func (r *scanner) memberKey(b []byte, i int, first bool, prev uint16, what string) (id, kind uint16, done bool, next int, res result) {
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) {
		return 0, 0, false, 0, resShort
	}
	c := b[i]
	if c == '}' {
		return 0, 0, true, i + 1, resOK
	}
	if !first {
		if c != ',' {
			return 0, 0, false, 0, r.bad(i, fmt.Sprintf("want ',' or '}' in %s, found %s", what, quoteByte(c)))
		}
		i++
		if i < len(b) && b[i] == ' ' { // Kineto's ", "
			i++
		}
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			return 0, 0, false, 0, resShort
		}
		c = b[i]
	}
	if c != '"' {
		return 0, 0, false, 0, r.bad(i, fmt.Sprintf("want a key string in %s, found %s", what, quoteByte(c)))
	}
	t := r.keys
	if i+16 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		x2 := binary.LittleEndian.Uint64(b[i+8:])
		for _, g := range &t.guess[prev] {
			if g == keyNoGuess {
				break
			}
			if x&t.mask[g] != t.word[g] || x2&t.mask2[g] != t.word2[g] {
				continue
			}
			p := t.pat[g]
			if len(p) >= len(b)-i || (len(p) > 16 && string(b[i+16:i+len(p)]) != string(p[16:])) {
				continue
			}
			j := i + len(p)
			if b[j] <= ' ' {
				if j = skipWS(b, j); j == len(b) {
					return 0, 0, false, 0, resShort
				}
			}
			return g, t.kind[g], false, j, resOK
		}
	}
	// Scan the key.
	j := keyEnd(b, i+1)
	if j >= len(b) {
		return 0, 0, false, 0, resShort
	}
	var key []byte
	esc := b[j] != '"'
	if !esc {
		key = b[i+1 : j]
		j++
	} else {
		end := scanEscaped(b, i)
		if end < 0 {
			return 0, 0, false, 0, resShort
		}
		var ok bool
		if r.keyBuf, ok = unescape(r.keyBuf[:0], b[i+1:end-1]); !ok {
			return 0, 0, false, 0, r.bad(i, fmt.Sprintf("invalid escape in a key of %s", what))
		}
		key, j = r.keyBuf, end
	}
	if j < len(b) && b[j] <= ' ' {
		j = skipWS(b, j)
	}
	if j >= len(b) {
		return 0, 0, false, 0, resShort
	}
	if b[j] != ':' {
		return 0, 0, false, 0, r.bad(j, fmt.Sprintf("want ':' after a key in %s, found %s", what, quoteByte(b[j])))
	}
	j++
	if j < len(b) && b[j] <= ' ' {
		j = skipWS(b, j)
	}
	if j >= len(b) {
		return 0, 0, false, 0, resShort
	}
	id = t.id(key)
	if id != 0 && !esc {
		if t.pat[id] == nil && j-i <= maxKeyPat {
			t.setPat(id, b[i:j])
		}
		if t.pat[id] != nil {
			t.learn(prev, id)
		}
	}
	return id, t.kind[id], false, j, resOK
}
