package image

import (
	"archive/tar"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUnpack feeds arbitrary tar streams to Unpack: it must never panic,
// write outside the destination or leave a link that leads out of it.
func FuzzUnpack(f *testing.F) {
	seeds := [][]ent{
		{file("a", "x"), dir("d"), symlink("d/l", "../a"), hardlink("h", "a")},
		{symlink("x", "../outside"), file("x/y", "z")},
		chain,
		append(append([]ent{}, chain...), file("y/outside/pwned", "x")),
		{file("d/.wh..wh..opq", ""), file(".wh.a", ""), file("/abs", "x")},
		{{name: "dev", typ: tar.TypeChar}, file("../x", "y")},
	}
	for _, s := range seeds {
		f.Add(tarBytes(f, s...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		base, dst := sandbox(t)
		img := imageOf(t, nil, rawLayer(t, data))
		limits := WithLimits(Limits{MaxFileSize: 1 << 20, MaxTotalSize: 4 << 20, MaxEntries: 1000})
		// A partial unpack follows links out of "d" in further passes.
		_ = Unpack(context.Background(), img, filepath.Join(dst, "partial"), limits, WithPaths("d"))
		_ = Unpack(context.Background(), img, dst, limits)
		assertNothingOutside(t, base)
		realDst, err := filepath.EvalSymlinks(dst)
		if err != nil {
			return // nothing unpacked
		}
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling or looping: the kernel goes nowhere
			}
			if resolved != realDst && !strings.HasPrefix(resolved, realDst+string(os.PathSeparator)) {
				t.Errorf("link %s resolves to %s, outside %s", p, resolved, realDst)
			}
			return nil
		})
	})
}

// FuzzDecodeRecIndex feeds arbitrary bytes to a layer record's index
// decoder (a record whose checksum holds may still be anything): it must
// never panic, and every stored content it accepts lies below the index.
func FuzzDecodeRecIndex(f *testing.F) {
	var seed []byte
	for _, e := range []recEntry{
		{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "configs/a.json", Mode: 0o644, Size: 3}, stored: true, off: 0},
		{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "configs/l", Linkname: "a.json", Mode: 0o777}},
		{hdr: tar.Header{Typeflag: tar.TypeDir, Name: "configs", Mode: 0o755}},
	} {
		seed = appendRecEntry(seed, &e)
	}
	f.Add(seed, int64(3))
	f.Fuzz(func(t *testing.T, data []byte, end int64) {
		entries, err := decodeRecIndex(data, end)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range entries {
			if e.stored && (e.off < 0 || e.hdr.Size < 0 || e.off+e.hdr.Size > end) {
				t.Fatalf("content at %d, %d bytes, beyond %d", e.off, e.hdr.Size, end)
			}
			again = appendRecEntry(again, &e)
		}
		if _, err := decodeRecIndex(again, end); err != nil {
			t.Fatalf("re-encoded index does not decode: %v", err)
		}
	})
}
