package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/zstd"
)

// sandbox returns base/dst, the destination, next to base/outside, a
// sentinel directory holding one file.
func sandbox(t *testing.T) (base, dst string) {
	t.Helper()
	base = t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "outside", "keep"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, filepath.Join(base, "dst")
}

// assertNothingOutside fails unless base holds only dst and the untouched
// sentinel directory.
func assertNothingOutside(t *testing.T, base string) {
	t.Helper()
	var outside []string
	for _, p := range tree(t, base) {
		if p != "dst/" && !strings.HasPrefix(p, "dst/") {
			outside = append(outside, p)
		}
	}
	want := []string{"outside/", "outside/keep"}
	if !equalStrings(outside, want) {
		t.Errorf("outside the destination: %q, want %q", outside, want)
	}
	if got := readFile(t, filepath.Join(base, "outside", "keep")); got != "keep" {
		t.Errorf("sentinel file changed: %q", got)
	}
}

func digestOf(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// chain is a chain of symbolic links, each harmless on its own, that
// leads from y to the parent of the destination: d/up -> "..", the root;
// y -> "d/up/..", the root's parent.
var chain = []ent{dir("d"), symlink("d/up", ".."), symlink("y", "d/up/..")}

func TestUnpackRejectsMaliciousLayers(t *testing.T) {
	t.Parallel()
	small := Limits{MaxFileSize: 1 << 20, MaxTotalSize: 2 << 20, MaxEntries: 10}
	tests := []struct {
		name    string
		layers  [][]ent // the last layer holds the bad entry
		limits  *Limits
		entry   string
		wantErr error
		wantMsg string
	}{
		{name: "dotdot", layers: [][]ent{{file("../outside/pwned", "x")}}, entry: "../outside/pwned", wantErr: ErrUnsafeEntry, wantMsg: "climbs out"},
		{name: "nested dotdot", layers: [][]ent{{file("a/../../outside/pwned", "x")}}, entry: "a/../../outside/pwned", wantErr: ErrUnsafeEntry},
		{name: "rooted dotdot", layers: [][]ent{{file("/../outside/pwned", "x")}}, entry: "/../outside/pwned", wantErr: ErrUnsafeEntry},
		{name: "absolute symlink", layers: [][]ent{{symlink("etc", "/etc"), file("etc/pwned", "x")}}, entry: "etc", wantErr: ErrUnsafeEntry, wantMsg: "absolute"},
		{name: "absolute symlink in earlier layer", layers: [][]ent{{symlink("a", "/etc")}, {file("a/b", "x")}}, entry: "a", wantErr: ErrUnsafeEntry},
		{name: "relative symlink out", layers: [][]ent{{symlink("x", "../outside"), file("x/pwned", "x")}}, entry: "x", wantErr: ErrUnsafeEntry, wantMsg: "leaves the destination"},
		{name: "deep relative symlink out", layers: [][]ent{{symlink("a/b/x", "../../../outside")}}, entry: "a/b/x", wantErr: ErrUnsafeEntry},
		{name: "empty symlink", layers: [][]ent{{symlink("x", "")}}, entry: "x", wantErr: ErrUnsafeEntry},
		{name: "write through link chain", layers: [][]ent{append(append([]ent{}, chain...), file("y/outside/pwned", "x"))}, entry: "y/outside/pwned", wantErr: ErrUnsafeEntry, wantMsg: "outside the destination"},
		{name: "write through link chain of earlier layer", layers: [][]ent{chain, {file("y/outside/pwned", "x")}}, entry: "y/outside/pwned", wantErr: ErrUnsafeEntry},
		{name: "hard link out", layers: [][]ent{{hardlink("h", "../outside/keep")}}, entry: "h", wantErr: ErrUnsafeEntry},
		{name: "hard link to host path", layers: [][]ent{{hardlink("h", "/etc/passwd")}}, entry: "h", wantErr: ErrUnsafeEntry, wantMsg: "does not exist"},
		{name: "hard link to missing", layers: [][]ent{{hardlink("h", "nothere")}}, entry: "h", wantErr: ErrUnsafeEntry},
		{name: "hard link to directory", layers: [][]ent{{dir("d"), hardlink("h", "d")}}, entry: "h", wantErr: ErrUnsafeEntry, wantMsg: "not a regular file"},
		{name: "hard link through link chain", layers: [][]ent{chain, {hardlink("h", "y/outside/keep")}}, entry: "h", wantErr: ErrUnsafeEntry},
		{name: "char device", layers: [][]ent{{{name: "dev/null", typ: tar.TypeChar}}}, entry: "dev/null", wantErr: ErrUnsafeEntry, wantMsg: "character device"},
		{name: "block device", layers: [][]ent{{{name: "dev/sda", typ: tar.TypeBlock}}}, entry: "dev/sda", wantErr: ErrUnsafeEntry},
		{name: "fifo", layers: [][]ent{{{name: "fifo", typ: tar.TypeFifo}}}, entry: "fifo", wantErr: ErrUnsafeEntry},
		{name: "whiteout of parent", layers: [][]ent{{file("a/.wh...", "")}}, entry: "a/.wh...", wantErr: ErrUnsafeEntry},
		{name: "file too large", layers: [][]ent{{{name: "big", size: 1<<20 + 1}}}, limits: &small, entry: "big", wantErr: ErrLimitExceeded},
		{name: "total too large", layers: [][]ent{{{name: "a", size: 1 << 20}, {name: "b", size: 1 << 20}}, {{name: "c", size: 1}}}, limits: &small, entry: "c", wantErr: ErrLimitExceeded},
		{name: "too many entries", layers: [][]ent{{file("1", ""), file("2", ""), file("3", ""), file("4", ""), file("5", ""), file("6", ""), file("7", ""), file("8", ""), file("9", ""), file("10", ""), file("11", "")}}, limits: &small, entry: "11", wantErr: ErrLimitExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, dst := sandbox(t)
			var layers []v1.Layer
			for _, ents := range tc.layers {
				layers = append(layers, layerOf(t, ents...))
			}
			bad := digestOf(t, layers[len(layers)-1])
			if tc.name == "absolute symlink in earlier layer" {
				bad = digestOf(t, layers[0])
			}
			var opts []Option
			if tc.limits != nil {
				opts = append(opts, WithLimits(*tc.limits))
			}
			err := Unpack(context.Background(), imageOf(t, nil, layers...), dst, opts...)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Unpack: %v, want %v", err, tc.wantErr)
			}
			var ee *EntryError
			if !errors.As(err, &ee) {
				t.Fatalf("Unpack: %v is not an *EntryError", err)
			}
			if ee.Layer != bad || ee.Entry != tc.entry {
				t.Errorf("EntryError names layer %s entry %q, want %s %q", ee.Layer, ee.Entry, bad, tc.entry)
			}
			for _, s := range []string{bad.String(), tc.entry, tc.wantMsg} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			assertNothingOutside(t, base)
		})
	}
}

