//go:build !opm_lean

package action

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/diskcache"
	"github.com/fastopm/fastopm/pkg/version"
)

// CatalogCache keeps what loading a catalog for the install resolver
// builds (install.Load: the upgrade graph checked against upstream's rules,
// the bundles' properties), as snapshots (install.AppendSnapshot), in a
// directory that opm processes share (pkg/diskcache: bounded in size, the
// least recently used removed first). A snapshot is keyed by the catalog's
// fingerprint (pkg/cache, as serve's cache: the path, size and XXH64 of
// every file the loader reads and of every .indexignore) and by the opm
// build that wrote it, so a catalog that changed, in any file, or a newer
// opm, finds no snapshot and loads the catalog again; a snapshot is checked
// (its checksum and every length) before use, and a damaged one is removed
// and written again. A catalog seen before is then read once, to compute its
// fingerprint, and not parsed: `opm alpha query install` over the same
// catalogs answers in a fraction of the time.
//
// Serve's own cache does not serve here: it holds one catalog's gRPC
// answers, where the resolver needs each bundle's properties as its blob
// has them and where it is in the catalog.
type CatalogCache struct {
	dir *diskcache.Dir
}

// DefaultCatalogCacheMaxSize bounds a CatalogCache unless told otherwise:
// the snapshots of the largest public catalogs take tens of megabytes.
const DefaultCatalogCacheMaxSize = 1 << 30

// catalogCacheSub is where the snapshots live in the directory.
const catalogCacheSub = "install"

// OpenCatalogCache opens the catalog cache at dir (created if missing),
// bounded to max bytes (0: DefaultCatalogCacheMaxSize; negative: no bound).
func OpenCatalogCache(dir string, max int64) (*CatalogCache, error) {
	if max == 0 {
		max = DefaultCatalogCacheMaxSize
	}
	d, err := diskcache.Open(dir, max, catalogCacheSub)
	if err != nil {
		return nil, fmt.Errorf("catalog cache: %w", err)
	}
	return &CatalogCache{dir: d}, nil
}

// LoadInstall is install.Load through the cache (a nil cache loads).
func (c *CatalogCache) LoadInstall(ctx context.Context, fsys fs.FS, name string, priority int, opts ...declcfg.WalkOption) (*install.Catalog, error) {
	if c == nil {
		cat, _, err := install.Load(ctx, fsys, name, priority, opts...)
		return cat, err
	}
	fp, err := cache.ComputeFingerprint(ctx, fsys, opts...)
	if err != nil {
		// A catalog the loader refuses: its errors are the load's.
		cat, _, err := install.Load(ctx, fsys, name, priority, opts...)
		return cat, err
	}
	key := snapshotKey(fp)
	p := c.dir.Path(catalogCacheSub, key)
	if data, err := os.ReadFile(p); err == nil {
		cat, err := install.DecodeSnapshot(data, name, priority)
		if err == nil {
			c.dir.Touch(p)
			return cat, nil
		}
		if errors.Is(err, install.ErrBadSnapshot) {
			_ = os.Remove(p) // written again below
		}
	}
	cat, _, err := install.Load(ctx, fsys, name, priority, opts...)
	if err != nil {
		return nil, err
	}
	// Only what was read from the content the fingerprint names is kept:
	// a catalog that changed while it was read is not.
	if fp.Check(ctx, fsys, "", opts...) == nil {
		c.store(key, cat.AppendSnapshot(nil)) // best effort: the answer is there
	}
	return cat, nil
}

// store writes a snapshot into the cache.
func (c *CatalogCache) store(key string, snap []byte) {
	f, err := c.dir.Create(catalogCacheSub, key)
	if err != nil {
		return
	}
	_, err = f.Write(snap)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return
	}
	_ = c.dir.Commit(f.Name(), catalogCacheSub, key)
}

// executableStamp tells this opm executable from another built with the
// same version stamp (a development build: "unknown" commit): its size and
// modification time. Another stamp finds no snapshot, at worst loading a
// catalog once more.
var executableStamp = sync.OnceValue(func() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
})

// snapshotKey names the snapshot of the catalog of fingerprint fp written
// by this opm build.
func snapshotKey(fp cache.Fingerprint) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{"opm install snapshot", install.SnapshotFormat, version.Version, version.GitCommit, executableStamp()} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, f := range fp.Files {
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Path)))
		h.Write(n[:])
		h.Write([]byte(f.Path))
		binary.BigEndian.PutUint64(n[:], uint64(f.Size))
		h.Write(n[:])
		h.Write(f.Sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
