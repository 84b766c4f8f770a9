package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/catalogimage"
	"github.com/fastopm/fastopm/pkg/image"
)

// bundleGenerateFlags are the flags generate and build share.
type bundleGenerateFlags struct {
	action.BundleGenerate
}

func (f *bundleGenerateFlags) add(cmd *cobra.Command, dirHelp string) {
	fl := cmd.Flags()
	fl.StringVarP(&f.Directory, "directory", "d", "", dirHelp)
	_ = cmd.MarkFlagRequired("directory")
	fl.StringVarP(&f.Package, "package", "p", "", "The name of the package that bundle image belongs to "+
		"(Required if `directory` is not pointing to a bundle in the nested bundle format)")
	fl.StringVarP(&f.Channels, "channels", "c", "", "The list of channels that bundle image belongs to"+
		"(Required if `directory` is not pointing to a bundle in the nested bundle format)")
	fl.StringVarP(&f.DefaultChannel, "default", "e", "", "The default channel for the bundle image")
	fl.StringVarP(&f.OutputDir, "output-dir", "u", "", "Optional output directory for operator manifests")
	fl.StringVar(&f.BaseImage, "base-image", "scratch", "Use a custom image pullspec as the base bundle image")
}

// newBundleGenerateCmd is `opm alpha bundle generate`.
func newBundleGenerateCmd(s Streams) *cobra.Command {
	var f bundleGenerateFlags
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate operator bundle metadata and Dockerfile",
		Long: `The "opm alpha bundle generate" command will generate operator
bundle metadata if needed and a Dockerfile to build Operator bundle image.

$ opm alpha bundle generate --directory /test/0.1.0/ --package test-operator \
	--channels stable,beta --default stable

Note:
* All manifests yaml must be in the same directory.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			g := f.BundleGenerate
			g.Overwrite = true // upstream's generate always overwrites
			g.Log = func(msg string) { logLine(s.Err, "info", msg) }
			if _, err := g.Run(); err != nil {
				return &usageReport{err}
			}
			return nil
		},
	}
	f.add(cmd, "The directory where bundle manifests for a specific version are located.")
	return cmd
}

// newBundleBuildCmd is `opm alpha bundle build`. Upstream generates the
// metadata and Dockerfile and then runs docker, podman or buildah; here
// the image is built in process (no container engine) and pushed to the
// registry --tag names, or written into an OCI layout ("oci-layout:DIR").
func newBundleBuildCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		f       bundleGenerateFlags
		tag     string
		builder string
	)
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build operator bundle image",
		Long: `The "opm alpha bundle build" command will generate operator
bundle metadata if needed and build bundle image with operator manifest
and metadata for a specific version.

For example: The command will generate annotations.yaml metadata plus
Dockerfile for bundle image and then build a container image from
provided operator bundle manifests generated metadata
e.g. "quay.io/example/operator:v0.0.1".

The image is built without a container engine, reproducibly (the same
manifests and metadata give the same digest), with the layers and labels
the generated bundle.Dockerfile describes, and pushed to the registry the
tag names (credentials from the Docker and podman auth files), or written
into an OCI image layout with --tag oci-layout:DIR. --image-builder is
accepted for compatibility and not used.

$ opm alpha bundle build --directory /test/0.1.0/ --tag quay.io/example/operator:v0.1.0 \
	--package test-operator --channels stable,beta --default stable --overwrite

Note:
* Bundle image is not runnable.
* All manifests yaml must be in the same directory. `,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch builder {
			case "docker", "podman", "buildah":
			default:
				return &usageReport{fmt.Errorf("%s is not supported image builder", builder)}
			}
			gen := f.BundleGenerate
			gen.Log = func(msg string) { logLine(s.Err, "info", msg) }
			out, err := gen.Run()
			if err != nil {
				return &usageReport{err}
			}
			logLine(s.Err, "info", "Building bundle image")
			opts := g.imageOptions("")
			bo := catalogimage.BundleOptions{Manifests: out.ManifestsDir, Metadata: out.Metadata, Labels: out.Annotations}
			if base := gen.BaseImage; base != "" && base != "scratch" {
				if bo.Base, err = image.Pull(cmd.Context(), base, opts...); err != nil {
					return fmt.Errorf("base image: %w", err)
				}
			}
			img, err := catalogimage.BuildBundle(cmd.Context(), bo)
			if err != nil {
				return err
			}
			defer img.Close() //nolint:errcheck // removal of temporary files
			digest, err := img.Digest()
			if err != nil {
				return err
			}
			if err := image.Write(cmd.Context(), img, tag, opts...); err != nil {
				return err
			}
			logLine(s.Err, "info", fmt.Sprintf("Wrote bundle image %s@%s", tag, digest))
			return nil
		},
	}
	f.add(cmd, "The directory where bundle manifests and metadata for a specific version are located")
	cmd.Flags().StringVarP(&tag, "tag", "t", "", "The image tag applied to the bundle image (or oci-layout:DIR for an OCI image layout)")
	_ = cmd.MarkFlagRequired("tag")
	cmd.Flags().StringVarP(&builder, "image-builder", "b", "docker", "Tool used to manage container images. One of: [docker, podman, buildah] (accepted for compatibility; the image is built without one)")
	cmd.Flags().BoolVarP(&f.Overwrite, "overwrite", "o", false, "To overwrite annotations.yaml locally if existed. By default, overwrite is set to `false`.")
	return cmd
}
