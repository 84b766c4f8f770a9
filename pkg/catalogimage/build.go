// Package catalogimage builds file-based catalog images without a container
// engine: the image that `opm generate dockerfile` and `docker build` would
// produce, assembled with go-containerregistry.
//
// The image is the base image (its layers and configuration) plus two
// layers: the catalog directory at /configs and the pre-built serve cache
// at /tmp/cache. The configuration gains the label
// operators.operatorframework.io.index.configs.v1=/configs, any extra
// labels, and, unless the base is "scratch", ENTRYPOINT ["/bin/opm"] and
// CMD ["serve", "/configs", "--cache-dir=/tmp/cache"].
//
// Builds are reproducible: the same base image, catalog content, labels
// and cache give the same image digest. Layer entries are written in
// directory walk order (names sorted within each directory), with a fixed
// modification time (Options.Created, by default the Unix epoch), owner
// 0:0, no user or group names, mode 0755 for directories and executable
// files and 0644 for other files. Symbolic links to regular files are
// stored as the files they point to; other links and special files are
// refused.
package catalogimage

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/fastopm/fastopm/pkg/image"
	"github.com/fastopm/fastopm/pkg/interrupt"
	"github.com/fastopm/fastopm/pkg/progress"
)

// Paths inside the image, as the generated Dockerfile has them.
const (
	ConfigsPath = "/configs"
	CachePath   = "/tmp/cache"
)

// Entrypoint and Cmd of catalog images built on an opm base image.
var (
	Entrypoint = []string{"/bin/opm"}
	Cmd        = []string{"serve", ConfigsPath, "--cache-dir=" + CachePath}
)

// CacheBuilder builds opm serve's cache for the catalog in configsDir into
// cacheDir, as `opm serve configsDir --cache-dir=cacheDir --cache-only`
// does. cacheDir does not exist yet; the builder creates it. The result
// must depend only on the catalog's content (no timestamps, no absolute
// paths), or builds are not reproducible.
type CacheBuilder func(configsDir, cacheDir string) error

// ErrNoCacheBuilder is matched by the error of a build without a serve
// cache builder.
var ErrNoCacheBuilder = errors.New("the serve cache builder is not available")

// Options describe a catalog image.
type Options struct {
	// Base is the image to build on; nil means "scratch" (an empty image:
	// no entrypoint, for OLM's extractContent mode).
	Base v1.Image
	// Dir is the catalog directory, stored at /configs.
	Dir string
	// Cache builds the serve cache stored at /tmp/cache. Required.
	Cache CacheBuilder
	// Labels are added to the image's labels after the configs label.
	Labels map[string]string
	// Created is the time recorded in the configuration, the history and
	// the layer entries; zero means the Unix epoch.
	Created time.Time
	// Platform of a scratch image; zero means linux/amd64. Images on a
	// base take the base's platform.
	Platform v1.Platform
	// TempDir holds the work files; empty means os.TempDir().
	TempDir string
	// Progress, when set, shows each step (the serve cache, each layer)
	// on a status line and sums it up when done.
	Progress *progress.Reporter
	// Zstd compresses the catalog and cache layers with zstd
	// (application/vnd.oci.image.layer.v1.tar+zstd) instead of gzip: they
	// decompress three to four times as fast, for every pull (containerd
	// 1.5, CRI-O and Docker 23 read them). It needs an OCI base image.
	Zstd bool
}

// step shows a step of a build on r's status line; the function returned
// ends it with a summary (the time taken is added).
func step(r *progress.Reporter, label string) func(summary string) {
	t := r.Start(label, 1)
	start := time.Now()
	return func(summary string) {
		t.Done(fmt.Sprintf("%s in %v", summary, time.Since(start).Round(10*time.Millisecond)))
	}
}

// sizeOf is a layer's compressed size in MB, for summaries.
func sizeOf(l *fileLayer) string { return fmt.Sprintf("%.1f MB", float64(l.size)/1e6) }

// Image is a built catalog image. Its layers live in temporary files until
// Close.
type Image struct {
	v1.Image
	dir    string
	forget func() // unregisters the removal of dir on a signal
}

