package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/catalogimage"
	"github.com/fastopm/fastopm/pkg/image"
	"github.com/fastopm/fastopm/pkg/progress"
)

// newGenerateCmd is `opm generate`.
func newGenerateCmd(s Streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate various artifacts for file-based catalogs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newGenerateDockerfileCmd(), newGenerateImageCmd(s, g, nil))
	return cmd
}

func newGenerateDockerfileCmd() *cobra.Command {
	var (
		baseImage, builderImage string
		labels                  []string
	)
	cmd := &cobra.Command{
		Use:   "dockerfile <fbcRootDir>",
		Args:  cobra.ExactArgs(1),
		Short: "Generate a Dockerfile for a file-based catalog",
		Long: `Generate a Dockerfile for a file-based catalog.

This command creates a Dockerfile in the same directory as the <fbcRootDir>
(named <fbcRootDir>.Dockerfile) that can be used to build the index. If a
Dockerfile with the same name already exists, this command will fail.

When specifying extra labels, note that if duplicate keys exist, only the last
value of each duplicate key will be added to the generated Dockerfile.

A separate builder and base image can be specified. The builder image may not be "scratch".
`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// As upstream: --binary-image alone sets the builder too.
			if cmd.Flags().Changed("binary-image") && !cmd.Flags().Changed("builder-image") {
				builderImage = baseImage
			}
			extra, err := action.ParseLabels(labels)
			if err != nil {
				return &usageReport{err} // as upstream
			}
			gen := action.GenerateDockerfile{Dir: args[0], BaseImage: baseImage, BuilderImage: builderImage, ExtraLabels: extra}
			// Each error the way upstream reports it.
			var rootErr *action.RootDirError
			switch err := gen.Run(); {
			case err == nil:
				return nil
			case errors.As(err, &rootErr):
				return &usageReport{err}
			case errors.Is(err, fs.ErrExist):
				return err // logrus
			default:
				return &stdLogError{err}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&baseImage, "binary-image", action.DefaultOpmImage, "Image in which to build catalog.")
	f.StringVarP(&baseImage, "base-image", "i", action.DefaultOpmImage, "Image base to use to build catalog.")
	f.StringVarP(&builderImage, "builder-image", "b", action.DefaultOpmImage, "Image to use as a build stage.")
	f.StringSliceVarP(&labels, "extra-labels", "l", []string{}, "Extra labels to include in the generated Dockerfile. Labels should be of the form 'key=value'.")
	_ = f.MarkDeprecated("binary-image", "use --base-image instead")
	cmd.MarkFlagsMutuallyExclusive("binary-image", "base-image")
	return cmd
}

// opmBinaryForImages, when set, is the opm a base built without
// --base-image holds, in place of the running executable (tests, whose
// executable is the test binary).
var opmBinaryForImages string

// newGenerateImageCmd is `opm generate image`, a fastopm addition. cache
// replaces the serve cache builder (tests); nil means
// action.BuildServeCache.
func newGenerateImageCmd(s Streams, g *globalOptions, cache catalogimage.CacheBuilder) *cobra.Command {
	var (
		baseImage, tag, output, platform, cacheDir string
		labels                                     []string
		cacheHTTP                                  bool
		compression                                string
	)
	cmd := &cobra.Command{
		Use:   "image <fbcRootDir>",
		Args:  cobra.ExactArgs(1),
		Short: "Build a catalog image without a container engine and push it",
		Long: `Build the catalog image that the Dockerfile of 'opm generate dockerfile' would
build, without Docker, Podman or Buildah, and push it to a registry (--tag) or
write it into an OCI image layout directory (--output oci-layout:PATH).

The image is the base image's layers and configuration, a layer holding
<fbcRootDir> at /configs, a layer holding the serve cache, pre-built by this
opm, at /tmp/cache, the label operators.operatorframework.io.index.configs.v1=/configs
and any --extra-labels, and (unless the base image is "scratch")
ENTRYPOINT ["/bin/opm"] and CMD ["serve", "/configs", "--cache-dir=/tmp/cache"].

Without --base-image, the base is built from this opm itself: a layer holding
this opm binary as /bin/opm, the grpc_health_probe next to it (required) as
/bin/grpc_health_probe and, when there, opm-graphviz, with a writable /tmp,
user 65532 and ENTRYPOINT ["/bin/opm"]: no published opm image and no
container engine are needed, and the image's opm is the one that built its
serve cache. Otherwise the base image must hold this same opm (or be "scratch"
for OLM's extractContent mode): the serve cache is in this opm's format, and
another opm rejects it and rebuilds it at every start.

Builds are reproducible: the same base image (or opm binaries), catalog and
labels give the same digest. File times in the layers and the image's creation
time are the Unix epoch, or $SOURCE_DATE_EPOCH when set. The image digest is
printed on stdout. With --cache-http the serve cache also holds the catalog's
JSON lines, for images run with 'opm serve --http-addr'.

Credentials come from $REGISTRY_AUTH_FILE, the Docker configuration and
podman's auth.json; --skip-tls-verify and --use-http apply to the base image
and the push.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			extra, err := action.ParseLabels(labels)
			if err != nil {
				return err
			}
			gen := action.GenerateImage{
				Dir:          args[0],
				BaseImage:    baseImage,
				Destination:  tag,
				Labels:       extra,
				ImageOptions: g.imageOptions(cacheDir),
				Cache:        cache,
				CacheHTTP:    cacheHTTP,
				OpmBinary:    opmBinaryForImages,
				Progress:     progress.New(s.Err, s.Terminal),
			}
			if output != "" {
				gen.Destination = output
			}
			switch compression {
			case "gzip":
			case "zstd":
				gen.Zstd = true
			default:
				return fmt.Errorf("invalid --compression %q, expected gzip or zstd", compression)
			}
			if platform != "" {
				p, err := v1.ParsePlatform(platform)
				if err != nil {
					return fmt.Errorf("invalid --platform %q: %w", platform, err)
				}
				gen.Platform = p
			}
			if gen.Created, err = sourceDateEpoch(); err != nil {
				return err
			}
			digest, err := gen.Run(cmd.Context())
			if err != nil {
				return err
			}
			logLine(s.Err, "info", fmt.Sprintf("wrote catalog image %s@%s", gen.Destination, digest))
			_, err = fmt.Fprintln(s.Out, digest)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&baseImage, "base-image", "i", "", `Image to build the catalog image on: an image of this opm (the serve cache is in its format), or "scratch" for an image without opm (default: a base built from this opm binary and the grpc_health_probe next to it)`)
	f.StringVar(&compression, "compression", "gzip", "Compression of the catalog and cache layers: gzip, or zstd (decompresses three to four times as fast; needs an OCI base image, and containerd 1.5, CRI-O or Docker 23 to run)")
	f.BoolVar(&cacheHTTP, "cache-http", false, "Also store the catalog's JSON lines in the serve cache, for 'opm serve --http-addr' (without them it derives them at start)")
	f.StringVarP(&tag, "tag", "t", "", "Registry reference to push the image to")
	f.StringVar(&output, "output", "", "Where to write the image instead of pushing it: "+image.LayoutPrefix+"PATH for an OCI image layout directory")
	f.StringSliceVarP(&labels, "extra-labels", "l", []string{}, "Extra labels of the image. Labels should be of the form 'key=value'.")
	f.StringVar(&platform, "platform", "", "Platform (os/arch[/variant]) to take from a multi-platform base image; also the platform of a scratch image (default: linux on this machine's architecture, else linux/amd64; linux/amd64 for scratch)")
	addImageCacheFlag(cmd, &cacheDir)
	cmd.MarkFlagsOneRequired("tag", "output")
	cmd.MarkFlagsMutuallyExclusive("tag", "output")
	return cmd
}

// sourceDateEpoch reads $SOURCE_DATE_EPOCH (reproducible-builds.org): the
// build time as Unix seconds. Unset means the zero time.
func sourceDateEpoch() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || v == "" {
		return time.Time{}, nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, errors.New("invalid SOURCE_DATE_EPOCH: want a non-negative integer number of seconds")
	}
	return time.Unix(sec, 0), nil
}