func TestUnpackRejectsLinkChainAfterAllLayers(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	l := layerOf(t, chain...)
	err := Unpack(context.Background(), imageOf(t, nil, l), dst)
	var ee *EntryError
	if !errors.As(err, &ee) || !errors.Is(err, ErrUnsafeEntry) {
		t.Fatalf("Unpack: %v, want an unsafe *EntryError", err)
	}
	if ee.Entry != "y" || ee.Layer != digestOf(t, l) {
		t.Errorf("EntryError names %s %q, want %s \"y\"", ee.Layer, ee.Entry, digestOf(t, l))
	}
	if _, err := os.Lstat(filepath.Join(dst, "y")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the escaping link is still there: %v", err)
	}
	assertNothingOutside(t, base)
}

func TestUnpackDecompressionBomb(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	// 4 MiB of zeros compress to about 4 KiB.
	l := layerOf(t, ent{name: "bomb", size: 4 << 20})
	err := Unpack(context.Background(), imageOf(t, nil, l), dst, WithLimits(Limits{MaxFileSize: 64 << 10}))
	if !errors.Is(err, ErrLimitExceeded) {
		t.Fatalf("Unpack: %v, want ErrLimitExceeded", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "bomb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bomb written: %v", err)
	}
	assertNothingOutside(t, base)
}

func TestUnpackNotATar(t *testing.T) {
	t.Parallel()
	_, dst := sandbox(t)
	junk := make([]byte, 4096)
	rand.Read(junk)
	l := rawLayer(t, gz(t, junk))
	err := Unpack(context.Background(), imageOf(t, nil, l), dst)
	if err == nil || !strings.Contains(err.Error(), digestOf(t, l).String()) {
		t.Fatalf("Unpack: %v, want an error naming layer %s", err, digestOf(t, l))
	}
}

