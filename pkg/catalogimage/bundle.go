package catalogimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BundleOptions describe a bundle image: what the bundle.Dockerfile of
// `opm alpha bundle generate` builds (FROM Base, the annotations as
// LABELs, COPY manifests /manifests/, COPY metadata /metadata/).
type BundleOptions struct {
	// Base is the image to build on; nil means "scratch".
	Base v1.Image
	// Manifests and Metadata are the directories stored at /manifests/
	// and /metadata/, one layer each.
	Manifests, Metadata string
	// Labels are the image's labels (the bundle annotations).
	Labels map[string]string
	// Created is the time recorded in the image and its layers; zero
	// means the Unix epoch.
	Created time.Time
	// Platform of a scratch image; zero means linux/amd64.
	Platform v1.Platform
	// TempDir holds the layer files; empty means os.TempDir().
	TempDir string
}

// BuildBundle builds a bundle image without a container engine. The same
// directories give the same image, byte for byte: file times, owners and
// the order of entries do not depend on the machine. The caller writes the
// image (image.Write) and then closes it.
func BuildBundle(ctx context.Context, o BundleOptions) (_ *Image, err error) {
	for _, d := range []string{o.Manifests, o.Metadata} {
		st, err := os.Stat(d)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", d)
		}
	}
	created := imageTime(o.Created)
	work, forget, err := workDir(o.TempDir, "opm-bundle-build-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			forget()
			_ = os.RemoveAll(work)
		}
	}()
	base, scratch := o.Base, o.Base == nil
	if scratch {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, fmt.Errorf("base image: %w", err)
	}
	layerType := types.OCILayer
	if mt == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	manifests, err := writeLayer(ctx, filepath.Join(work, "manifests.tar.gz"), o.Manifests, "manifests", created, layerType)
	if err != nil {
		return nil, fmt.Errorf("manifests layer: %w", err)
	}
	metadata, err := writeLayer(ctx, filepath.Join(work, "metadata.tar.gz"), o.Metadata, "metadata", created, layerType)
	if err != nil {
		return nil, fmt.Errorf("metadata layer: %w", err)
	}
	at := v1.Time{Time: created}
	img, err := mutate.Append(base,
		mutate.Addendum{Layer: manifests, History: v1.History{Created: at, CreatedBy: "COPY manifests /manifests/ # opm alpha bundle build"}},
		mutate.Addendum{Layer: metadata, History: v1.History{Created: at, CreatedBy: "COPY metadata /metadata/ # opm alpha bundle build"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = at
	if scratch {
		p := o.Platform
		if p.OS == "" {
			p = v1.Platform{OS: "linux", Architecture: "amd64"}
		}
		cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range o.Labels {
		cf.Config.Labels[k] = v
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return &Image{Image: img, dir: work, forget: forget}, nil
}
