package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/interrupt"
)

// Labels that tell catalog images from bundle images.
const (
	// ConfigsLabel marks a file-based catalog image; its value is the
	// directory of the image filesystem that holds the catalog
	// ("/configs").
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
)

// A bundle image is marked by the bundle annotation
// bundle.AnnotationPackage as a label, whose value is the package name;
// bundle images carry the other bundle annotations as labels too.

// Kind is what an image holds, as its labels tell.
type Kind int

// The kinds of images.
const (
	KindUnknown Kind = iota // neither a catalog nor a bundle image
	KindCatalog             // a file-based catalog image (ConfigsLabel)
	KindBundle              // a bundle image (bundle.AnnotationPackage)
)

// String returns "catalog", "bundle" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindCatalog:
		return "catalog"
	case KindBundle:
		return "bundle"
	}
	return "unknown"
}

// KindOf tells from image labels whether the image is a catalog or a
// bundle image. Like upstream opm, the catalog label wins when an image
// carries both.
func KindOf(labels map[string]string) Kind {
	if _, ok := labels[ConfigsLabel]; ok {
		return KindCatalog
	}
	if _, ok := labels[bundle.AnnotationPackage]; ok {
		return KindBundle
	}
	return KindUnknown
}

// Labels returns the labels of img's configuration, never nil. For a
// pulled image this fetches the configuration blob (once).
func Labels(img v1.Image) (map[string]string, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: read config: %w", imageName(img), err)
	}
	labels := map[string]string{}
	if cf != nil {
		for k, v := range cf.Config.Labels {
			labels[k] = v
		}
	}
	return labels, nil
}

// UnknownImageError reports an image that is neither a catalog nor a
// bundle image. Its message lists the labels found, one per line, sorted,
// as upstream opm prints them.
type UnknownImageError struct {
	Ref    string            // the image reference
	Labels map[string]string // the labels the image carries
}

func (e *UnknownImageError) Error() string {
	if len(e.Labels) == 0 {
		return fmt.Sprintf("%q: image type could not be determined: image has no labels", e.Ref)
	}
	keys := make([]string, 0, len(e.Labels))
	for k := range e.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%q: image type could not be determined, found labels", e.Ref)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s=%s", k, e.Labels[k])
	}
	return b.String()
}

// Extracted describes the content Extract or ExtractFS unpacked.
type Extracted struct {
	Kind   Kind              // KindCatalog or KindBundle
	Dir    string            // the catalog root, or the bundle directory (with manifests/ and metadata/); "" when FS is in memory
	FS     fs.FS             // ExtractFS: that directory as a file system
	Labels map[string]string // the image's labels
	Image  v1.Image          // the pulled image

	close func() error
}

// Close releases what ExtractFS kept: the catalog in memory and its
// scratch storage, or the temporary directory. It does nothing for
// Extract, whose directory the caller owns.
func (x *Extracted) Close() error {
	if x.close == nil {
		return nil
	}
	c := x.close
	x.close = nil
	return c()
}

