package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/pkg/image"
)

// imageCacheEnv names the environment variable that sets the default of
// --image-cache-dir.
const imageCacheEnv = "OPM_IMAGE_CACHE_DIR"

// imageCacheMaxEnv names the environment variable that bounds the size of
// the image cache (default image.DefaultCacheMaxSize).
const imageCacheMaxEnv = "OPM_IMAGE_CACHE_MAX_SIZE"

// addImageCacheFlag adds --image-cache-dir, which keeps pulled manifests
// and layers in a local directory keyed by digest (a fastopm addition).
func addImageCacheFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "image-cache-dir", os.Getenv(imageCacheEnv),
		"Directory that keeps pulled image manifests and layers, keyed by digest, and what each layer yields, so that later pulls of the same content download and decompress nothing (default $"+imageCacheEnv+"; empty: no cache; at most $"+imageCacheMaxEnv+", default "+formatSize(image.DefaultCacheMaxSize)+", the least recently used removed first)")
}

// imageOptions returns the pull and push options that opm's global flags
// (--skip-tls-verify, --use-http) and a cache directory ask for.
// Credentials come from the Docker and podman auth files (image.Keychain).
func (g *globalOptions) imageOptions(cacheDir string) []image.Option {
	var opts []image.Option
	if g != nil {
		opts = append(opts, image.WithSkipTLSVerify(g.skipTLSVerify), image.WithPlainHTTP(g.useHTTP))
	}
	if cacheDir != "" {
		opts = append(opts, image.WithCacheDir(cacheDir))
		if v := os.Getenv(imageCacheMaxEnv); v != "" {
			n, err := parseSize(v)
			switch {
			case err != nil:
				opts = append(opts, image.WithError(fmt.Errorf("$%s: %w", imageCacheMaxEnv, err)))
			case n == 0:
				opts = append(opts, image.WithCacheMaxSize(-1)) // no bound
			default:
				opts = append(opts, image.WithCacheMaxSize(n))
			}
		}
	}
	return opts
}
