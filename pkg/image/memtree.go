package image

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastopm/fastopm/pkg/scratch"
)

// A catalog image's catalog is a directory of directories and regular
// files. ExtractFS keeps it in memory rather than on disk: a memTree holds
// the unpacked tree (its files' content in the layers' scratch storage,
// unlinked temporary files, each closed once the tree holds none of its
// layer's files), and memFS reads it. Writing a catalog of a few hundred
// files to disk and removing it afterwards costs more time than reading it
// (each file's inode is created, then evicted, on the critical path); a
// tree in memory costs neither.
//
// memTree supports what catalogs hold and no more: anything else a layer
// does to the extracted sub-tree (a symbolic or hard link, a path through
// something that is not a directory, a name longer than a file system
// allows) fails with errNeedsDisk, and the extraction is done again on
// disk, where the unpacker handles, judges and reports everything.

// errNeedsDisk stops an unpack into a memTree that met something only a
// directory on disk handles.
var errNeedsDisk = errors.New("the image needs unpacking to disk")

// maxNameLen is the longest name of a file or directory on Linux file
// systems (NAME_MAX): a memTree leaves a longer one to the disk, which
// refuses it, as it refuses the layer when a container runs the image.
const maxNameLen = 255

// memNode is a directory or a regular file of a memTree.
type memNode struct {
	mode     fs.FileMode         // type and permission bits
	children map[string]*memNode // a directory's entries
	f        *scratch.File       // a file's content: size bytes at off
	off      int64
	size     int64
}

func (n *memNode) isDir() bool { return n.mode.IsDir() }

// memTree is a destination in memory. The unpacker applies one layer at a
// time, so only the storage bookkeeping needs a lock.
type memTree struct {
	root memNode
	// stream, when set, is told of the regular files under prefix (the
	// catalog directory, "." for all) as their content is read.
	stream func(StreamedFile)
	prefix string

	mu     sync.Mutex
	stores map[*scratch.File]*storeUse // the scratch storage files' content lives in
}

// storeUse is how a layer's scratch storage is used: it is closed once its
// layer is done and the tree holds none of its files.
type storeUse struct {
	files int  // the tree's files whose content it holds
	done  bool // its layer is applied
}

func newMemTree() *memTree {
	return &memTree{root: memNode{mode: fs.ModeDir | 0o755, children: map[string]*memNode{}}, stores: map[*scratch.File]*storeUse{}}
}

// close releases the storage of the files' content.
func (t *memTree) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for f := range t.stores {
		f.Close()
	}
	t.stores = nil
}

// keep counts a file of the tree whose content is in f.
func (t *memTree) keep(f *scratch.File) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.stores[f]
	if u == nil {
		u = &storeUse{}
		t.stores[f] = u
	}
	u.files++
}

// drop uncounts the files of the sub-tree n, removed from the tree, and
// closes the storage of a layer done that the tree no longer uses: a
// catalog that a later layer replaces does not keep the old one's bytes.
// A reader of StreamedFile.Content from there gets an error.
func (t *memTree) drop(n *memNode) {
	if n.isDir() {
		for _, c := range n.children {
			t.drop(c)
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.stores[n.f]; u != nil {
		if u.files--; u.files == 0 && u.done {
			n.f.Close()
			delete(t.stores, n.f)
		}
	}
}

func (t *memTree) release(ls *layerStore) {
	t.mu.Lock()
	u := t.stores[ls.f]
	if u != nil {
		u.done = true
		if u.files == 0 {
			delete(t.stores, ls.f)
			u = nil
		}
	}
	t.mu.Unlock()
	if u == nil {
		ls.close()
	}
}

func (t *memTree) stored(name string, f *scratch.File, off, n int64) {
	if t.stream == nil {
		return
	}
	rel := name
	if t.prefix != "." {
		var ok bool
		if rel, ok = strings.CutPrefix(name, t.prefix+"/"); !ok {
			return
		}
	}
	t.stream(StreamedFile{Path: rel, Size: n, Content: io.NewSectionReader(f, off, n), ID: ContentID{f: f, off: off, n: n}})
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// lookup finds name; the error wraps fs.ErrNotExist when it does not
// exist, syscall.ENOTDIR when a component before the last is not a
// directory.
func (t *memTree) lookup(op, name string) (*memNode, error) {
	return walkNodes(&t.root, op, name, syscall.ENOENT)
}

// walkNodes finds name below n, a missing component reported as notExist.
func walkNodes(n *memNode, op, name string, notExist error) (*memNode, error) {
	if name == "." {
		return n, nil
	}
	for c := range strings.SplitSeq(name, "/") {
		if !n.isDir() {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		next, ok := n.children[c]
		if !ok {
			return nil, pathErr(op, name, notExist)
		}
		n = next
	}
	return n, nil
}

// parentDir returns the directory that holds name, which must exist.
func (t *memTree) parentDir(name string) (*memNode, string, error) {
	dir, base := path.Split(name)
	p, err := t.lookup("open", strings.TrimSuffix(dir, "/"))
	if dir == "" {
		p, err = &t.root, nil
	}
	if err != nil || !p.isDir() {
		return nil, "", errNeedsDisk
	}
	return p, base, nil
}

func (t *memTree) MkdirAll(name string, perm fs.FileMode) error {
	n := &t.root
	for c := range strings.SplitSeq(name, "/") {
		next, ok := n.children[c]
		if !ok {
			if len(c) > maxNameLen {
				return errNeedsDisk
			}
			next = &memNode{mode: fs.ModeDir | perm&fs.ModePerm, children: map[string]*memNode{}}
			n.children[c] = next
		}
		if !next.isDir() {
			return errNeedsDisk
		}
		n = next
	}
	return nil
}

func (t *memTree) Mkdir(name string, perm fs.FileMode) error {
	p, base, err := t.parentDir(name)
	if err != nil {
		return err
	}
	if _, ok := p.children[base]; ok || len(base) > maxNameLen {
		return errNeedsDisk
	}
	p.children[base] = &memNode{mode: fs.ModeDir | perm&fs.ModePerm, children: map[string]*memNode{}}
	return nil
}

func (t *memTree) Chmod(name string, mode fs.FileMode) error {
	n, err := t.lookup("chmod", name)
	if err != nil {
		return errNeedsDisk
	}
	n.mode = n.mode&fs.ModeType | mode&fs.ModePerm
	return nil
}

func (t *memTree) Lstat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return memInfo{name: path.Base(name), n: n}, nil
}

func (t *memTree) RemoveAll(name string) error {
	if _, err := t.lookup("unlinkat", name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // as os.Root.RemoveAll
		}
		return err
	}
	p, base, err := t.parentDir(name)
	if err != nil {
		return err
	}
	if n := p.children[base]; n != nil {
		delete(p.children, base)
		t.drop(n)
	}
	return nil
}

// Remove, Symlink, Readlink, Link: a memTree holds no links.
func (t *memTree) Remove(string) error                { return errNeedsDisk }
func (t *memTree) Symlink(string, string) error       { return errNeedsDisk }
func (t *memTree) Readlink(string) (string, error)    { return "", errNeedsDisk }
func (t *memTree) Link(oldname, newname string) error { return errNeedsDisk }

func (t *memTree) writeFile(name string, r io.Reader, n int64, ls *layerStore) (int64, error) {
	p, base, err := t.parentDir(name)
	if err != nil {
		return 0, err
	}
	if _, ok := p.children[base]; ok || len(base) > maxNameLen {
		return 0, errNeedsDisk
	}
	node := &memNode{mode: 0o600, size: n}
	if s, ok := r.(*spooled); ok && s.Size() == n {
		// Kept before the layer's turn: it stays where it is.
		node.f, node.off = s.f, s.off
	} else {
		store := ls.get()
		node.f, node.off = store, store.Size()
		lr := &layerReader{r: r}
		w, err := io.CopyN(appender{store}, lr, n)
		if err != nil {
			return w, copyError(w, n, err, lr.err)
		}
		t.stored(name, node.f, node.off, n)
	}
	t.keep(node.f)
	p.children[base] = node
	return n, nil
}

func (t *memTree) readDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, pathErr("readdirent", name, errNotDir)
	}
	return n.entries(), nil
}

