package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Limits bounds what Unpack writes, against decompression bombs: a few
// kilobytes of gzip can expand to terabytes. Sizes count the decompressed
// bytes of regular files that are written (entries outside WithPaths are
// read past and do not count).
type Limits struct {
	MaxFileSize  int64 // bytes of one regular file
	MaxTotalSize int64 // bytes of all regular files together
	MaxEntries   int   // files, directories and links written
}

// DefaultLimits are the limits Unpack applies unless WithLimits says
// otherwise. The largest public catalogs hold about 500 MB of FBC (the
// biggest single files a few tens of MB) plus a serve cache of similar
// size, so these leave ample headroom while a bomb still stops long
// before it fills a disk.
var DefaultLimits = Limits{
	MaxFileSize:  1 << 30, // 1 GiB
	MaxTotalSize: 4 << 30, // 4 GiB
	MaxEntries:   1_000_000,
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize == 0 {
		l.MaxFileSize = DefaultLimits.MaxFileSize
	}
	if l.MaxTotalSize == 0 {
		l.MaxTotalSize = DefaultLimits.MaxTotalSize
	}
	if l.MaxEntries == 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	return l
}

var (
	// ErrUnsafeEntry is matched (errors.Is) by errors about layer entries
	// that Unpack refuses to write: paths or links leaving the
	// destination, devices, FIFOs, unknown entry types.
	ErrUnsafeEntry = errors.New("unsafe layer entry")
	// ErrLimitExceeded is matched by errors about content beyond the
	// Limits.
	ErrLimitExceeded = errors.New("size limit exceeded")
)

func errUnsafe(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafeEntry, fmt.Sprintf(format, args...))
}

// EntryError reports a layer entry that Unpack refused or failed to write.
type EntryError struct {
	Image string  // the image reference, or its digest
	Layer v1.Hash // the digest of the layer holding the entry
	Entry string  // the entry's name as the layer spells it
	Err   error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("image %s: layer %s: entry %q: %v", e.Image, e.Layer, e.Entry, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Unpack writes the filesystem of img, its layers applied in order, into
// dst, which is created if missing. See the package documentation for
// what it refuses; a refused entry stops Unpack with an *EntryError, and
// dst is then left partly written (but never with anything outside it, nor
// a link leading outside it).
//
// Options used: WithPaths, WithLimits.
func Unpack(ctx context.Context, img v1.Image, dst string, opts ...Option) error {
	o, err := makeOptions(opts...)
	if err != nil {
		return err
	}
	return o.unpack(ctx, img, dst)
}

// maxLinkPasses bounds how many times a partial unpack goes through the
// layers again to fetch what symbolic links in the requested sub-trees
// point to elsewhere in the image.
const maxLinkPasses = 8

func (o *options) unpack(ctx context.Context, img v1.Image, dst string) error {
	imgName := imageName(img)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("image %s: create destination: %w", imgName, err)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("image %s: open destination: %w", imgName, err)
	}
	defer root.Close()

	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("image %s: list layers: %w", imgName, err)
	}
	// A partial unpack (WithPaths) may hold symbolic links to files
	// elsewhere in the image, as in a full one (upstream unpacks
	// everything): their targets join the selection and the layers are
	// applied again, from an empty destination, so that the result is what
	// a single pass over the larger selection gives. Only a destination
	// that starts empty is emptied: otherwise links are not followed.
	ents, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("image %s: read destination: %w", imgName, err)
	}
	fresh := len(ents) == 0
	sel := newSelection(o.paths)
	records, err := o.layerRecords()
	if err != nil {
		return err
	}
	for pass := 1; ; pass++ {
		u := &unpacker{dest: diskDest{root}, limits: o.limits, sel: sel, links: map[string]v1.Hash{}, records: records}
		if err := u.applyAll(ctx, layers); err != nil {
			return applyError(imgName, err)
		}
		extra := u.linkTargetsOutside()
		if len(extra) == 0 || !fresh {
			return nil
		}
		if pass == maxLinkPasses {
			return fmt.Errorf("image %s: links in %s still lead to paths outside them after %d passes: %s",
				imgName, strings.Join(o.paths, ", "), pass, strings.Join(extra[:min(len(extra), 5)], ", "))
		}
		for _, p := range extra {
			sel.add(p)
		}
		if err := emptyRoot(root); err != nil {
			return fmt.Errorf("image %s: %w", imgName, err)
		}
	}
}

