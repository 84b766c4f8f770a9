package bundle

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/fastopm/fastopm/alpha/property"
)

// Annotation keys of metadata/annotations.yaml (and a bundle image's
// labels).
const (
	AnnotationMediatype      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// Annotations are the bundle annotations opm reads from metadata/.
type Annotations struct {
	PackageName        string `json:"operators.operatorframework.io.bundle.package.v1"`
	Channels           string `json:"operators.operatorframework.io.bundle.channels.v1"`
	DefaultChannelName string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
}

// ChannelList splits the channels annotation on commas, as upstream does
// (entries are not trimmed); it is empty when the annotation is.
func (a Annotations) ChannelList() []string {
	if a.Channels == "" {
		return nil
	}
	return strings.Split(a.Channels, ",")
}

type annotationsFile struct {
	Annotations Annotations `json:"annotations"`
}

// Dependency is one entry of metadata/dependencies.yaml.
type Dependency struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type dependenciesFile struct {
	Dependencies []Dependency `json:"dependencies"`
}

type propertiesFile struct {
	Properties []property.Property `json:"properties"`
}

// metadata is what metadata/ contributes to a bundle.
type metadata struct {
	annotations     Annotations
	annotationsFile string
	dependencies    []Dependency
	depsFile        string
	properties      []property.Property
	propsFile       string
}

// readMetadata reads every entry of metadata/ in name order and, like
// upstream (registry.bundleParser.addMetadata), takes the first file that
// decodes to non-empty annotations, the first that decodes to a non-empty
// dependencies list and the first that decodes to a non-empty properties
// list. Files that do not decode are ignored; only the annotations are
// required.
func readMetadata(fsys fs.FS, dir string) (*metadata, error) {
	entries, err := fs.ReadDir(fsys, "metadata")
	if err != nil {
		return nil, &Error{Dir: dir, File: "metadata", Rule: ErrNotBundle, Err: err}
	}
	var (
		md         metadata
		haveAnn    bool
		annErrs    []string
		haveDeps   bool
		haveProps  bool
		candidates int
	)
	for _, e := range entries {
		file := path.Join("metadata", e.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			continue
		}
		candidates++
		if !haveAnn {
			var af annotationsFile
			if _, err := decodeFirst(data, &af); err != nil {
				if strings.HasPrefix(e.Name(), "annotations.") {
					annErrs = append(annErrs, fmt.Sprintf("%s: %v", file, err))
				}
			} else if af.Annotations != (Annotations{}) {
				md.annotations, md.annotationsFile, haveAnn = af.Annotations, file, true
			}
		}
		if !haveDeps {
			var df dependenciesFile
			if _, err := decodeFirst(data, &df); err == nil && len(df.Dependencies) > 0 {
				md.dependencies, md.depsFile, haveDeps = df.Dependencies, file, true
			}
		}
		if !haveProps {
			var pf propertiesFile
			if _, err := decodeFirst(data, &pf); err == nil && len(pf.Properties) > 0 {
				md.properties, md.propsFile, haveProps = pf.Properties, file, true
			}
		}
	}
	if !haveAnn {
		detail := fmt.Sprintf("none of the %d files in metadata/ has an %q map with %s, %s or %s",
			candidates, "annotations", AnnotationPackage, AnnotationChannels, AnnotationDefaultChannel)
		if len(annErrs) > 0 {
			detail += " (" + strings.Join(annErrs, "; ") + ")"
		}
		return nil, &Error{Dir: dir, File: "metadata", Rule: ErrNoAnnotations, Detail: detail}
	}
	return &md, nil
}
