package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/pkg/catalogimage"
	"github.com/fastopm/fastopm/pkg/image"
	"github.com/fastopm/fastopm/pkg/progress"
	"github.com/fastopm/fastopm/pkg/version"
)

// BuildServeCache builds opm serve's cache for the catalog in configsDir
// into cacheDir (which it creates), as `opm serve configsDir
// --cache-dir=cacheDir --cache-only` does. It is the cache builder of
// `opm generate image`.
func BuildServeCache(configsDir, cacheDir string) error {
	return buildServeCache(configsDir, cacheDir, false)
}

// BuildServeCacheHTTP is BuildServeCache with the catalog's JSON lines in
// the cache, as `--cache-only --cache-http` builds it: for images that
// serve HTTP as well (`opm generate image --cache-http`).
func BuildServeCacheHTTP(configsDir, cacheDir string) error {
	return buildServeCache(configsDir, cacheDir, true)
}

func buildServeCache(configsDir, cacheDir string, lines bool) error {
	snap, err := LoadServeDir(context.Background(), os.DirFS(configsDir), cacheDir, version.Version, lines)
	if err != nil {
		return fmt.Errorf("build the serve cache of %s: %w", configsDir, err)
	}
	return snap.Close()
}

// GenerateImage implements `opm generate image DIR`: it builds, without a
// container engine, the catalog image that the Dockerfile of `opm generate
// dockerfile DIR` builds, and pushes it to a registry or writes it into an
// OCI layout directory.
type GenerateImage struct {
	// Dir is the catalog directory.
	Dir string
	// BaseImage is the image reference to build on, or "scratch"; empty
	// builds the base from this opm's own binaries (catalogimage.OpmBase:
	// the running opm, and the grpc_health_probe and opm-graphviz next to
	// it), so that no published opm image is needed.
	BaseImage string
	// OpmBinary is the opm of a base built from this opm; empty means the
	// running opm.
	OpmBinary string
	// ProbeBinary is the grpc_health_probe of a base built from this opm;
	// empty means the one in the running opm's directory.
	ProbeBinary string
	// CacheHTTP stores the catalog's JSON lines in the serve cache, for
	// images that serve HTTP as well (`--cache-http`).
	CacheHTTP bool
	// Zstd compresses the catalog and cache layers with zstd instead of
	// gzip (`--compression zstd`).
	Zstd bool
	// Destination is a registry reference, or "oci-layout:PATH".
	Destination string
	// Labels are extra image labels.
	Labels map[string]string
	// Platform picks the base image out of a multi-platform index, and is
	// the platform of a scratch image; nil means the defaults of
	// image.Pull and catalogimage.Options.
	Platform *v1.Platform
	// ImageOptions configure the pull of the base image and the push.
	ImageOptions []image.Option
	// Cache builds the serve cache; nil means BuildServeCache.
	Cache catalogimage.CacheBuilder
	// Created is the creation time recorded in the image; zero means the
	// Unix epoch.
	Created time.Time
	// TempDir holds the work files; empty means os.TempDir().
	TempDir string
	// Progress, when set, shows each step (layers, the serve cache, the
	// push) on a status line and sums it up.
	Progress *progress.Reporter
}

// opmBase builds the base image from the running opm.
func (g GenerateImage) opmBase(ctx context.Context) (*catalogimage.Image, error) {
	self, err := g.OpmBinary, error(nil)
	if self == "" {
		self, err = os.Executable()
	}
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return nil, fmt.Errorf("find the running opm: %w", err)
	}
	p := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	if g.Platform != nil && (g.Platform.OS != p.OS || g.Platform.Architecture != p.Architecture) {
		return nil, fmt.Errorf("this opm runs on %s, not %s: pass --base-image, an opm image for %s, to build for another platform", p, g.Platform, g.Platform)
	}
	if g.Platform != nil {
		p.Variant = g.Platform.Variant
	}
	dir := filepath.Dir(self)
	probe := g.ProbeBinary
	if probe == "" {
		probe = filepath.Join(dir, "grpc_health_probe")
		if _, err := os.Stat(probe); err != nil {
			return nil, fmt.Errorf("no grpc_health_probe next to this opm (%s), which the image needs for OLM's catalog pod probes: "+
				"build both (make build puts them in bin/), or pass --base-image", probe)
		}
	}
	b := catalogimage.OpmBase{Opm: self, Probe: probe, Platform: p, Created: g.Created, TempDir: g.TempDir, Progress: g.Progress}
	if gv := filepath.Join(dir, "opm-graphviz"); fileExists(gv) {
		b.Graphviz = gv
	}
	if Lean {
		// The image's lean opm runs opm-full for serve --http-addr.
		if b.Full, err = FindFull(self); err != nil {
			return nil, fmt.Errorf("this lean opm's image needs opm-full, which serve --http-addr runs: %w; or pass --base-image", err)
		}
		if err := checkFull(ctx, b.Full); err != nil {
			return nil, fmt.Errorf("this lean opm's image needs opm-full, which serve --http-addr runs: %s: %w; or pass --base-image", b.Full, err)
		}
	}
	return b.Image(ctx)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Run builds and writes the image and returns its digest.
func (g GenerateImage) Run(ctx context.Context) (v1.Hash, error) {
	switch {
	case g.Dir == "":
		return v1.Hash{}, errors.New("catalog directory is unset")
	case g.Destination == "":
		return v1.Hash{}, errors.New("destination is unset")
	}
	opts := append([]image.Option(nil), g.ImageOptions...)
	o := catalogimage.Options{
		Dir:      g.Dir,
		Cache:    g.Cache,
		Labels:   g.Labels,
		Created:  g.Created,
		TempDir:  g.TempDir,
		Progress: g.Progress,
		Zstd:     g.Zstd,
	}
	if o.Cache == nil {
		o.Cache = BuildServeCache
		if g.CacheHTTP {
			o.Cache = BuildServeCacheHTTP
		}
	}
	if g.Platform != nil {
		opts = append(opts, image.WithPlatform(*g.Platform))
		o.Platform = *g.Platform
	}
	switch g.BaseImage {
	case "":
		base, err := g.opmBase(ctx)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("base image: %w", err)
		}
		defer base.Close() //nolint:errcheck // removal of temporary files
		o.Base = base
	case "scratch":
	default:
		base, err := image.Pull(ctx, g.BaseImage, opts...)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("base image: %w", err)
		}
		o.Base = base
	}
	img, err := catalogimage.Build(ctx, o)
	if err != nil {
		return v1.Hash{}, err
	}
	defer img.Close() //nolint:errcheck // removal of temporary files
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := image.Write(ctx, img, g.Destination, append(opts, image.WithProgress(g.Progress))...); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// checkFull makes sure that the program at p is opm-full of this build,
// as the image's lean opm needs it: not a lean opm, not another version.
// It asks it (`opm-full version`, run as this lean opm runs it, which
// refuses to run a lean opm).
func checkFull(ctx context.Context, p string) error {
	self, _ := os.Executable()
	cmd := exec.CommandContext(ctx, p, "version")
	cmd.Env = append(os.Environ(), EnvFullRanFrom+"="+self, EnvFullBuild+"="+Build())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))
	}
	if bytes.Contains(out, []byte("warning: ")) {
		return errors.New(string(bytes.TrimSpace(bytes.SplitN(out, []byte("\n"), 2)[0])))
	}
	return nil
}