// applyError names the image in an error of applying its layers: an
// *EntryError carries it, any other error is prefixed with it.
func applyError(imgName string, err error) error {
	var ee *EntryError
	if errors.As(err, &ee) {
		ee.Image = imgName
		return ee
	}
	return fmt.Errorf("image %s: %w", imgName, err)
}

// unpackMem is unpack into a tree in memory, which refuses what only a
// directory on disk handles (links) with errNeedsDisk.
func (o *options) unpackMem(ctx context.Context, img v1.Image, t *memTree) error {
	imgName := imageName(img)
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("image %s: list layers: %w", imgName, err)
	}
	records, err := o.layerRecords()
	if err != nil {
		return err
	}
	u := &unpacker{dest: t, limits: o.limits, sel: newSelection(o.paths), links: map[string]v1.Hash{}, records: records}
	if err := u.applyAll(ctx, layers); err != nil {
		return applyError(imgName, err)
	}
	if len(u.linkTargetsOutside()) > 0 {
		return errNeedsDisk
	}
	return nil
}

// emptyRoot removes everything inside root.
func emptyRoot(root *os.Root) error {
	f, err := root.Open(".")
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := root.RemoveAll(n); err != nil {
			return err
		}
	}
	return nil
}

// applyAll applies the layers in order (reading them in parallel,
// layers.go) and checks the links written.
func (u *unpacker) applyAll(ctx context.Context, layers []v1.Layer) error {
	if err := u.applyParallel(ctx, layers); err != nil {
		// Leave no link leading out, even after a failure.
		u.checkLinks()
		return err
	}
	if ee := u.checkLinks(); ee != nil {
		return ee
	}
	return nil
}

