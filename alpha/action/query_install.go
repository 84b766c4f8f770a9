//go:build !opm_lean

package action

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
)

// InstallCatalog is one catalog of `opm alpha query install`: a
// CatalogSource's name and priority, and the directory or image it
// serves.
type InstallCatalog struct {
	Name     string
	Ref      string
	Priority int
}

// ParseInstallCatalog reads NAME=REF[,priority=N].
func ParseInstallCatalog(s string) (InstallCatalog, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return InstallCatalog{}, fmt.Errorf("invalid catalog %q: expected NAME=REF[,priority=N]", s)
	}
	c := InstallCatalog{Name: name, Ref: rest}
	if ref, opt, ok := strings.Cut(rest, ",priority="); ok {
		n, err := strconv.Atoi(opt)
		if errors.Is(err, strconv.ErrRange) {
			return InstallCatalog{}, fmt.Errorf("invalid catalog %q: priority %q is out of range (%d to %d)", s, opt, math.MinInt, math.MaxInt)
		}
		if err != nil {
			return InstallCatalog{}, fmt.Errorf("invalid catalog %q: priority %q is not a whole number", s, opt)
		}
		c.Ref, c.Priority = ref, n
	}
	if c.Ref == "" {
		return InstallCatalog{}, fmt.Errorf("invalid catalog %q: no reference", s)
	}
	// An image reference has no comma; a directory may, but rarely one
	// followed by KEY=: that is a misspelt option.
	if i := strings.LastIndex(c.Ref, ","); i >= 0 && strings.Contains(c.Ref[i+1:], "=") {
		if _, err := os.Stat(c.Ref); err != nil {
			return InstallCatalog{}, fmt.Errorf("invalid catalog %q: unknown option %q (the only option is priority=N)", s, c.Ref[i+1:])
		}
	}
	return c, nil
}

// InstallCatalogName names a catalog given only by its reference: a
// directory's base name, an image's last path element (without tag or
// digest).
func InstallCatalogName(ref string) string {
	if st, err := os.Stat(ref); (err == nil && st.IsDir()) || looksLikePath(ref) {
		return filepath.Base(filepath.Clean(ref))
	}
	s, _, _ := strings.Cut(ref, "@")
	s = path.Base(s)
	s, _, _ = strings.Cut(s, ":")
	return s
}

// NameInstallCatalogs names the catalogs given without a name after their
// reference (InstallCatalogName), unique among all: a second "catalog"
// becomes "catalog-2". Names given are kept (two alike are an error of
// install.NewResolver).
func NameInstallCatalogs(cats []InstallCatalog) {
	seen := map[string]bool{}
	for _, c := range cats {
		seen[c.Name] = c.Name != ""
	}
	for i := range cats {
		if cats[i].Name != "" {
			continue
		}
		base := InstallCatalogName(cats[i].Ref)
		name := base
		for n := 2; seen[name]; n++ {
			name = base + "-" + strconv.Itoa(n)
		}
		seen[name] = true
		cats[i].Name = name
	}
}

// LoadInstallCatalogs reads the catalogs, in parallel, through the catalog
// cache when there is one (cache may be nil). Each must be valid
// (upstream's rules; opm serve refuses the others).
func LoadInstallCatalogs(ctx context.Context, sources SourceResolver, cats []InstallCatalog, maxFileSize int64, cache *CatalogCache) ([]*install.Catalog, error) {
	out := make([]*install.Catalog, len(cats))
	eg, ctx := errgroup.WithContext(ctx)
	for i, c := range cats {
		eg.Go(func() error {
			cat, err := loadInstallCatalog(ctx, sources, c, maxFileSize, cache)
			if err != nil {
				return fmt.Errorf("catalog %s (%s): %w", c.Name, c.Ref, err)
			}
			out[i] = cat
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func loadInstallCatalog(ctx context.Context, sources SourceResolver, c InstallCatalog, maxFileSize int64, cache *CatalogCache) (*install.Catalog, error) {
	src, err := resolveCatalog(ctx, sources, c.Ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return nil, fmt.Errorf("%s is not a catalog", c.Ref)
	}
	return cache.LoadInstall(ctx, src.FS, c.Name, c.Priority, declcfg.WithMaxFileSize(maxFileSize))
}
