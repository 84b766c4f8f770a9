//go:build !opm_lean

package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
)

// catalogCacheEnv names the environment variable that sets the default of
// --catalog-cache-dir (set and empty: no cache); catalogCacheMaxEnv the one
// that bounds its size.
const (
	catalogCacheEnv    = "OPM_CATALOG_CACHE_DIR"
	catalogCacheMaxEnv = "OPM_CATALOG_CACHE_MAX_SIZE"
)

// catalogCacheFlags are --catalog-cache-dir and --no-catalog-cache.
type catalogCacheFlags struct {
	dir string
	off bool
	// dflt: dir is the default, from the user's cache directory; one that
	// cannot be used is left unused rather than failing the question.
	dflt bool
}

// defaultCatalogCacheDir is $OPM_CATALOG_CACHE_DIR when it is set (even
// empty: no cache), else fastopm/catalogs in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux), else none.
func defaultCatalogCacheDir() (string, bool) {
	if v, ok := os.LookupEnv(catalogCacheEnv); ok {
		return v, false
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", true
	}
	return filepath.Join(d, "fastopm", "catalogs"), true
}

// addCatalogCacheFlag adds --catalog-cache-dir, which keeps what loading
// each catalog builds, keyed by the catalog's content, and
// --no-catalog-cache (fastopm additions).
func addCatalogCacheFlag(cmd *cobra.Command, f *catalogCacheFlags) {
	d, dflt := defaultCatalogCacheDir()
	f.dflt = dflt
	cmd.Flags().StringVar(&f.dir, "catalog-cache-dir", d,
		"Directory that keeps what loading each catalog builds, keyed by the catalog's content, so that later questions over the same catalogs read them without parsing them ($"+catalogCacheEnv+
			" when set, empty: no cache; else fastopm/catalogs in the user's cache directory; at most $"+catalogCacheMaxEnv+", default "+formatSize(action.DefaultCatalogCacheMaxSize)+", the least recently used removed first)")
	cmd.Flags().BoolVar(&f.off, "no-catalog-cache", false, "Load every catalog, neither reading nor writing the catalog cache")
}

// open opens the catalog cache the flags name; nil when there is none. A
// directory given (by flag or environment) that cannot be used is an
// error; the default one is then left unused.
func (f *catalogCacheFlags) open(cmd *cobra.Command) (*action.CatalogCache, error) {
	if f.off || f.dir == "" {
		return nil, nil
	}
	var max int64
	if v := os.Getenv(catalogCacheMaxEnv); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", catalogCacheMaxEnv, err)
		}
		max = n
		if n == 0 {
			max = -1 // no bound
		}
	}
	c, err := action.OpenCatalogCache(f.dir, max)
	if err != nil && f.dflt && !cmd.Flags().Changed("catalog-cache-dir") {
		return nil, nil
	}
	return c, err
}
