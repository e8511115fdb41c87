package calib

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rleBomb is a zstd frame of blocks RLE blocks of 128 KiB each (4 bytes
// a block), no content size: a few KB that decompress to blocks x 128 KiB.
func rleBomb(blocks int) []byte {
	z := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3} // magic, no FCS/checksum, window 2^(10+7)
	for i := 0; i < blocks; i++ {
		h := uint32(128<<10)<<3 | 1<<1 // RLE block of 128 KiB
		if i == blocks-1 {
			h |= 1 // last
		}
		z = append(z, byte(h), byte(h>>8), byte(h>>16), 'x')
	}
	return z
}

// Session 13: a compressed calibration file was decompressed whole
// before any check: a 122 KB .toml.zst of 4 GB of zeros ran `calib show`
// past a minute at 6 GB resident. It is refused at the bound on a plain
// file, with a few MB allocated.
func TestLoadZstdBomb(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bomb.toml.zst")
	require.NoError(t, os.WriteFile(path, rleBomb(2100), 0o644)) // 262.5 MiB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Load(path)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bomb.toml.zst: decompresses to more than 256 MiB")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")

	// a frame of less than the bound is read as before (here: not TOML)
	require.NoError(t, os.WriteFile(path, rleBomb(8), 0o644))
	_, err = Load(path)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "decompresses to more")
	assert.NotContains(t, err.Error(), "not zstd-compressed")
}
