package action

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fastopm/fastopm/pkg/image"
)

// DefaultOpmImage is the image `opm generate dockerfile` uses as builder
// and base unless told otherwise.
const DefaultOpmImage = "quay.io/operator-framework/opm:latest"

// GenerateDockerfile implements `opm generate dockerfile DIR`: it writes
// DIR.Dockerfile beside DIR, the Dockerfile that builds a catalog image
// from DIR, byte for byte as upstream opm writes it.
type GenerateDockerfile struct {
	// Dir is the catalog directory.
	Dir string
	// BaseImage is the image the catalog image is built on ("scratch" for
	// an image without opm, served by OLM's extractContent mode).
	BaseImage string
	// BuilderImage runs `opm serve --cache-only` to build the serve
	// cache; it must have /bin/opm, so it cannot be "scratch".
	BuilderImage string
	// ExtraLabels are added as LABEL lines, sorted by key.
	ExtraLabels map[string]string
}

// Path returns the Dockerfile's path: DIR.Dockerfile beside DIR.
func (g GenerateDockerfile) Path() string {
	dir, name := filepath.Split(filepath.Clean(g.Dir))
	return filepath.Join(dir, name+".Dockerfile")
}

// RootDirError is a catalog root that cannot be read or is not a
// directory.
type RootDirError struct{ Err error }

func (e *RootDirError) Error() string { return e.Err.Error() }
func (e *RootDirError) Unwrap() error { return e.Err }

// Run checks the inputs and writes the Dockerfile. It refuses to replace
// an existing file; on failure no file is left behind.
func (g GenerateDockerfile) Run() error {
	switch {
	case g.BaseImage == "":
		return errors.New("base image is unset")
	case g.BuilderImage == "":
		return errors.New("builder image is unset")
	case g.BuilderImage == "scratch":
		return fmt.Errorf("invalid builder image: %q", g.BuilderImage)
	}
	dockerfile := g.Path()
	if _, err := os.Lstat(dockerfile); err == nil {
		return fmt.Errorf("path %q: %w", dockerfile, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Clean(g.Dir)
	st, err := os.Stat(dir)
	if err != nil {
		return &RootDirError{err}
	}
	if !st.IsDir() {
		return &RootDirError{fmt.Errorf("provided root path %q is not a directory", dir)}
	}
	content := g.Content()
	f, err := os.OpenFile(dockerfile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(dockerfile)
		return fmt.Errorf("write %s: %w", dockerfile, werr)
	}
	return nil
}

// Content returns the Dockerfile text.
func (g GenerateDockerfile) Content() string {
	_, name := filepath.Split(filepath.Clean(g.Dir))
	var b strings.Builder
	b.WriteString("# The builder image is expected to contain\n")
	b.WriteString("# /bin/opm (with serve subcommand)\n")
	fmt.Fprintf(&b, "FROM %s as builder\n\n", g.BuilderImage)
	b.WriteString("# Copy FBC root into image at /configs and pre-populate serve cache\n")
	fmt.Fprintf(&b, "ADD %s /configs\n", name)
	b.WriteString(`RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]` + "\n\n")
	fmt.Fprintf(&b, "FROM %s\n", g.BaseImage)
	if g.BaseImage != "scratch" {
		b.WriteString("# The base image is expected to contain\n")
		b.WriteString("# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n")
		b.WriteString("# Configure the entrypoint and command\n")
		b.WriteString(`ENTRYPOINT ["/bin/opm"]` + "\n")
		b.WriteString(`CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]` + "\n")
	} else {
		b.WriteString("# OLMv0 CatalogSources that use binary-less images must set:\n")
		b.WriteString("# spec:\n")
		b.WriteString("#   grpcPodConfig:\n")
		b.WriteString("#     extractContent:\n")
		b.WriteString("#       catalogDir: /configs\n")
		b.WriteString("#       cacheDir: /tmp/cache\n")
	}
	b.WriteString("\nCOPY --from=builder /configs /configs\n")
	b.WriteString("COPY --from=builder /tmp/cache /tmp/cache\n\n")
	b.WriteString("# Set FBC-specific label for the location of the FBC root directory\n")
	b.WriteString("# in the image\n")
	fmt.Fprintf(&b, "LABEL %s=/configs\n", image.ConfigsLabel)
	if len(g.ExtraLabels) > 0 {
		b.WriteString("\n# Set other custom labels\n")
		keys := make([]string, 0, len(g.ExtraLabels))
		for k := range g.ExtraLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			// Written as is, without escaping, as upstream's template does.
			fmt.Fprintf(&b, "LABEL \"%s\"=\"%s\"\n", k, g.ExtraLabels[k])
		}
	}
	return b.String()
}

// ParseLabels turns -l key=value flags into a map; a repeated key keeps
// its last value. An entry without "=" is an error.
func ParseLabels(kvs []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("invalid label %q", kv)
		}
		labels[k] = v
	}
	return labels, nil
}
