package action

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/pkg/bundle"
)

// The bundle media types `opm alpha bundle generate` detects.
const (
	MediaTypeRegistryV1 = "registry+v1"
	MediaTypePlain      = "plain"
	MediaTypeHelm       = "helm"
)

// BundleGenerate is `opm alpha bundle generate`: it writes a bundle's
// metadata/annotations.yaml and a bundle.Dockerfile in the working
// directory, as upstream does, byte for byte.
type BundleGenerate struct {
	// Directory holds the bundle's manifests (its manifests/ directory).
	Directory string
	// OutputDir, when set, receives a copy of the manifests (manifests/)
	// and the metadata (metadata/); otherwise metadata/ is written beside
	// Directory.
	OutputDir string
	// Package and Channels (comma-separated) are required; DefaultChannel
	// is optional.
	Package, Channels, DefaultChannel string
	// Overwrite replaces an existing annotations.yaml and bundle.Dockerfile;
	// otherwise an existing annotations.yaml must agree with the generated
	// one and an existing bundle.Dockerfile is kept.
	Overwrite bool
	// BaseImage is the Dockerfile's FROM ("scratch" by default).
	BaseImage string
	// WorkingDir is where bundle.Dockerfile goes (the current directory
	// when empty).
	WorkingDir string
	// Log receives upstream's info lines.
	Log func(msg string)
}

// GeneratedBundle says where the generated files are.
type GeneratedBundle struct {
	MediaType              string
	ManifestsDir, Metadata string
	Annotations            map[string]string
	Dockerfile             string
}

