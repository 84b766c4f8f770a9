package action

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/interrupt"
)

// Migrate implements `opm migrate <catalog ref> <out dir>`: it renders a
// catalog (a directory or a catalog image), applies the migrations, and
// writes the result as a new catalog tree with one directory per package
// holding catalog.json (or catalog.yaml). Blobs that belong to no package
// go to OutputDir/catalog.json.
//
// Like upstream, OutputDir must be missing or empty. Beyond upstream,
// nothing is left behind on failure: the tree is written into a temporary
// directory and moved into place when complete (beside a missing
// OutputDir, then renamed; inside an existing one, which may be "." or a
// mount point, then its entries are renamed into it).
type Migrate struct {
	CatalogRef string
	OutputDir  string
	// Format is json (default) or yaml.
	Format declcfg.Format
	// Migrations to apply; nil applies none.
	Migrations *migrations.Migrations
	// Sources resolves CatalogRef; nil means catalog directories only. Its
	// mask is narrowed to catalogs.
	Sources *Resolver
}

// Run migrates the catalog.
func (m Migrate) Run(ctx context.Context) error {
	entries, err := os.ReadDir(m.OutputDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("output dir %q must be empty", m.OutputDir)
	}
	format := m.Format
	if format == "" {
		format = declcfg.FormatJSON
	}

	res := Resolver{}
	if m.Sources != nil {
		res = *m.Sources
	}
	res.Allowed = RefCatalogDir | RefCatalogImage
	res.Migrations = m.Migrations
	if res.Migrations == nil {
		// Catalogs must be in memory to be split by package.
		res.Migrations, _ = migrations.New(migrations.None)
	}
	src, err := res.Resolve(ctx, m.CatalogRef)
	if err != nil {
		return fmt.Errorf("render catalog image: render reference %q: %w", m.CatalogRef, err)
	}
	if src.Close != nil {
		defer src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
	}
	files, err := splitByPackage(src.Config, format)
	if err != nil {
		return err
	}
	return writeTree(m.OutputDir, files)
}

// splitByPackage renders cfg as one file per package (path
// "<package>/catalog.<ext>") plus "catalog.<ext>" for package-less blobs,
// each in render order.
func splitByPackage(cfg *declcfg.DeclarativeConfig, f declcfg.Format) (map[string][]byte, error) {
	for i := range cfg.Bundles {
		declcfg.PrepareForRender(&cfg.Bundles[i])
	}
	name := "catalog." + string(f)
	files := map[string][]byte{}
	for _, it := range declcfg.RenderOrder(cfg.Items()) {
		p := name
		if it.Group != "" {
			if err := checkPackageDirName(it.Group); err != nil {
				return nil, err
			}
			p = it.Group + "/" + name
		}
		out, err := f.Append(files[p], it.Value)
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
		files[p] = out
	}
	return files, nil
}

// checkPackageDirName refuses package names that cannot be one directory
// name: upstream's check (filepath.IsLocal) plus no separators, so that a
// package cannot write outside its own directory.
func checkPackageDirName(pkg string) error {
	if !filepath.IsLocal(pkg) || strings.ContainsAny(pkg, `/\`) {
		return fmt.Errorf("invalid package name %q: must be a single local path element", pkg)
	}
	return nil
}

// writeTree writes files (slash paths relative to dir) into dir, which
// must be missing or empty: everything is written to a temporary directory
// first and appears in dir only when all of it was written.
func writeTree(dir string, files map[string][]byte) error {
	return writeTreeWith(dir, func(tmp string) error {
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			full := filepath.Join(tmp, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, files[p], 0o644); err != nil {
				return fmt.Errorf("write file %q: %w", filepath.Join(dir, filepath.FromSlash(p)), err)
			}
		}
		return nil
	})
}

// writeTreeWith is writeTree for a tree that write writes into the
// temporary directory it is given.
func writeTreeWith(dir string, write func(tmp string) error) (err error) {
	dir = filepath.Clean(dir)
	// Stage beside the destination when it is missing, so that one rename
	// publishes the tree. An existing (empty) directory cannot be replaced
	// by a rename, and "." has no sibling: then stage inside it and move
	// the staged entries in.
	_, statErr := os.Stat(dir)
	exists := statErr == nil
	stageIn := filepath.Dir(dir)
	if exists {
		stageIn = dir
	} else if err := os.MkdirAll(stageIn, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(stageIn, ".migrate-tmp-")
	if err != nil {
		// Name the directory asked for, not the staging one.
		var pe *os.PathError
		if errors.As(err, &pe) {
			return &os.PathError{Op: "mkdir", Path: dir, Err: pe.Err}
		}
		return err
	}
	forget := interrupt.OnExit(func() { _ = os.RemoveAll(tmp) })
	defer forget()
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	// The moves into place are not stopped halfway by a signal.
	defer interrupt.Critical()()
	if !exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("move migrated catalog into %q: %w", dir, err)
		}
		return nil
	}
	return moveEntries(tmp, dir)
}

// moveEntries renames every entry of staged into dir, then removes
// staged. On failure the entries already moved are removed again.
func moveEntries(staged, dir string) (err error) {
	ents, err := os.ReadDir(staged)
	if err != nil {
		return err
	}
	var moved []string
	defer func() {
		if err != nil {
			for _, m := range moved {
				_ = os.RemoveAll(m)
			}
		}
	}()
	for _, e := range ents {
		to := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(to); err == nil {
			return fmt.Errorf("move migrated catalog into %q: %q appeared meanwhile", dir, to)
		}
		if err := os.Rename(filepath.Join(staged, e.Name()), to); err != nil {
			return fmt.Errorf("move migrated catalog into %q: %w", dir, err)
		}
		moved = append(moved, to)
	}
	return os.Remove(staged)
}
