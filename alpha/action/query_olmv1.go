//go:build !opm_lean

package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/olmv1"
)

// Catalogs are catalogs loaded once for both OLMs: OLM v0's view
// (alpha/install), OLM v1's (alpha/olmv1) and the upgrade-graph model of
// each, in the order given. OLM v1's bundles read their manifests from
// the catalogs' files when first asked for: Close the Catalogs after the
// last question.
type Catalogs struct {
	V0     []*install.Catalog
	V1     []*olmv1.Catalog
	Models []model.Model

	mu     sync.Mutex
	closes []func() error
}

// Close releases the catalogs' files (an image's unpacked tree); OLM v1's
// bundles whose manifests were not read cannot read them any more.
func (c *Catalogs) Close() error {
	c.mu.Lock()
	closes := c.closes
	c.closes = nil
	c.mu.Unlock()
	var errs []error
	for _, f := range closes {
		errs = append(errs, f())
	}
	return errors.Join(errs...)
}

// LoadCatalogs reads the catalogs in parallel, each in one pass feeding
// both OLMs' views. Each must be valid (upstream's rules; opm serve
// refuses the others).
func LoadCatalogs(ctx context.Context, sources SourceResolver, cats []InstallCatalog, maxFileSize int64) (*Catalogs, error) {
	out := &Catalogs{V0: make([]*install.Catalog, len(cats)), V1: make([]*olmv1.Catalog, len(cats)), Models: make([]model.Model, len(cats))}
	eg, ctx := errgroup.WithContext(ctx)
	for i, c := range cats {
		eg.Go(func() error {
			if err := loadBothCatalog(ctx, sources, c, maxFileSize, out, i); err != nil {
				return fmt.Errorf("catalog %s (%s): %w", c.Name, c.Ref, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		out.Close() //nolint:errcheck // the load's error is the one to report
		return nil, err
	}
	return out, nil
}

func loadBothCatalog(ctx context.Context, sources SourceResolver, c InstallCatalog, maxFileSize int64, out *Catalogs, i int) error {
	src, err := resolveCatalog(ctx, sources, c.Ref)
	if err != nil {
		return err
	}
	if src.Close != nil {
		out.mu.Lock()
		out.closes = append(out.closes, src.Close)
		out.mu.Unlock()
	}
	if src.FS == nil {
		return fmt.Errorf("%s is not a catalog", c.Ref)
	}
	b := install.NewBuilder()
	col := olmv1.NewCollector()
	err = declcfg.Walk(ctx, src.FS, func(blob *declcfg.Blob) error {
		b.AddBlob(blob)
		col.AddBlobAt(blob, rereadBlob(src.FS, blob))
		return nil
	}, declcfg.WithMaxFileSize(maxFileSize))
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return err
	}
	v0, m, err := b.Build(c.Name, c.Priority, walkErrs)
	if err != nil {
		return err
	}
	v1 := col.Catalog(c.Name, c.Priority, nil)
	out.V0[i], out.V1[i], out.Models[i] = v0, v1, m
	return nil
}

// rereadBlob reads a bundle blob's bytes again from fsys, by their
// position in its file, when the blob is the file's bytes verbatim (nil
// otherwise: a YAML document is decoded at once).
func rereadBlob(fsys fs.FS, blob *declcfg.Blob) func() ([]byte, error) {
	if blob.Schema != declcfg.SchemaBundle || !blob.Verbatim {
		return nil
	}
	path, off, n := blob.Path, int64(blob.Offset), len(blob.JSON)
	return func() ([]byte, error) {
		f, err := fsys.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		buf := make([]byte, n)
		if ra, ok := f.(io.ReaderAt); ok {
			_, err = ra.ReadAt(buf, off)
		} else if _, err = io.CopyN(io.Discard, f, off); err == nil {
			_, err = io.ReadFull(f, buf)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return buf, nil
	}
}

// BundleImageChecker checks bundles whose objects a catalog does not
// carry by pulling their images (`--pull-bundles`), each image once.
type BundleImageChecker struct {
	// Sources pulls the images; it must allow RefBundleImage.
	Sources SourceResolver
	Config  olmv1.Config

	mu   sync.Mutex
	seen map[string]*olmv1.Manifest
	errs map[string]error
}

// Check answers for b from its image's manifests; an image that cannot be
// pulled or read leaves the answer unknown, with the error as a note.
func (c *BundleImageChecker) Check(ctx context.Context, b *olmv1.Bundle) *olmv1.Installability {
	m, err := c.manifest(ctx, b.Image)
	if err != nil {
		in := olmv1.Check(b, c.Config)
		in.Notes = append(in.Notes, fmt.Sprintf("the bundle image %s could not be read: %v", b.Image, err))
		return in
	}
	return olmv1.CheckWith(b, m, c.Config)
}

func (c *BundleImageChecker) manifest(ctx context.Context, ref string) (*olmv1.Manifest, error) {
	if ref == "" {
		return nil, errors.New("the bundle names no image")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen, c.errs = map[string]*olmv1.Manifest{}, map[string]error{}
	}
	if m, ok := c.seen[ref]; ok {
		return m, c.errs[ref]
	}
	m, err := bundleImageManifest(ctx, c.Sources, ref)
	c.seen[ref], c.errs[ref] = m, err
	return m, err
}

// bundleImageManifest renders a bundle image and reads its manifests.
func bundleImageManifest(ctx context.Context, sources SourceResolver, ref string) (*olmv1.Manifest, error) {
	src, err := sources.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.Config == nil || len(src.Config.Bundles) != 1 {
		return nil, fmt.Errorf("%s is not a bundle image", ref)
	}
	bd := &src.Config.Bundles[0]
	nb := olmv1.NewBundle(bd)
	if !nb.HasObjects() {
		return &olmv1.Manifest{}, nil
	}
	return nb.Manifest(), nil
}