// linkTargetsOutside returns, sorted, the paths that links of a partial
// unpack lead to and that are missing because they lie outside the
// requested sub-trees.
func (u *unpacker) linkTargetsOutside() []string {
	if u.sel == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range u.linkedOutside {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for n := range u.links {
		fi, err := u.dest.Lstat(n)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		res, rest, leaves, err := u.resolve(n)
		if err != nil || leaves || len(rest) == 0 {
			continue
		}
		missing := path.Join(append([]string{res}, rest...)...)
		if missing == ".." || strings.HasPrefix(missing, "../") || u.selected(missing) || seen[missing] {
			continue
		}
		seen[missing] = true
		out = append(out, missing)
	}
	sort.Strings(out)
	return out
}

// unpacker applies layers to a destination.
type unpacker struct {
	dest   destination
	limits Limits
	sel    *selection // the sub-trees to extract; nil: all

	entries int
	total   int64
	// links records every symlink written, with the layer that wrote it,
	// for the final check.
	links map[string]v1.Hash
	// linkedOutside holds the targets of hard links in the requested
	// sub-trees that lie outside them (the links were not written).
	linkedOutside []string
	// parentOK caches the last parent directory known to exist.
	parentOK string
	// touched holds the paths the current layer wrote, with their
	// ancestors: an opaque directory hides only lower layers' content.
	touched map[string]struct{}
	layer   v1.Hash     // the layer being applied
	store   *layerStore // its scratch storage
	// records, when set, keeps what each layer yields (records.go).
	records *layerRecords
}

const (
	whiteoutPrefix = ".wh."
	whiteoutMeta   = ".wh..wh."
	whiteoutOpaque = ".wh..wh..opq"
)

// entry applies one tar entry.
func (u *unpacker) entry(tr io.Reader, hdr *tar.Header) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	name, err := cleanPath(hdr.Name)
	if err != nil {
		return err
	}
	if name == "." {
		return nil // the root itself
	}
	dir, base := path.Dir(name), path.Base(name)

	switch {
	case base == whiteoutOpaque:
		if !u.affects(dir) {
			return nil
		}
		u.parentOK = ""
		return u.opaque(dir)
	case strings.HasPrefix(base, whiteoutMeta):
		return nil // AUFS bookkeeping (.wh..wh.plnk and the like)
	case strings.HasPrefix(base, whiteoutPrefix):
		hidden := base[len(whiteoutPrefix):]
		if hidden == "." || hidden == ".." {
			return errUnsafe("whiteout of %q", hidden)
		}
		target := path.Join(dir, hidden)
		if !u.affects(target) {
			return nil
		}
		if _, ok := u.touched[target]; ok {
			return nil // a whiteout hides lower layers only
		}
		u.parentOK = ""
		if err := u.dest.RemoveAll(target); err != nil && !nothingThere(err) {
			return fmt.Errorf("apply whiteout: %w", err)
		}
		return nil
	}

	if !u.selected(name) {
		return nil
	}
	u.entries++
	if u.entries > u.limits.MaxEntries {
		return fmt.Errorf("%w: more than %d entries", ErrLimitExceeded, u.limits.MaxEntries)
	}
	for p := name; p != "."; p = path.Dir(p) {
		if _, ok := u.touched[p]; ok {
			break
		}
		u.touched[p] = struct{}{}
	}

	switch hdr.Typeflag {
	case tar.TypeDir:
		return u.dir(name, hdr)
	//lint:ignore SA1019 TypeRegA ('\x00') still appears in layers written by old tools.
	case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
		return u.file(name, hdr, tr)
	case tar.TypeSymlink:
		return u.symlink(name, hdr.Linkname)
	case tar.TypeLink:
		return u.hardlink(name, hdr.Linkname)
	case tar.TypeChar:
		return errUnsafe("character device")
	case tar.TypeBlock:
		return errUnsafe("block device")
	case tar.TypeFifo:
		return errUnsafe("FIFO")
	default:
		return errUnsafe("unsupported entry type %q", hdr.Typeflag)
	}
}

// selection is the set of sub-trees a partial unpack extracts, with their
// ancestors: membership costs the depth of a path, not the number of
// sub-trees (link targets can add many).
type selection struct {
	roots map[string]bool // the sub-trees, clean relative paths
	above map[string]bool // every proper ancestor of a sub-tree but "."
}

// newSelection returns the selection of paths; nil (everything) for nil.
func newSelection(paths []string) *selection {
	if paths == nil {
		return nil
	}
	s := &selection{roots: map[string]bool{}, above: map[string]bool{}}
	for _, p := range paths {
		s.add(p)
	}
	return s
}

func (s *selection) add(p string) {
	s.roots[p] = true
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		s.above[d] = true
	}
}

// selected reports whether name is inside one of the requested sub-trees.
func (u *unpacker) selected(name string) bool {
	if u.sel == nil {
		return true
	}
	for p := name; p != "."; p = path.Dir(p) {
		if u.sel.roots[p] {
			return true
		}
	}
	return false
}

// affects reports whether removing name may remove selected content:
// name is selected, or an ancestor of a requested sub-tree.
func (u *unpacker) affects(name string) bool {
	return u.sel == nil || name == "." || u.selected(name) || u.sel.above[name]
}

// parent makes sure the parent directory of name exists.
func (u *unpacker) parent(name string) error {
	dir := path.Dir(name)
	if dir == "." || dir == u.parentOK {
		return nil
	}
	if err := u.dest.MkdirAll(dir, 0o755); err != nil {
		if out, _ := u.leavesRoot(dir); out {
			return errUnsafe("parent directory %s leads outside the destination through a symbolic link", dir)
		}
		return fmt.Errorf("create parent directory: %w", err)
	}
	u.parentOK = dir
	return nil
}

