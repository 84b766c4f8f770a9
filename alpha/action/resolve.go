package action

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/canonjson"
	"github.com/fastopm/fastopm/pkg/image"
)

// RefType is a kind of reference a Resolver can resolve. Values combine
// into a mask.
type RefType uint

// The kinds of references.
const (
	RefCatalogDir   RefType = 1 << iota // a file-based catalog directory
	RefBundleDir                        // a registry+v1 bundle directory
	RefCatalogImage                     // an image labelled with image.ConfigsLabel
	RefBundleImage                      // an image labelled with bundle.AnnotationPackage

	// RefAll (the zero mask) allows every kind.
	RefAll RefType = 0
)

// Allowed reports whether the mask allows t.
func (m RefType) Allowed(t RefType) bool { return m == RefAll || m&t == t }

// ErrNotAllowed is matched (errors.Is) by the error a Resolver returns for
// a reference of a kind its mask excludes.
var ErrNotAllowed = errors.New("not allowed")

// Resolver resolves every kind of reference `opm render` takes: catalog
// directories (streamed), bundle directories, catalog images (unpacked to
// a temporary directory, then streamed) and bundle images. A reference
// that names an existing directory is a directory; anything else is an
// image reference, as upstream opm decides.
type Resolver struct {
	// ImageRefTemplate makes the image of bundles rendered from bundle
	// directories (--alpha-image-ref-template). Bundle images always get
	// their own reference.
	ImageRefTemplate *template.Template
	// StrictBundles makes the registry+v1 rules that upstream opm does not
	// check at render time (at least one channel, a package name, exactly
	// one named CSV, owned CRD versions served) errors. Without it they
	// are reported through Warn, and the bundle renders as upstream
	// renders it.
	StrictBundles bool
	// Warn receives warnings about bundles; nil drops them.
	Warn func(msg string)
	// ImageOptions configure pulls: TLS, plain HTTP, credentials, cache.
	ImageOptions []image.Option
	// Allowed limits the kinds of references; RefAll allows every kind.
	Allowed RefType
	// Migrations, when set, are applied to every reference's blobs.
	// Catalogs are then loaded into memory rather than streamed, and each
	// bundle's CsvJSON and Objects are read from its olm.bundle.object
	// properties.
	Migrations *migrations.Migrations
	// TempDir is where images are unpacked; empty means os.TempDir().
	TempDir string
	// MaxFileSize is the largest catalog file read with Migrations, in
	// bytes (0: the loader's default; < 0: no limit). Streamed catalogs
	// are read with Render's.
	MaxFileSize int64
	// Progress, when set, counts the images pulled on a status line;
	// Finish writes the summary.
	Progress *PullProgress

	// preparse, for Render: catalog images are parsed while they are
	// extracted (render_stream.go).
	preparse *preparseConfig
}

// Finish ends the status line of the images pulled and writes their
// summary ("pulled 30 images in 2.4s"), when there is a Progress and an
// image was pulled.
func (r *Resolver) Finish() { r.Progress.Finish() }

var _ SourceResolver = (*Resolver)(nil)

// Resolve returns the Source for ref. Temporary directories it creates
// are removed by the Source's Close, or before Resolve returns when the
// content is already in memory or Resolve fails.
func (r *Resolver) Resolve(ctx context.Context, ref string) (*Source, error) {
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		return r.resolveDir(ctx, ref)
	case err == nil:
		return nil, fmt.Errorf("%q is a file: render takes catalog directories, bundle directories or image references", ref)
	case !errors.Is(err, fs.ErrNotExist) || looksLikePath(ref):
		return nil, err
	}
	src, err := r.resolveImage(ctx, ref)
	switch {
	case err == nil || errors.Is(err, ErrNotAllowed):
	case bareName(ref):
		// "catalog" or "cron-v2/catalog" is most likely a mistyped
		// directory, and only to an image client docker.io's
		// library/catalog: say first that there is no such directory.
		return nil, fmt.Errorf("there is no directory %q; as an image reference (no registry, no tag: Docker Hub's) it could not be pulled either: %w", ref, err)
	case !strings.Contains(ref, "/"):
		return nil, fmt.Errorf("%w (there is no directory %q either)", err, ref)
	}
	return src, err
}

// bareName reports whether ref, which is not a directory, names neither
// a registry nor a tag or digest: "catalog", "cron/catalog". An image
// client reads it as a Docker Hub repository; a person most likely meant
// a directory.
func bareName(ref string) bool {
	if ref == "" || strings.ContainsAny(ref, ":@") {
		return false
	}
	first, _, nested := strings.Cut(ref, "/")
	return !nested || (!strings.Contains(first, ".") && first != "localhost")
}