func TestUnpackLayersInOrderWithWhiteouts(t *testing.T) {
	t.Parallel()
	_, dst := sandbox(t)
	img := imageOf(t, nil,
		layerOf(t, dir("a"), file("a/x", "1"), file("a/y", "1"), dir("b"), file("b/z", "1"), file("c", "1"),
			dir("d"), file("d/old", "1"), dir("d/sub"), file("d/sub/old", "1")),
		layerOf(t, file("a/.wh.x", ""), file(".wh.b", ""), file("c", "2"),
			// The opaque marker comes after new content of the same layer,
			// which it must not hide.
			file("d/new", "2"), file("d/.wh..wh..opq", ""), file("d/sub/new", "2"),
			// A whiteout hides lower layers only.
			file("e", "2"), file(".wh.e", ""),
			// Whiteouts below a file have nothing to hide.
			file("c/.wh.x", ""), file("c/.wh..wh..opq", "")),
	)
	if err := Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/", "a/y", "c", "d/", "d/new", "d/sub/", "d/sub/new", "e"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q", got, want)
	}
	if got := readFile(t, filepath.Join(dst, "c")); got != "2" {
		t.Errorf("c = %q, want the upper layer's 2", got)
	}
}

func TestUnpackLinksInside(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	img := imageOf(t, nil,
		layerOf(t, dir("real"), symlink("alias", "real"), file("target", "t"), symlink("f", "target"),
			dir("x/y"), symlink("x/y/up", "../../real"), file("orig", "o"), hardlink("copy", "/orig"),
			file("/abs/file", "a")),
		// Writing under a link that stays inside is fine; an entry
		// replacing a link replaces the link, not its target.
		layerOf(t, file("alias/through", "1"), file("f", "new")),
	)
	if err := Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	want := []string{"abs/", "abs/file", "alias -> real", "copy", "f", "orig", "real/", "real/through", "target", "x/", "x/y/", "x/y/up -> ../../real"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q", got, want)
	}
	if got := readFile(t, filepath.Join(dst, "target")); got != "t" {
		t.Errorf("target = %q: written through the replaced link", got)
	}
	if got := readFile(t, filepath.Join(dst, "copy")); got != "o" {
		t.Errorf("copy = %q, want o", got)
	}
	assertNothingOutside(t, base)
}

func TestUnpackModes(t *testing.T) {
	t.Parallel()
	_, dst := sandbox(t)
	img := imageOf(t, nil, layerOf(t,
		ent{name: "ro", typ: tar.TypeDir, mode: 0o555},
		ent{name: "ro/setuid", typ: tar.TypeReg, body: "x", mode: 0o4777},
		ent{name: "ro/private", typ: tar.TypeReg, body: "x", mode: 0o400},
	))
	if err := Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"ro": os.ModeDir | 0o755, "ro/setuid": 0o755, "ro/private": 0o600} {
		fi, err := os.Lstat(filepath.Join(dst, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestUnpackPaths(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	img := imageOf(t, nil,
		layerOf(t, dir("bin"), file("bin/opm", "elf"), symlink("bin/sh", "/bin/busybox"),
			ent{name: "dev/null", typ: tar.TypeChar},
			dir("configs"), file("configs/old/catalog.json", "old"), file("configs/keep.json", "k"),
			file("configsuffix", "not me")),
		layerOf(t, file("configs/.wh.old", ""), file("configs/new/catalog.json", "new")),
	)
	if err := Unpack(context.Background(), img, dst, WithPaths("/configs")); err != nil {
		t.Fatal(err)
	}
	want := []string{"configs/", "configs/keep.json", "configs/new/", "configs/new/catalog.json"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q", got, want)
	}
	assertNothingOutside(t, base)

	// A whiteout of an ancestor removes the sub-tree.
	dst2 := filepath.Join(base, "dst", "second")
	img2 := imageOf(t, nil, layerOf(t, file("opt/configs/a", "a")), layerOf(t, file(".wh.opt", "")))
	if err := Unpack(context.Background(), img2, dst2, WithPaths("opt/configs")); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dst2); len(got) != 0 {
		t.Errorf("tree = %q, want empty", got)
	}
}

func TestUnpackContextCanceled(t *testing.T) {
	t.Parallel()
	_, dst := sandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Unpack(ctx, imageOf(t, nil, layerOf(t, file("a", "a"))), dst)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Unpack: %v, want context.Canceled", err)
	}
}

func TestCleanPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a/b": "a/b", "/a/b": "a/b", "./a/": "a", "//a//b/": "a/b", "a/../b": "b",
		"/": ".", "": ".", ".": ".", "a/..": ".",
	} {
		got, err := cleanPath(in)
		if err != nil || got != want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", "../a", "a/../..", "/../a", "a\x00b"} {
		if got, err := cleanPath(in); err == nil {
			t.Errorf("cleanPath(%q) = %q, want an error", in, got)
		}
	}
}