// clear removes whatever is at name, unless it is a directory and keepDir
// is set; it reports whether a directory was kept.
func (u *unpacker) clear(name string, keepDir bool) (bool, error) {
	fi, err := u.dest.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if keepDir && fi.IsDir() {
		return true, nil
	}
	u.parentOK = "" // it may have been, or led to, the cached parent
	return false, u.dest.RemoveAll(name)
}

func (u *unpacker) dir(name string, hdr *tar.Header) error {
	if err := u.parent(name); err != nil {
		return err
	}
	mode := fs.FileMode(hdr.Mode)&0o755 | 0o700
	kept, err := u.clear(name, true)
	if err != nil {
		return err
	}
	if !kept {
		if err := u.dest.Mkdir(name, mode); err != nil {
			return err
		}
	}
	return u.dest.Chmod(name, mode)
}

func (u *unpacker) file(name string, hdr *tar.Header, r io.Reader) error {
	switch {
	case hdr.Size < 0:
		return fmt.Errorf("negative size %d", hdr.Size)
	case hdr.Size > u.limits.MaxFileSize:
		return fmt.Errorf("%w: file is %d bytes, more than the %d allowed for one file", ErrLimitExceeded, hdr.Size, u.limits.MaxFileSize)
	case hdr.Size > u.limits.MaxTotalSize-u.total:
		return fmt.Errorf("%w: file of %d bytes takes the image past the %d bytes allowed in total", ErrLimitExceeded, hdr.Size, u.limits.MaxTotalSize)
	}
	if err := u.parent(name); err != nil {
		return err
	}
	if _, err := u.clear(name, false); err != nil {
		return err
	}
	n, err := u.dest.writeFile(name, r, hdr.Size, u.store)
	u.total += n
	if err != nil {
		return err
	}
	return u.dest.Chmod(name, fs.FileMode(hdr.Mode)&0o755|0o600)
}

func (u *unpacker) symlink(name, target string) error {
	switch {
	case target == "":
		return errUnsafe("symbolic link with an empty target")
	case strings.IndexByte(target, 0) >= 0:
		return errUnsafe("symbolic link target contains a NUL byte")
	case path.IsAbs(target):
		return errUnsafe("symbolic link to absolute path %q", target)
	}
	if j := path.Join(path.Dir(name), target); j == ".." || strings.HasPrefix(j, "../") {
		return errUnsafe("symbolic link to %q leaves the destination", target)
	}
	if err := u.parent(name); err != nil {
		return err
	}
	if _, err := u.clear(name, false); err != nil {
		return err
	}
	if err := u.dest.Symlink(target, name); err != nil {
		return err
	}
	u.links[name] = u.layer
	return nil
}

func (u *unpacker) hardlink(name, linkname string) error {
	target, err := cleanPath(linkname)
	if err != nil {
		return errUnsafe("hard link to %q leaves the destination", linkname)
	}
	if target == "." || target == name {
		return errUnsafe("hard link to %q", linkname)
	}
	fi, err := u.dest.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !u.selected(target) {
			// Its target was not unpacked: the next pass will.
			u.linkedOutside = append(u.linkedOutside, target)
			return nil
		}
		return errUnsafe("hard link to %q, which does not exist", linkname)
	case err != nil:
		if out, _ := u.leavesRoot(target); out {
			return errUnsafe("hard link to %q leaves the destination", linkname)
		}
		return err
	case !fi.Mode().IsRegular():
		return errUnsafe("hard link to %q, which is not a regular file", linkname)
	}
	if err := u.parent(name); err != nil {
		return err
	}
	if _, err := u.clear(name, false); err != nil {
		return err
	}
	return u.dest.Link(target, name)
}