// Close removes the image's temporary files; the image is unusable
// afterwards.
func (i *Image) Close() error {
	i.forget()
	return os.RemoveAll(i.dir)
}

// workDir creates a build's work directory in tempDir, removed if the
// process exits on a signal before forget is called (pkg/interrupt).
func workDir(tempDir, pattern string) (dir string, forget func(), err error) {
	dir, err = os.MkdirTemp(tempDir, pattern)
	if err != nil {
		return "", nil, fmt.Errorf("create work directory: %w", err)
	}
	return dir, interrupt.OnExit(func() { _ = os.RemoveAll(dir) }), nil
}

// Build builds the catalog image. The caller writes it (image.Write) and
// then closes it.
func Build(ctx context.Context, o Options) (_ *Image, err error) {
	if o.Cache == nil {
		return nil, fmt.Errorf("build catalog image: %w", ErrNoCacheBuilder)
	}
	st, err := os.Stat(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("catalog directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("catalog directory %q is not a directory", o.Dir)
	}
	created := imageTime(o.Created)

	work, forget, err := workDir(o.TempDir, "opm-image-build-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			forget()
			_ = os.RemoveAll(work)
		}
	}()

	base, scratch := o.Base, o.Base == nil
	if scratch {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, fmt.Errorf("base image: %w", err)
	}
	layerType := types.OCILayer
	if mt == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	if o.Zstd {
		if mt == types.DockerManifestSchema2 {
			return nil, errors.New("zstd layers need an OCI base image: this one has a Docker manifest, whose layers are gzip")
		}
		layerType = types.OCILayerZStd
	}

	cacheDir := filepath.Join(work, "cache")
	done := step(o.Progress, "building the serve cache")
	if err := o.Cache(o.Dir, cacheDir); err != nil {
		done("")
		return nil, fmt.Errorf("build serve cache: %w", err)
	}
	done("built the serve cache")
	if st, err := os.Stat(cacheDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("build serve cache: the cache builder left no directory at %s", cacheDir)
	}

	done = step(o.Progress, "writing the catalog layer")
	configsLayer, err := writeLayer(ctx, filepath.Join(work, "configs.tar.gz"), o.Dir, strings.TrimPrefix(ConfigsPath, "/"), created, layerType)
	if err != nil {
		done("")
		return nil, fmt.Errorf("catalog layer: %w", err)
	}
	done("wrote the catalog layer (" + sizeOf(configsLayer) + ")")
	// /tmp itself is left out of the layer, so that the base image's /tmp
	// (often mode 1777) keeps its mode.
	done = step(o.Progress, "writing the serve cache layer")
	cacheLayer, err := writeLayer(ctx, filepath.Join(work, "cache.tar.gz"), cacheDir, strings.TrimPrefix(CachePath, "/"), created, layerType)
	if err != nil {
		done("")
		return nil, fmt.Errorf("cache layer: %w", err)
	}
	done("wrote the serve cache layer (" + sizeOf(cacheLayer) + ")")

	baseCF, err := base.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("base image config: %w", err)
	}
	baseLayers, err := base.Layers()
	if err != nil {
		return nil, fmt.Errorf("base image layers: %w", err)
	}
	keepHistory := len(baseCF.History) > 0 || len(baseLayers) == 0
	at := v1.Time{Time: created}
	img, err := mutate.Append(base,
		mutate.Addendum{Layer: configsLayer, History: v1.History{
			// Not the directory's name: the digest depends on content only.
			Created: at, CreatedBy: "ADD catalog " + ConfigsPath + " # opm generate image",
		}},
		mutate.Addendum{Layer: cacheLayer, History: v1.History{
			Created: at, CreatedBy: "COPY " + CachePath + " " + CachePath + " # serve cache, opm generate image",
		}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = at
	if scratch {
		p := o.Platform
		if p.OS == "" {
			p = v1.Platform{OS: "linux", Architecture: "amd64"}
		}
		cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	} else {
		cf.Config.Entrypoint = append([]string(nil), Entrypoint...)
		cf.Config.Cmd = append([]string(nil), Cmd...)
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	cf.Config.Labels[image.ConfigsLabel] = ConfigsPath
	for k, v := range o.Labels {
		cf.Config.Labels[k] = v
	}
	if keepHistory {
		desc := "LABEL " + image.ConfigsLabel + "=" + ConfigsPath
		if !scratch {
			desc = `ENTRYPOINT ["/bin/opm"] CMD ["serve", "/configs", "--cache-dir=/tmp/cache"] ` + desc
		}
		cf.History = append(cf.History, v1.History{Created: at, CreatedBy: desc + " # opm generate image", EmptyLayer: true})
	} else {
		cf.History = nil
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return &Image{Image: img, dir: work, forget: forget}, nil
}

// writeLayer writes a gzip layer file at dst holding the tree at src as
// the directory prefix (a relative slash path); prefix's parents get no
// entries.
func writeLayer(ctx context.Context, dst, src, prefix string, mtime time.Time, mt types.MediaType) (*fileLayer, error) {
	return writeLayerWith(dst, mt, func(tw *tar.Writer) error { return writeTree(ctx, tw, src, prefix, mtime) })
}

// writeLayerWith writes a layer file at dst, compressed as mt says (zstd
// or gzip), holding the entries that write writes.
func writeLayerWith(dst string, mt types.MediaType, write func(*tar.Writer) error) (*fileLayer, error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	digest, diffID := sha256.New(), sha256.New()
	counter := &countingWriter{w: io.MultiWriter(f, digest)}
	// klauspost's gzip at its default level: four times as fast as
	// compress/gzip's best compression on catalogs, for 5 % more bytes;
	// or its zstd encoder, on one goroutine. Their output is fixed for a
	// given version of the library (pinned in go.mod), which keeps builds
	// reproducible.
	var zw io.WriteCloser
	if mt == types.OCILayerZStd {
		zw, err = zstd.NewWriter(counter, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	} else {
		zw, err = gzip.NewWriterLevel(counter, gzip.DefaultCompression)
	}
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(io.MultiWriter(zw, diffID))
	if err := write(tw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &fileLayer{
		path:   dst,
		digest: hashOf(digest),
		diffID: hashOf(diffID),
		size:   counter.n,
		mt:     mt,
	}, nil
}

// writeTree adds the tree at src to tw as prefix.
func writeTree(ctx context.Context, tw *tar.Writer, src, prefix string, mtime time.Time) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Follow the link: store what it points to, if a regular file.
			if fi, err = os.Stat(p); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s: symbolic link to something other than a regular file", p)
			}
		}
		hdr := &tar.Header{
			Name:    name,
			ModTime: mtime,
		}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, name+"/", 0o755
			return tw.WriteHeader(hdr)
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
			if fi.Mode()&0o111 != 0 {
				hdr.Mode = 0o755
			}
		default:
			return fmt.Errorf("%s: %s files cannot be stored in a catalog image", p, fi.Mode().Type())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		n, err := io.Copy(tw, in)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if n != hdr.Size {
			return fmt.Errorf("%s changed while the image was built", p)
		}
		return nil
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// fileLayer is a compressed layer in a file, with its digests known.
type fileLayer struct {
	path           string
	digest, diffID v1.Hash
	size           int64
	mt             types.MediaType
}

var _ v1.Layer = (*fileLayer)(nil)

func (l *fileLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *fileLayer) Size() (int64, error)                { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) { return l.mt, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }

func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	if l.mt == types.OCILayerZStd {
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, err
		}
		return &decompressCloser{Reader: zr, close: func() error { zr.Close(); return nil }, f: f}, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &decompressCloser{Reader: zr, close: zr.Close, f: f}, nil
}

type decompressCloser struct {
	io.Reader
	close func() error
	f     *os.File
}

func (g *decompressCloser) Close() error {
	zerr := g.close()
	if err := g.f.Close(); err != nil {
		return err
	}
	return zerr
}

// imageTime is the creation time recorded in an image built at t: the
// Unix epoch when t is zero (reproducible builds), UTC, whole seconds.
func imageTime(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return t.UTC().Truncate(time.Second)
}