// looksLikePath reports whether ref can only be meant as a file path, so
// that a missing directory is reported as such rather than pulled.
func looksLikePath(ref string) bool {
	return ref == "." || ref == ".." || strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") ||
		strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") ||
		strings.HasPrefix(ref, `.\`) || strings.HasPrefix(ref, `..\`) || filepath.IsAbs(ref)
}

func (r *Resolver) resolveDir(ctx context.Context, dir string) (*Source, error) {
	fsys := os.DirFS(dir)
	if bundle.IsBundleDir(fsys) {
		if !r.Allowed.Allowed(RefBundleDir) {
			return nil, fmt.Errorf("cannot render bundle directory %q: %w", dir, ErrNotAllowed)
		}
		cfg, err := r.renderBundle(fsys, dir, r.ImageRefTemplate)
		if err != nil {
			return nil, err
		}
		return &Source{Config: cfg}, nil
	}
	if !r.Allowed.Allowed(RefCatalogDir) {
		return nil, fmt.Errorf("cannot render declarative config directory: %w", ErrNotAllowed)
	}
	return r.catalog(ctx, fsys, nil)
}

func (r *Resolver) resolveImage(ctx context.Context, ref string) (src *Source, err error) {
	if !r.Allowed.Allowed(RefCatalogImage) && !r.Allowed.Allowed(RefBundleImage) {
		return nil, fmt.Errorf("%q is not a directory, and image references are not allowed here: %w", ref, ErrNotAllowed)
	}
	opts := r.ImageOptions
	var pre *preparse
	if r.preparse != nil && r.Migrations == nil {
		pre = newPreparse(*r.preparse)
		opts = append(opts[:len(opts):len(opts)], image.WithFileStream(pre.add))
	}
	r.Progress.begin()
	x, err := image.ExtractFS(ctx, ref, r.TempDir, opts...)
	r.Progress.end(err)
	if pre != nil {
		pre.wait()
		if err != nil || x.Kind != image.KindCatalog || x.Dir != "" {
			// Failed, not a catalog, or a catalog unpacked to disk after
			// all (its files are not those parsed).
			pre.close()
			pre = nil
		}
	}
	if err != nil {
		return nil, err
	}
	cleanup := x.Close
	if pre != nil {
		cleanup = func() error {
			pre.close()
			return x.Close()
		}
	}
	defer func() {
		if src == nil || src.Close == nil {
			_ = cleanup()
		}
	}()
	switch x.Kind {
	case image.KindCatalog:
		if !r.Allowed.Allowed(RefCatalogImage) {
			return nil, fmt.Errorf("cannot render declarative config image: %w", ErrNotAllowed)
		}
		src, err := r.catalog(ctx, x.FS, cleanup)
		if src != nil {
			src.pre = pre
		}
		return src, err
	case image.KindBundle:
		if !r.Allowed.Allowed(RefBundleImage) {
			return nil, fmt.Errorf("cannot render bundle image: %w", ErrNotAllowed)
		}
		// The bundle's image is the reference it was pulled by, exactly as
		// given, as upstream sets it. A template of one string constant
		// says so whatever characters the reference holds.
		tmpl, err := template.New("image").Parse("{{" + strconv.Quote(ref) + "}}")
		if err != nil {
			return nil, fmt.Errorf("bundle image %q: %w", ref, err)
		}
		cfg, err := r.renderBundle(x.FS, ref, tmpl)
		if err != nil {
			return nil, err
		}
		return &Source{Config: cfg}, nil
	}
	return nil, fmt.Errorf("image %q: unexpected kind %s", ref, x.Kind)
}

// catalog returns a catalog tree as a streamed source, or, with
// migrations, loaded and migrated in memory. cleanup, if not nil, removes
// the tree's temporary directory.
func (r *Resolver) catalog(ctx context.Context, fsys fs.FS, cleanup func() error) (*Source, error) {
	if r.Migrations == nil {
		return &Source{FS: fsys, Close: cleanup}, nil
	}
	cfg, err := declcfg.LoadFS(ctx, fsys, declcfg.WithMaxFileSize(r.MaxFileSize))
	if err != nil {
		return nil, err
	}
	for i := range cfg.Bundles {
		if err := LoadBundleObjects(&cfg.Bundles[i]); err != nil {
			return nil, err
		}
	}
	if err := r.Migrations.Migrate(cfg); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &Source{Config: cfg}, nil
}

// renderBundle renders the bundle whose root is fsys; name names it in
// messages.
func (r *Resolver) renderBundle(fsys fs.FS, name string, tmpl *template.Template) (*declcfg.DeclarativeConfig, error) {
	b, warnings, err := bundle.Render(fsys, name, bundle.Options{ImageRefTemplate: tmpl, Lenient: !r.StrictBundles})
	if r.Warn != nil {
		for _, w := range warnings {
			r.Warn(w.String())
		}
	}
	if err != nil {
		return nil, err
	}
	cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{*b}}
	if err := r.Migrations.Migrate(cfg); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return cfg, nil
}

// LoadBundleObjects fills b.Objects with the manifests of b's
// olm.bundle.object properties, as JSON, and b.CsvJSON with the first
// ClusterServiceVersion among them, as upstream's catalog loader does
// (alpha/property's reader, shared with the model and the serve index).
// Manifests given by reference rather than inline are skipped.
func LoadBundleObjects(b *declcfg.Bundle) error {
	b.Objects, b.CsvJSON = nil, ""
	var c canonjson.Canonicalizer
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		data, err := property.BundleObjectData(nil, p.Value)
		if err != nil {
			return fmt.Errorf("package %q, bundle %q: parse property at index %d as bundle object: %w", b.Package, b.Name, i, err)
		}
		if len(data) == 0 {
			continue
		}
		// As upstream (apimachinery's yaml.ToJSON), text that looks like
		// JSON is kept as it is.
		js, err := property.ManifestJSON(data)
		if err != nil {
			return fmt.Errorf("package %q, bundle %q: convert bundle object property at index %d to JSON: %w", b.Package, b.Name, i, err)
		}
		b.Objects = append(b.Objects, string(js))
		if b.CsvJSON == "" && property.IsCSV(js, &c) {
			b.CsvJSON = string(js)
		}
	}
	return nil
}