// opaque empties the directory dir of what lower layers put there.
func (u *unpacker) opaque(dir string) error {
	ents, err := u.dest.readDir(dir)
	if nothingThere(err) || errors.Is(err, errNotDir) {
		return nil // nothing to hide
	}
	if err != nil {
		return fmt.Errorf("apply opaque whiteout: %w", err)
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		if _, ok := u.touched[p]; ok {
			if e.IsDir() {
				if err := u.opaque(p); err != nil {
					return err
				}
			}
			continue
		}
		if err := u.dest.RemoveAll(p); err != nil {
			return fmt.Errorf("apply opaque whiteout: %w", err)
		}
	}
	return nil
}

// checkLinks resolves every symbolic link written, once all layers are
// applied (or one failed), removes those that lead outside the
// destination (a chain of links, each harmless on its own, may) and
// reports the first.
func (u *unpacker) checkLinks() *EntryError {
	names := make([]string, 0, len(u.links))
	for n := range u.links {
		names = append(names, n)
	}
	sort.Strings(names)
	var first *EntryError
	for _, n := range names {
		fi, err := u.dest.Lstat(n)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue // replaced or removed by a later layer
		}
		out, err := u.leavesRoot(n)
		if err == nil && !out {
			continue
		}
		_ = u.dest.Remove(n)
		if err == nil {
			err = errUnsafe("symbolic link resolves outside the destination")
		}
		if first == nil {
			first = &EntryError{Layer: u.links[n], Entry: n, Err: err}
		}
	}
	return first
}

// nothingThere reports whether err says that a path does not exist, or
// goes through something that is not a directory: whiteouts of such paths
// have nothing to hide.
func nothingThere(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// resolveIn resolves the clean relative path rel through the symbolic
// links of the unpacked tree at dst; found is false when something on the
// way does not exist.
func resolveIn(dst, rel string) (res string, found bool, err error) {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return "", false, err
	}
	defer root.Close()
	res, rest, leaves, err := (&unpacker{dest: diskDest{root}}).resolve(rel)
	switch {
	case err != nil:
		return "", false, err
	case leaves:
		return "", false, errors.New("resolves outside the image")
	}
	return res, len(rest) == 0, nil
}

// maxLinkHops is how many symbolic links a path may go through, as on
// Linux.
const maxLinkHops = 40

// leavesRoot resolves the clean relative path p the way the kernel would,
// following symbolic links, and reports whether that leads outside the
// destination. Resolution stops, harmlessly, at the first component that
// does not exist or is not a directory.
func (u *unpacker) leavesRoot(p string) (bool, error) {
	_, _, leaves, err := u.resolve(p)
	return leaves, err
}

// resolve follows the clean relative path p through symbolic links in the
// destination as the kernel would. It returns the resolved path of the
// part that exists (res, "." for the root), the components after it when
// one does not exist or is not a directory (rest), and whether resolution
// leads outside the destination.
func (u *unpacker) resolve(p string) (res string, rest []string, leaves bool, err error) {
	rest = strings.Split(p, "/")
	var cur []string
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		switch c {
		case "", ".":
			rest = rest[1:]
			continue
		case "..":
			if len(cur) == 0 {
				return "", nil, true, nil
			}
			cur = cur[:len(cur)-1]
			rest = rest[1:]
			continue
		}
		next := strings.Join(append(cur[:len(cur):len(cur)], c), "/")
		fi, err := u.dest.Lstat(next)
		if err != nil {
			break
		}
		rest = rest[1:]
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, c)
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", nil, false, errUnsafe("more than %d levels of symbolic links", maxLinkHops)
		}
		t, err := u.dest.Readlink(next)
		if err != nil {
			return "", nil, false, err
		}
		if path.IsAbs(t) {
			return "", nil, true, nil
		}
		rest = append(strings.Split(t, "/"), rest...)
	}
	res = strings.Join(cur, "/")
	if res == "" {
		res = "."
	}
	return res, rest, false, nil
}

// ctxReader fails reads once ctx is done, so that a long layer stops
// promptly.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