// Extract pulls ref and unpacks what `opm render` reads into dst (created
// if missing): for a catalog image, the directory its ConfigsLabel names
// (Dir is that directory inside dst); for a bundle image, manifests/ and
// metadata/ (Dir is dst). An image with neither label is an
// *UnknownImageError listing its labels.
//
// It takes the options of Pull and Unpack; WithPaths is ignored.
func Extract(ctx context.Context, ref, dst string, opts ...Option) (*Extracted, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	x, err := o.pullLabels(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := o.extractTo(ctx, x, ref, dst); err != nil {
		return nil, err
	}
	return x, nil
}

// ExtractFS is Extract for a reader of file systems, such as the catalog
// loader: x.FS is the catalog root or the bundle directory, and x.Close
// releases it. The catalog of a catalog image, which holds only
// directories and regular files, is kept in memory, its files' content in
// scratch storage (unlinked temporary files), rather than written to a
// directory and removed afterwards (memtree.go); anything else (a catalog
// directory with links, a bundle image) is unpacked as Extract does into
// a temporary directory created in tmpDir (os.TempDir() when empty).
// Errors are Extract's.
func ExtractFS(ctx context.Context, ref, tmpDir string, opts ...Option) (*Extracted, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	x, err := o.pullLabels(ctx, ref)
	if err != nil {
		return nil, err
	}
	if x.Kind == KindCatalog {
		done, err := o.extractMem(ctx, x, ref)
		if done || err != nil {
			return x, err
		}
	}
	dst, err := os.MkdirTemp(tmpDir, "opm-render-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	forget := interrupt.OnExit(func() { _ = os.RemoveAll(dst) })
	if err := o.extractTo(ctx, x, ref, dst); err != nil {
		forget()
		os.RemoveAll(dst)
		return nil, err
	}
	x.FS = os.DirFS(x.Dir)
	x.close = func() error { forget(); return os.RemoveAll(dst) }
	return x, nil
}

// pullLabels pulls ref and tells its kind; the image must be a catalog or
// a bundle image.
func (o *options) pullLabels(ctx context.Context, ref string) (*Extracted, error) {
	img, err := o.pull(ctx, ref)
	if err != nil {
		return nil, err
	}
	labels, err := Labels(img)
	if err != nil {
		return nil, err
	}
	x := &Extracted{Kind: KindOf(labels), Labels: labels, Image: img}
	if x.Kind == KindUnknown {
		return nil, &UnknownImageError{Ref: ref, Labels: labels}
	}
	return x, nil
}

// configsPath is the catalog directory of a catalog image, clean and
// relative.
func configsPath(x *Extracted, ref string) (string, error) {
	configs := x.Labels[ConfigsLabel]
	rel, err := cleanPath(configs)
	if err != nil {
		return "", fmt.Errorf("image %s: label %s=%q: %w", ref, ConfigsLabel, configs, err)
	}
	return rel, nil
}

// extractMem extracts a catalog image's catalog into memory; done is false
// when the image needs a directory on disk instead.
func (o *options) extractMem(ctx context.Context, x *Extracted, ref string) (done bool, err error) {
	rel, err := configsPath(x, ref)
	if err != nil {
		return false, err
	}
	mo := *o
	mo.paths = nil
	if rel != "." {
		mo.paths = []string{rel}
	}
	t := newMemTree()
	t.stream, t.prefix = o.stream, rel
	err = mo.unpackMem(ctx, x.Image, t)
	if err != nil {
		t.close()
		if errors.Is(err, errNeedsDisk) && ctx.Err() == nil {
			return false, nil
		}
		return false, err
	}
	n, err := t.lookup("lstat", rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.close()
		return false, fmt.Errorf("image %s: catalog directory %s (label %s) is not in the image", ref, x.Labels[ConfigsLabel], ConfigsLabel)
	case err != nil:
		// A path through a file: judged on disk.
		t.close()
		return false, nil
	case !n.isDir():
		t.close()
		return false, fmt.Errorf("image %s: catalog directory %s (label %s) is not a directory in the image", ref, x.Labels[ConfigsLabel], ConfigsLabel)
	}
	x.FS = memFS{root: n}
	x.close = func() error { t.close(); return nil }
	return true, nil
}

// extractTo unpacks what x needs into the directory dst.
func (o *options) extractTo(ctx context.Context, x *Extracted, ref, dst string) error {
	x.Dir = dst
	switch x.Kind {
	case KindCatalog:
		rel, err := configsPath(x, ref)
		if err != nil {
			return err
		}
		configs := x.Labels[ConfigsLabel]
		o.paths = nil
		if rel != "." {
			o.paths = []string{rel}
		}
		if err := o.unpack(ctx, x.Image, dst); err != nil {
			return err
		}
		// The directory may be a symbolic link to another place in the
		// image (Unpack fetched that too): read the place it leads to.
		res, found, err := resolveIn(dst, rel)
		if err != nil {
			return fmt.Errorf("image %s: catalog directory %s (label %s): %w", ref, configs, ConfigsLabel, err)
		}
		x.Dir = filepath.Join(dst, filepath.FromSlash(res))
		fi, err := os.Lstat(x.Dir)
		switch {
		case !found || errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("image %s: catalog directory %s (label %s) is not in the image", ref, configs, ConfigsLabel)
		case err != nil:
			return fmt.Errorf("image %s: catalog directory %s: %w", ref, configs, err)
		case !fi.IsDir():
			return fmt.Errorf("image %s: catalog directory %s (label %s) is not a directory in the image", ref, configs, ConfigsLabel)
		}
	case KindBundle:
		o.paths = []string{"manifests", "metadata"}
		if err := o.unpack(ctx, x.Image, dst); err != nil {
			return err
		}
	}
	return nil
}