// Run writes the files.
func (g BundleGenerate) Run() (*GeneratedBundle, error) {
	log := g.Log
	if log == nil {
		log = func(string) {}
	}
	dir, err := filepath.Abs(g.Directory)
	if err != nil {
		return nil, err
	}
	out := ""
	if g.OutputDir != "" {
		if out, err = filepath.Abs(g.OutputDir); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	mediaType, err := BundleMediaType(dir)
	if err != nil {
		return nil, err
	}
	wd := g.WorkingDir
	if wd == "" {
		if wd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if g.Channels == "" || g.Package == "" {
		var missing []string
		if g.Channels == "" {
			missing = append(missing, "channels")
		}
		if g.Package == "" {
			missing = append(missing, "package name")
		}
		log(fmt.Sprintf("Bundle %s information not provided, inferring from parent package directory", strings.Join(missing, " and ")))
		// Upstream then infers them from the parent directory in the
		// package-manifest format (package.yaml beside version
		// directories), a format OLM no longer serves; that is not done
		// here.
		return nil, fmt.Errorf("please manually input channels and packageName, error interpreting bundle from directory %s, inferring them from a package-manifest directory is not supported", dir)
	}
	base := g.BaseImage
	if base == "" {
		base = "scratch"
	}

	log("Building annotations.yaml")
	annotations := map[string]string{
		bundle.AnnotationMediatype: mediaType,
		bundle.AnnotationManifests: "manifests/",
		bundle.AnnotationMetadata:  "metadata/",
		bundle.AnnotationPackage:   g.Package,
		bundle.AnnotationChannels:  g.Channels,
	}
	if g.DefaultChannel != "" {
		annotations[bundle.AnnotationDefaultChannel] = g.DefaultChannel
	}
	content, err := annotationsYAML(annotations)
	if err != nil {
		return nil, err
	}

	copyDir, manifests := filepath.Dir(dir), dir
	if out != "" {
		copyDir = out
		log("Generating output manifests directory")
		manifests = filepath.Join(out, "manifests")
		if err := copyManifests(dir, manifests, g.Overwrite); err != nil {
			return nil, err
		}
	}
	metadata := filepath.Join(copyDir, "metadata")
	existing, err := os.ReadFile(filepath.Join(metadata, "annotations.yaml"))
	switch {
	case errors.Is(err, os.ErrNotExist) || g.Overwrite:
		if err := writeLogged(log, "annotations.yaml", metadata, content); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		log("An annotations.yaml already exists in the directory: metadata/")
		if err := checkAnnotations(log, existing, annotations); err != nil {
			return nil, err
		}
	}

	log("Building Dockerfile")
	relManifests, err := filepath.Rel(wd, manifests)
	if err != nil {
		return nil, err
	}
	relMetadata, err := filepath.Rel(wd, metadata)
	if err != nil {
		return nil, err
	}
	var df strings.Builder
	fmt.Fprintf(&df, "FROM %s\n\n", base)
	for _, k := range []string{bundle.AnnotationMediatype, bundle.AnnotationManifests, bundle.AnnotationMetadata, bundle.AnnotationPackage, bundle.AnnotationChannels} {
		fmt.Fprintf(&df, "LABEL %s=%s\n", k, annotations[k])
	}
	if g.DefaultChannel != "" {
		fmt.Fprintf(&df, "LABEL %s=%s\n\n", bundle.AnnotationDefaultChannel, g.DefaultChannel)
	}
	fmt.Fprintf(&df, "COPY %s %s\n", filepath.ToSlash(relManifests), "/manifests/")
	fmt.Fprintf(&df, "COPY %s %s\n", filepath.ToSlash(relMetadata), "/metadata/")
	dockerfile := filepath.Join(wd, "bundle.Dockerfile")
	if _, err := os.Stat(dockerfile); errors.Is(err, os.ErrNotExist) || g.Overwrite {
		if err := writeLogged(log, "bundle.Dockerfile", wd, []byte(df.String())); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	} else {
		log("A bundle.Dockerfile already exists in current working directory: " + wd)
	}
	return &GeneratedBundle{MediaType: mediaType, ManifestsDir: manifests, Metadata: metadata, Annotations: annotations, Dockerfile: dockerfile}, nil
}

// annotationsYAML encodes the annotations as upstream does (go-yaml v3,
// two-space indent, keys sorted).
func annotationsYAML(a map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(struct {
		Annotations map[string]string `yaml:"annotations"`
	}{a}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkAnnotations compares an existing annotations.yaml with the
// generated annotations, with upstream's messages (in key order here;
// upstream's order varies from run to run).
func checkAnnotations(log func(string), existing []byte, want map[string]string) error {
	log("Validating existing annotations.yaml")
	var file struct {
		Annotations map[string]string `yaml:"annotations"`
	}
	if err := yaml.Unmarshal(existing, &file); err != nil {
		return fmt.Errorf("unable to parse existing annotations.yaml: %w", err)
	}
	var errs []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := file.Annotations[k]
		switch {
		case !ok:
			errs = append(errs, "Missing field: "+k)
		case v != want[k]:
			errs = append(errs, fmt.Sprintf("Expect field %q to have value %q instead of %q", k, want[k], v))
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errors.New(errs[0])
	}
	return errors.New("[" + strings.Join(errs, ", ") + "]")
}

// BundleMediaType detects a manifests directory's media type as upstream
// does: helm when it holds a Chart.yaml with a name, registry+v1 when one
// of its files (the first document of each) is a ClusterServiceVersion,
// plain otherwise. A directory without files is an error.
func BundleMediaType(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var files []string
	kinds := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		files = append(files, e.Name())
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() {
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				//lint:ignore ST1005 upstream's words
				return "", fmt.Errorf("Unable to read file %s in bundle", p)
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			//lint:ignore ST1005 upstream's words
			return "", fmt.Errorf("Unable to read file %s in bundle", p)
		}
		var obj struct {
			Kind string `json:"kind"`
		}
		if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 10).Decode(&obj); err == nil || errors.Is(err, io.EOF) {
			kinds[e.Name()] = obj.Kind
		}
	}
	if len(files) == 0 {
		//lint:ignore ST1005 upstream's words
		return "", fmt.Errorf("The directory %s contains no yaml files", dir)
	}
	if chart, err := os.ReadFile(filepath.Join(dir, "Chart.yaml")); err == nil {
		var meta struct {
			Name string `json:"name"`
		}
		if sigsyaml.Unmarshal(chart, &meta) == nil && meta.Name != "" {
			return MediaTypeHelm, nil
		}
	}
	for _, f := range files {
		if kinds[f] == "ClusterServiceVersion" {
			return MediaTypeRegistryV1, nil
		}
	}
	return MediaTypePlain, nil
}

func writeLogged(log func(string), name, dir string, content []byte) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	log(fmt.Sprintf("Writing %s in %s", name, dir))
	return os.WriteFile(filepath.Join(dir, name), content, 0o644)
}

// copyManifests copies the manifests directory into to, as upstream does
// (a nested directory's files go to to/<base of from>, upstream's quirk);
// existing files are kept unless overwrite.
func copyManifests(from, to string, overwrite bool) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o777); err != nil {
		return err
	}
	for _, e := range entries {
		src := filepath.Join(from, e.Name())
		if e.IsDir() {
			if err := copyManifests(src, filepath.Join(to, filepath.Base(from)), overwrite); err != nil {
				return err
			}
			continue
		}
		dst := filepath.Join(to, e.Name())
		if _, err := os.Stat(dst); err == nil && !overwrite {
			continue
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", src)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, st.Mode().Perm()); err != nil {
			return err
		}
		if err := os.Chmod(dst, st.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}