// entries lists a directory, sorted by name.
func (n *memNode) entries() []fs.DirEntry {
	out := make([]fs.DirEntry, 0, len(n.children))
	for name, c := range n.children {
		out = append(out, memInfo{name: name, n: c})
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// memInfo describes a node: its fs.FileInfo and fs.DirEntry.
type memInfo struct {
	name string
	n    *memNode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.n.size }
func (i memInfo) Mode() fs.FileMode  { return i.n.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.n.isDir() }
func (i memInfo) Sys() any {
	if i.n.isDir() {
		return nil
	}
	return ContentID{f: i.n.f, off: i.n.off, n: i.n.size}
}
func (i memInfo) Type() fs.FileMode          { return i.n.mode.Type() }
func (i memInfo) Info() (fs.FileInfo, error) { return i, nil }

// memFS reads the sub-tree of a memTree rooted at a directory. Its files
// are io.ReaderAt and io.Seeker, its directories fs.ReadDirFile.
type memFS struct {
	root *memNode
}

var (
	_ fs.ReadDirFS = memFS{}
	_ fs.StatFS    = memFS{}
)

func (m memFS) node(op, name string) (*memNode, error) {
	if !fs.ValidPath(name) {
		return nil, pathErr(op, name, fs.ErrInvalid)
	}
	return walkNodes(m.root, op, name, fs.ErrNotExist)
}

// Open opens name.
func (m memFS) Open(name string) (fs.File, error) {
	n, err := m.node("open", name)
	if err != nil {
		return nil, err
	}
	info := memInfo{name: path.Base(name), n: n}
	if n.isDir() {
		return &memDir{info: info}, nil
	}
	return &memFile{info: info, SectionReader: io.NewSectionReader(n.f, n.off, n.size)}, nil
}

// Stat describes name.
func (m memFS) Stat(name string) (fs.FileInfo, error) {
	n, err := m.node("stat", name)
	if err != nil {
		return nil, err
	}
	return memInfo{name: path.Base(name), n: n}, nil
}

// ReadDir lists the directory name, sorted by name.
func (m memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := m.node("open", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, pathErr("readdirent", name, syscall.ENOTDIR)
	}
	return n.entries(), nil
}

type memFile struct {
	info memInfo
	*io.SectionReader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	info memInfo
	ents []fs.DirEntry
	read bool
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Close() error               { return nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, pathErr("read", d.info.name, syscall.EISDIR)
}

func (d *memDir) ReadDir(count int) ([]fs.DirEntry, error) {
	if !d.read {
		d.ents, d.read = d.info.n.entries(), true
	}
	if count <= 0 {
		out := d.ents
		d.ents = nil
		return out, nil
	}
	if len(d.ents) == 0 {
		return nil, io.EOF
	}
	k := min(count, len(d.ents))
	out := d.ents[:k:k]
	d.ents = d.ents[k:]
	return out, nil
}
