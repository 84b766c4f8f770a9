package action

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/pkg/bundle"
)

// LoadModel reads the catalog ref (a directory or a catalog image) into the
// upgrade-graph model. A catalog that breaks upstream's rules is refused
// with validate's report.
func LoadModel(ctx context.Context, sources SourceResolver, ref string, maxFileSize int64) (model.Model, error) {
	src, err := resolveCatalog(ctx, sources, ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return nil, fmt.Errorf("%s is not a catalog", ref)
	}
	res, err := Validate{FS: src.FS, SkipSchema: true, MaxFileSize: maxFileSize}.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return res.Model, nil
}

// resolveCatalog resolves ref, which the query and diff commands take
// as a catalog directory or catalog image, and says what is wrong in their
// words when it is neither: a file (the directory that holds it may be the
// catalog), a bundle directory or bundle image (opm render makes a catalog
// of it). Those errors are NotCatalogErrors, which do not name ref: the
// callers that do not already say which catalog failed add it.
func resolveCatalog(ctx context.Context, sources SourceResolver, ref string) (*Source, error) {
	src, err := sources.Resolve(ctx, ref)
	if err == nil {
		return src, nil
	}
	if errors.Is(err, ErrNotAllowed) {
		return nil, &NotCatalogError{Ref: ref, msg: fmt.Sprintf("a bundle, not a catalog: give a catalog directory or catalog image (opm render %s makes a catalog of the bundle)", ref)}
	}
	if st, serr := os.Stat(ref); serr == nil && st.Mode().IsRegular() {
		return nil, &NotCatalogError{Ref: ref, msg: fmt.Sprintf("a file, not a catalog directory: give the directory (%s, the one that holds it?) or a catalog image", filepath.Dir(ref))}
	}
	return nil, err
}

// NotCatalogError is a reference to something that exists but is not a
// catalog: a file, a bundle. Its message does not name Ref.
type NotCatalogError struct {
	Ref string
	msg string
}

func (e *NotCatalogError) Error() string { return e.msg }

// BundleNotCatalog says, in the words of the query and diff commands,
// that dir is a bundle directory (manifests/ and metadata/, with
// metadata/annotations.yaml), not the catalog directory validate and
// serve take, or returns nil when it is not one. They call it when the
// catalog fails to load, in place of a problem for each of the bundle's
// files.
func BundleNotCatalog(dir string) error {
	fsys := os.DirFS(dir)
	if !bundle.IsBundleDir(fsys) {
		return nil
	}
	if st, err := fs.Stat(fsys, "metadata/annotations.yaml"); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: a bundle, not a catalog: give a catalog directory (opm render %s makes a catalog of the bundle)", dir, dir)
}