// Symbolic links in the requested sub-trees that point elsewhere in the
// image bring their targets along (a full unpack, as upstream does, would
// hold them), through chains of links and whiteouts, and nothing else.
func TestUnpackPathsFollowsLinksInTheImage(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	img := imageOf(t, nil,
		layerOf(t, file("data/c.json", "c"), file("data/unrelated", "u"), file("shared/pkg/a.json", "a"),
			file("deep/target.json", "t"), symlink("hop/next", "../deep/target.json"), file("other", "o"),
			file("gone/x.json", "x")),
		layerOf(t, dir("configs"), symlink("configs/c.json", "../data/c.json"), symlink("configs/pkg", "../shared/pkg"),
			symlink("configs/chain.json", "../hop/next"), symlink("configs/dangling.json", "../nowhere/x"),
			symlink("configs/gone.json", "../gone/x.json")),
		layerOf(t, file("gone/.wh.x.json", ""), file("blobs/h.json", "h"), hardlink("configs/h.json", "blobs/h.json")),
	)
	if err := Unpack(context.Background(), img, dst, WithPaths("/configs")); err != nil {
		t.Fatal(err)
	}
	want := []string{"blobs/", "blobs/h.json", "configs/", "configs/c.json -> ../data/c.json", "configs/chain.json -> ../hop/next",
		"configs/dangling.json -> ../nowhere/x", "configs/gone.json -> ../gone/x.json", "configs/h.json", "configs/pkg -> ../shared/pkg",
		"data/", "data/c.json", "deep/", "deep/target.json", "gone/", "hop/", "hop/next -> ../deep/target.json",
		"shared/", "shared/pkg/", "shared/pkg/a.json"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q\nwant %q", got, want)
	}
	for p, body := range map[string]string{"configs/c.json": "c", "configs/pkg/a.json": "a", "configs/chain.json": "t", "configs/h.json": "h"} {
		if got := readFile(t, filepath.Join(dst, p)); got != body {
			t.Errorf("%s = %q, want %q", p, got, body)
		}
	}
	assertNothingOutside(t, base)
}

// The configs directory itself may be a link to the real one.
func TestExtractCatalogConfigsIsALink(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	img := imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("opt/catalog/etcd/catalog.json", `{"schema":"olm.package","name":"etcd"}`), symlink("configs", "opt/catalog")))
	ref := reg.push(t, "linked:v1", img)
	dst := t.TempDir()
	x, err := Extract(context.Background(), ref, dst)
	if err != nil {
		t.Fatal(err)
	}
	if x.Dir != filepath.Join(dst, "opt", "catalog") {
		t.Errorf("Dir = %s, want the link's target", x.Dir)
	}
	if got := readFile(t, filepath.Join(x.Dir, "etcd", "catalog.json")); !strings.Contains(got, "etcd") {
		t.Errorf("catalog.json = %q", got)
	}
}

// The extra passes start from an empty destination: an early layer must
// not write through a link that only a later layer creates (here layer 1's
// configs/a.json would land in real/ through layer 2's configs -> real).
func TestUnpackPathsPassesStartEmpty(t *testing.T) {
	t.Parallel()
	base, dst := sandbox(t)
	img := imageOf(t, nil,
		layerOf(t, dir("real"), file("configs/a.json", "a")),
		layerOf(t, file(".wh.configs", ""), symlink("configs", "real"), file("real/b.json", "b")),
	)
	if err := Unpack(context.Background(), img, dst, WithPaths("/configs")); err != nil {
		t.Fatal(err)
	}
	want := []string{"configs -> real", "real/", "real/b.json"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q (as a full unpack gives)", got, want)
	}
	assertNothingOutside(t, base)
}

