package catalogimage

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastopm/fastopm/pkg/progress"
)

// OpmBase describes the opm image built from opm's own files, without a
// registry or a container engine: what catalog.Dockerfile builds, minus
// distroless. It is the default base of `opm generate image`: the image
// holds the opm that built the serve cache, so the cache is in the format
// the image's opm reads.
type OpmBase struct {
	// Opm is the opm binary, stored as /bin/opm (the running one, for
	// generate image).
	Opm string
	// Probe is the grpc_health_probe binary, stored as
	// /bin/grpc_health_probe: OLM's catalog pods exec it as their probe.
	Probe string
	// Graphviz, when set, is stored as /bin/opm-graphviz (the SVG
	// drawings of serve --http-addr).
	Graphviz string
	// Full, when set, is stored as /bin/opm-full: the opm that a lean
	// Opm runs for the commands it leaves out, serve --http-addr among
	// them.
	Full string
	// Platform is the binaries' platform (the image's OS and
	// architecture). Required.
	Platform v1.Platform
	// Created is the time of the layer's entries, the configuration and
	// the history; zero means the Unix epoch.
	Created time.Time
	// TempDir holds the layer file; empty means os.TempDir().
	TempDir string
	// Progress, when set, shows the layer's build on a status line.
	Progress *progress.Reporter
}

// OpmUser is the user catalog images built on OpmBase run as: distroless's
// "nonroot", as catalog.Dockerfile sets it, given by number so that
// Kubernetes' runAsNonRoot can check it.
const OpmUser = "65532:65532"

// Image builds the base image: one layer with /bin (opm,
// grpc_health_probe, opm-graphviz, opm-full) and /tmp (mode 1777, for the temporary
// files of serve), and a configuration with the platform, PATH, the user
// OpmUser and ENTRYPOINT ["/bin/opm"]. The same files, platform and time
// give the same image digest. Close removes the layer file.
func (b OpmBase) Image(ctx context.Context) (*Image, error) {
	if b.Opm == "" || b.Probe == "" {
		return nil, fmt.Errorf("opm base image: the opm and grpc_health_probe binaries are required")
	}
	if b.Platform.OS == "" || b.Platform.Architecture == "" {
		return nil, fmt.Errorf("opm base image: the platform is required")
	}
	created := imageTime(b.Created)
	work, forget, err := workDir(b.TempDir, "opm-base-build-")
	if err != nil {
		return nil, err
	}
	files := []binFile{{"bin/opm", b.Opm}, {"bin/grpc_health_probe", b.Probe}}
	if b.Graphviz != "" {
		files = append(files, binFile{"bin/opm-graphviz", b.Graphviz})
	}
	if b.Full != "" {
		files = append(files, binFile{"bin/opm-full", b.Full})
	}
	slices.SortFunc(files, func(a, b binFile) int { return strings.Compare(a.name, b.name) })
	done := step(b.Progress, "writing the opm layer")
	l, err := writeLayerWith(filepath.Join(work, "opm.tar.gz"), types.OCILayer, func(tw *tar.Writer) error {
		return writeBinaries(ctx, tw, files, created)
	})
	if err != nil {
		done("")
		forget()
		os.RemoveAll(work)
		return nil, fmt.Errorf("opm layer: %w", err)
	}
	done("wrote the opm layer (" + sizeOf(l) + ")")
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	at := v1.Time{Time: created}
	img, err := mutate.Append(base, mutate.Addendum{Layer: l, History: v1.History{
		Created: at, CreatedBy: "COPY opm grpc_health_probe /bin/ # opm generate image",
	}})
	if err == nil {
		var cf *v1.ConfigFile
		if cf, err = img.ConfigFile(); err == nil {
			cf = cf.DeepCopy()
			cf.Created = at
			cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = b.Platform.OS, b.Platform.Architecture, b.Platform.Variant, b.Platform.OSVersion
			cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
			cf.Config.User = OpmUser
			cf.Config.Entrypoint = append([]string(nil), Entrypoint...)
			cf.History = append(cf.History, v1.History{Created: at, CreatedBy: `USER ` + OpmUser + ` ENTRYPOINT ["/bin/opm"] # opm generate image`, EmptyLayer: true})
			img, err = mutate.ConfigFile(img, cf)
		}
	}
	if err != nil {
		forget()
		os.RemoveAll(work)
		return nil, err
	}
	return &Image{Image: img, dir: work, forget: forget}, nil
}

type binFile struct{ name, src string }

// writeBinaries writes bin/ and tmp/ and the files, executable, in name
// order.
func writeBinaries(ctx context.Context, tw *tar.Writer, files []binFile, mtime time.Time) error {
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin/", 0o755}, {"tmp/", 0o1777}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, ModTime: mtime}); err != nil {
			return err
		}
		if d.name != "bin/" {
			continue
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := writeFile(tw, f, mtime); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(tw *tar.Writer, f binFile, mtime time.Time) error {
	in, err := os.Open(f.src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.src)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o755, Size: st.Size(), ModTime: mtime}); err != nil {
		return err
	}
	n, err := io.Copy(tw, in)
	if err != nil {
		return fmt.Errorf("%s: %w", f.src, err)
	}
	if n != st.Size() {
		return fmt.Errorf("%s changed while the image was built", f.src)
	}
	return nil
}