// Many links out of the selection cost a pass, not a pass per link, and
// membership does not scan the selection.
func TestUnpackPathsManyLinks(t *testing.T) {
	t.Parallel()
	_, dst := sandbox(t)
	var targets, links []ent
	for i := range 500 {
		targets = append(targets, file(fmt.Sprintf("t/%d", i), "x"))
		links = append(links, symlink(fmt.Sprintf("configs/%d", i), fmt.Sprintf("../t/%d", i)))
	}
	img := imageOf(t, nil, layerOf(t, targets...), layerOf(t, links...))
	if err := Unpack(context.Background(), img, dst, WithPaths("/configs")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "configs", "499")); got != "x" {
		t.Errorf("configs/499 = %q", got)
	}
}

// Layers compressed with gzip, zstd or not at all unpack alike, and many
// layers read in parallel are applied in order: the last write of a path
// wins and whiteouts hide only what lower layers wrote, whichever layer
// finishes reading first (a large early layer here finishes last), with a
// selection (WithPaths) and without.
func TestUnpackLayersInParallel(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	tarOf := func(ents ...ent) []byte { return tarBytes(t, ents...) }
	var zst bytes.Buffer
	zw, err := zstd.NewWriter(&zst)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(tarOf(file("configs/zstd", "z"), file("configs/.wh.gone", ""), file("other/big", big)))
	zw.Close()
	layers := []v1.Layer{
		layerOf(t, dir("configs"), file("configs/big", big), file("configs/gone", "1"), file("configs/x", "0"), file("other/y", "0")),
		static.NewLayer(zst.Bytes(), types.OCILayerZStd),
		static.NewLayer(tarOf(file("configs/plain", "p"), file("configs/x", "2")), types.OCIUncompressedLayer),
	}
	for i := 3; i < 12; i++ {
		layers = append(layers, layerOf(t, file("configs/x", fmt.Sprint(i)), file(fmt.Sprintf("configs/l%d", i), "")))
	}
	layers = append(layers, layerOf(t, file("configs/.wh.l5", ""), file("configs/l5", "back"), file("configs/.wh.l6", "")))
	for _, paths := range [][]string{nil, {"configs"}} {
		_, dst := sandbox(t)
		if err := Unpack(context.Background(), imageOf(t, nil, layers...), dst, WithPaths(paths...)); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dst, "configs", "x")); got != "11" {
			t.Errorf("paths %v: configs/x = %q, want the last layer's 11", paths, got)
		}
		for p, want := range map[string]string{"configs/big": big, "configs/zstd": "z", "configs/plain": "p", "configs/l5": "back", "configs/l3": ""} {
			if got := readFile(t, filepath.Join(dst, filepath.FromSlash(p))); got != want {
				t.Errorf("paths %v: %s = %.20q, want %.20q", paths, p, got, want)
			}
		}
		for _, p := range []string{"configs/gone", "configs/l6"} {
			if _, err := os.Lstat(filepath.Join(dst, filepath.FromSlash(p))); !os.IsNotExist(err) {
				t.Errorf("paths %v: %s was whited out, yet: %v", paths, p, err)
			}
		}
		if _, err := os.Lstat(filepath.Join(dst, "other")); (err == nil) != (paths == nil) {
			t.Errorf("paths %v: other/ present: %v", paths, err == nil)
		}
	}
}

// copyError tells a layer cut inside a file, a layer that cannot be read
// and a file that cannot be written apart.
func TestCopyError(t *testing.T) {
	corrupt := errors.New("flate: corrupt input before offset 7")
	for _, tc := range []struct {
		err, readErr error
		want         string
	}{
		{io.EOF, io.EOF, "the layer ends 3 bytes into the file of 10 bytes: unexpected EOF"},
		{io.ErrUnexpectedEOF, io.ErrUnexpectedEOF, "the layer ends 3 bytes into the file of 10 bytes: unexpected EOF"},
		{corrupt, corrupt, "read the layer, 3 bytes into the file of 10 bytes: flate: corrupt input before offset 7"},
		{errors.New("no space left on device"), nil, "write: no space left on device"},
	} {
		if got := copyError(3, 10, tc.err, tc.readErr).Error(); got != tc.want {
			t.Errorf("copyError(%v, %v) = %q, want %q", tc.err, tc.readErr, got, tc.want)
		}
	}
}
