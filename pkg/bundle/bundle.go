// Package bundle renders a registry+v1 bundle directory (manifests/ and
// metadata/) into an olm.bundle blob, exactly as upstream `opm render DIR`
// does, and checks the bundle rules of the registry+v1 format.
//
// What upstream does, and so what Render does (sources:
// operator-registry pkg/registry/parse.go, bundle.go, csv.go, decode.go,
// registry_to_model.go ObjectsAndPropertiesFromBundle and
// alpha/action/render.go bundleToDeclcfg and getRelatedImages):
//
//   - manifests/ is read in name order, not recursively; subdirectories and
//     names starting with "." are skipped. Each file holds one object: the
//     first YAML document, or the first JSON value when the file starts
//     with '{'. A file that does not decode to an object with a kind is
//     skipped with a warning. Only the first ClusterServiceVersion counts.
//   - metadata/ is read in name order; the first file with non-empty
//     bundle annotations is the annotations file, the first with a
//     non-empty "dependencies" list the dependencies file and the first
//     with a non-empty "properties" list the properties file.
//   - The bundle is named after the CSV's metadata.name; its package comes
//     from the annotations; its image is the optional image reference
//     template's output ({{.Package}}, {{.Name}}, {{.Version}}), else empty.
//   - Properties: olm.package (packageName from the annotations, version
//     from spec.version, release from spec.release when set: a string, or
//     a number as upstream prints it), one olm.gvk per version of every CRD of the bundle
//     and per owned APIService, olm.gvk.required per required CRD and
//     APIService and per olm.gvk dependency, olm.package.required per
//     olm.package dependency, other dependencies and the properties of
//     properties.yaml and of the CSV's olm.properties annotation unchanged,
//     then one olm.bundle.object per manifest. The list is sorted by type,
//     then by the bytes of the value. Values are compact JSON in upstream's
//     struct field order with '<', '>' and '&' not escaped.
//   - relatedImages: spec.relatedImages as written, then the bundle image
//     and the images of the install strategy's containers and init
//     containers that are not already listed.
//
// opm render then moves olm.bundle.object and olm.csv.metadata properties
// to the end and sorts relatedImages by image; that is left to the caller.
//
// Beyond upstream, Render enforces the registry+v1 rules that upstream only
// checks when building a catalog (at least one channel, a package name, a
// named CSV, exactly one CSV, owned CRD versions served) unless
// Options.Lenient is set, and reports objects of kinds OLM does not install
// from bundles as warnings.
package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// PropertyAnnotation is the CSV annotation whose value, a JSON array of
// properties, upstream adds to the bundle's properties.
const PropertyAnnotation = "olm.properties"

// Options control Render.
type Options struct {
	// ImageRefTemplate, when set, makes the bundle's image: it is executed
	// with a value that has the string fields Package (the package name),
	// Name (the CSV name) and Version (the olm.package version). opm sets
	// it with --alpha-image-ref-template.
	ImageRefTemplate *template.Template

	// Lenient accepts what upstream opm render accepts: a bundle without
	// channels or package name, a CSV without a name, several CSVs (all but
	// the first in name order are dropped) and owned CRD versions that are
	// not served. Each is then reported as a warning instead of an error.
	Lenient bool
}

// ImageRefTemplateData is the value the image reference template is
// executed with.
type ImageRefTemplateData struct {
	Package string
	Name    string
	Version string
}

// IsBundleDir reports whether the root of fsys has both a manifests and a
// metadata directory, which is how opm render tells a bundle directory from
// a catalog directory.
func IsBundleDir(fsys fs.FS) bool {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return false
	}
	var manifests, metadata bool
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		switch e.Name() {
		case "manifests":
			manifests = true
		case "metadata":
			metadata = true
		}
	}
	return manifests && metadata
}

// RenderDir renders the bundle directory at dir on the local file system.
func RenderDir(dir string, opts Options) (*declcfg.Bundle, []Warning, error) {
	return Render(os.DirFS(dir), dir, opts)
}

// Render renders the bundle whose root (holding manifests/ and metadata/)
// is fsys. dir names the bundle in errors and warnings. The returned bundle
// carries, besides the blob fields, CsvJSON (the ClusterServiceVersion as
// JSON) and Objects (every manifest as JSON, in manifests/ name order, as
// upstream's in-memory render keeps them). Warnings list things upstream
// accepts that are probably mistakes; callers usually print them.
func Render(fsys fs.FS, dir string, opts Options) (*declcfg.Bundle, []Warning, error) {
	r := renderer{fsys: fsys, dir: dir, opts: opts}
	b, err := r.render()
	if err != nil {
		return nil, r.warnings, err
	}
	return b, r.warnings, nil
}

type renderer struct {
	fsys     fs.FS
	dir      string
	opts     Options
	warnings []Warning

	manifests []*manifest
	csv       *csvInfo
	crds      []*crdInfo
	md        *metadata
}

func (r *renderer) warn(file, format string, args ...any) {
	r.warnings = append(r.warnings, Warning{Dir: r.dir, File: file, Message: fmt.Sprintf(format, args...)})
}

// violation reports a rule that upstream does not enforce at render time:
// an error, or a warning when Options.Lenient is set.
func (r *renderer) violation(file string, rule error, detail string) error {
	if r.opts.Lenient {
		r.warn(file, "%v: %s", rule, detail)
		return nil
	}
	return &Error{Dir: r.dir, File: file, Rule: rule, Detail: detail}
}

func (r *renderer) fail(file string, rule error, err error) error {
	return &Error{Dir: r.dir, File: file, Rule: rule, Err: err}
}

func (r *renderer) render() (*declcfg.Bundle, error) {
	if err := r.readManifests(); err != nil {
		return nil, err
	}
	md, err := readMetadata(r.fsys, r.dir)
	if err != nil {
		return nil, err
	}
	r.md = md
	if err := r.checkAnnotations(); err != nil {
		return nil, err
	}

	bundleProps, err := r.bundleProperties()
	if err != nil {
		return nil, err
	}
	image, err := r.image(bundleProps)
	if err != nil {
		return nil, err
	}
	props, err := r.properties(bundleProps)
	if err != nil {
		return nil, err
	}
	related, err := r.relatedImages(image)
	if err != nil {
		return nil, err
	}

	b := &declcfg.Bundle{
		Schema:        declcfg.SchemaBundle,
		Name:          r.csv.Name,
		Package:       r.md.annotations.PackageName,
		Image:         image,
		Properties:    props,
		RelatedImages: related,
	}
	for _, m := range r.manifests {
		b.Objects = append(b.Objects, string(m.json))
		if m.obj.kind() == kindCSV {
			b.CsvJSON = string(m.json)
		}
	}
	return b, nil
}

// readManifests decodes manifests/ and finds the CSV and the CRDs.
func (r *renderer) readManifests() error {
	entries, err := fs.ReadDir(r.fsys, "manifests")
	if err != nil {
		return r.fail("manifests", ErrNotBundle, err)
	}
	var csvs []*manifest
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		file := path.Join("manifests", e.Name())
		data, err := fs.ReadFile(r.fsys, file)
		if err != nil {
			r.warn(file, "skipped: %v", err)
			continue
		}
		m := &manifest{file: file}
		more, err := decodeFirst(data, &m.obj)
		if err != nil {
			r.warn(file, "skipped, not a Kubernetes object: %v", err)
			continue
		}
		if m.obj.m == nil {
			r.warn(file, "skipped: the file holds no object")
			continue
		}
		if more {
			r.warn(file, "more than one document in the file; only the first is used")
		}
		if m.obj.kind() == kindCSV {
			csvs = append(csvs, m)
			if len(csvs) > 1 {
				continue
			}
		}
		if m.json, err = json.Marshal(m.obj.m); err != nil {
			return r.fail(file, ErrNoObjects, err)
		}
		r.manifests = append(r.manifests, m)
	}
	if len(r.manifests) == 0 {
		return r.fail("manifests", ErrNoObjects, nil)
	}
	if len(csvs) > 1 {
		files := make([]string, len(csvs))
		for i, c := range csvs {
			files[i] = c.file
		}
		detail := fmt.Sprintf("%s; only %s is used", strings.Join(files, ", "), files[0])
		if err := r.violation("manifests", ErrMultipleCSVs, detail); err != nil {
			return err
		}
	}

	for _, m := range r.manifests {
		group, version, kind := m.obj.groupVersionKind()
		switch kind {
		case kindCSV:
			if r.csv != nil {
				continue
			}
			c, err := newCSVInfo(m)
			if err != nil {
				return r.fail(m.file, ErrInvalidCSV, err)
			}
			r.csv = c
		case kindCRD:
			if version != "v1" && version != "v1beta1" {
				continue
			}
			c, err := newCRDInfo(m, group, version)
			if err != nil {
				return r.fail(m.file, ErrInvalidCRD, err)
			}
			r.crds = append(r.crds, c)
		}
		if !supportedKind(m.obj.kind()) {
			r.warn(m.file, "kind %q is not one of the kinds OLM installs from a registry+v1 bundle", m.obj.kind())
		}
	}
	if r.csv == nil {
		return r.fail("manifests", ErrNoCSV, nil)
	}
	if r.csv.Name == "" {
		if err := r.violation(r.csv.file, ErrNoCSVName, "metadata.name is empty"); err != nil {
			return err
		}
	}
	return r.checkOwnedCRDs()
}

// checkOwnedCRDs checks that every owned CRD of the CSV is provided by a
// CRD of the bundle (upstream's Bundle.AllProvidedAPIsInBundle), and served.
func (r *renderer) checkOwnedCRDs() error {
	ownedAPIs, _, err := r.csv.Definitions("apiservicedefinitions")
	if err != nil {
		return r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	provided := providedAPIs(r.crds, ownedAPIs)
	ownedCRDs, _, err := r.csv.Definitions("customresourcedefinitions")
	if err != nil {
		return r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	var missing, unserved []string
	for _, d := range ownedCRDs {
		k, err := crdKey(d)
		if err != nil {
			return r.fail(r.csv.file, ErrInvalidCSV, fmt.Errorf("spec.customresourcedefinitions.owned: %w", err))
		}
		served, ok := provided[k]
		switch {
		case !ok:
			missing = append(missing, fmt.Sprintf("%s version %s kind %s", d.Name, d.Version, d.Kind))
		case !served:
			unserved = append(unserved, fmt.Sprintf("%s version %s", d.Name, d.Version))
		}
	}
	if len(missing) > 0 {
		var found []string
		for _, k := range sortedKeys(provided) {
			found = append(found, fmt.Sprintf("%s.%s version %s kind %s", k.Plural, k.Group, k.Version, k.Kind))
		}
		detail := strings.Join(missing, "; ") + " (the bundle's CustomResourceDefinitions provide: " + strings.Join(found, "; ") + ")"
		if len(found) == 0 {
			detail = strings.Join(missing, "; ") + " (the bundle has no CustomResourceDefinition)"
		}
		return &Error{Dir: r.dir, File: r.csv.file, Rule: ErrOwnedCRDMissing, Detail: detail}
	}
	if len(unserved) > 0 {
		return r.violation(r.csv.file, ErrOwnedVersionNotServed, strings.Join(unserved, "; "))
	}
	return nil
}

func (r *renderer) checkAnnotations() error {
	a := r.md.annotations
	file := r.md.annotationsFile
	if a.PackageName == "" {
		if err := r.violation(file, ErrNoPackage, AnnotationPackage+" is empty"); err != nil {
			return err
		}
	}
	hasChannel := false
	for _, ch := range a.ChannelList() {
		if strings.TrimSpace(ch) != "" {
			hasChannel = true
		}
	}
	if !hasChannel {
		return r.violation(file, ErrNoChannels, AnnotationChannels+" lists no channel")
	}
	return nil
}

// propertyKey is upstream's identity of a property in propertySet.
func propertyKey(p property.Property) string {
	return "type: " + p.Type + ", value: " + string(p.Value)
}

// propertySet drops repeated properties (same type and value bytes),
// keeping the first.
func propertySet(in []property.Property) []property.Property {
	var (
		out  []property.Property
		seen = map[string]bool{}
	)
	for _, p := range in {
		k := propertyKey(p)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// bundleProperties returns the bundle's properties as upstream's bundle
// parser leaves them: those of properties.yaml, then the derived ones (the
// olm.package property from the annotations, the CSV's olm.properties
// annotation and one olm.gvk per provided API), without repeats.
func (r *renderer) bundleProperties() ([]property.Property, error) {
	var derived []property.Property
	if raw, ok := r.csv.Annotations[PropertyAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &derived); err != nil {
			r.warn(r.csv.file, "annotation %s does not decode as a list of properties (upstream also ignores it): %v", PropertyAnnotation, err)
		}
	}
	if pkg := r.md.annotations.PackageName; pkg != "" {
		version, err := r.csv.Version()
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		release, err := r.csv.Release()
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		v, err := marshalValue(property.Package{PackageName: pkg, Version: version, Release: release})
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		derived = append([]property.Property{{Type: property.TypePackage, Value: v}}, derived...)
	}
	ownedAPIs, _, err := r.csv.Definitions("apiservicedefinitions")
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	for _, k := range sortedKeys(providedAPIs(r.crds, ownedAPIs)) {
		v, err := marshalValue(property.GVK{Group: k.Group, Kind: k.Kind, Version: k.Version})
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		derived = append(derived, property.Property{Type: property.TypeGVK, Value: v})
	}
	return propertySet(append(append([]property.Property(nil), r.md.properties...), propertySet(derived)...)), nil
}

// image executes the image reference template, if any. Version is taken
// from the first olm.package property, as upstream does.
func (r *renderer) image(bundleProps []property.Property) (string, error) {
	if r.opts.ImageRefTemplate == nil {
		return "", nil
	}
	var pkg property.Package
	for _, p := range bundleProps {
		if p.Type != property.TypePackage {
			continue
		}
		if err := json.Unmarshal(p.Value, &pkg); err != nil {
			return "", r.fail("", ErrImageTemplate, fmt.Errorf("read %s property: %w", property.TypePackage, err))
		}
		break
	}
	var buf strings.Builder
	data := ImageRefTemplateData{Package: r.md.annotations.PackageName, Name: r.csv.Name, Version: pkg.Version}
	if err := r.opts.ImageRefTemplate.Execute(&buf, data); err != nil {
		return "", r.fail("", ErrImageTemplate, err)
	}
	return buf.String(), nil
}

// properties builds the final property list (upstream's
// registry.ObjectsAndPropertiesFromBundle).
func (r *renderer) properties(bundleProps []property.Property) ([]property.Property, error) {
	var (
		provided    = map[property.GVK]bool{}
		required    = map[property.GVKRequired]bool{}
		pkgProp     *property.Property
		others      []property.Property
		pkgRequired []property.Property
	)
	propFile := func() string {
		if r.md.propsFile != "" {
			return r.md.propsFile
		}
		return r.csv.file
	}
	for i, p := range bundleProps {
		switch p.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, r.fail(propFile(), ErrInvalidProperty, property.ParseError{Idx: i, Typ: p.Type, Err: err})
			}
			provided[v] = true
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, r.fail(propFile(), ErrInvalidProperty, property.ParseError{Idx: i, Typ: p.Type, Err: err})
			}
			val, err := marshalValue(property.Package{PackageName: v.PackageName, Version: v.Version, Release: v.Release})
			if err != nil {
				return nil, r.fail(propFile(), ErrInvalidProperty, err)
			}
			pkgProp = &property.Property{Type: property.TypePackage, Value: val}
		default:
			others = append(others, p)
		}
	}
	for i, d := range r.md.dependencies {
		switch d.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, r.fail(r.md.depsFile, ErrInvalidProperty, property.ParseError{Idx: i, Typ: d.Type, Err: err})
			}
			required[property.GVKRequired(v)] = true
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, r.fail(r.md.depsFile, ErrInvalidProperty, property.ParseError{Idx: i, Typ: d.Type, Err: err})
			}
			val, err := marshalValue(property.PackageRequired{PackageName: v.PackageName, VersionRange: v.Version})
			if err != nil {
				return nil, r.fail(r.md.depsFile, ErrInvalidProperty, err)
			}
			pkgRequired = append(pkgRequired, property.Property{Type: property.TypePackageRequired, Value: val})
		default:
			others = append(others, property.Property{Type: d.Type, Value: d.Value})
		}
	}

	version, err := r.csv.Version()
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	ownedAPIs, requiredAPIs, err := r.csv.Definitions("apiservicedefinitions")
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	for k := range providedAPIs(r.crds, ownedAPIs) {
		provided[property.GVK{Group: k.Group, Kind: k.Kind, Version: k.Version}] = true
	}
	_, requiredCRDs, err := r.csv.Definitions("customresourcedefinitions")
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	for _, d := range requiredCRDs {
		k, err := crdKey(d)
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, fmt.Errorf("spec.customresourcedefinitions.required: %w", err))
		}
		required[property.GVKRequired{Group: k.Group, Kind: k.Kind, Version: k.Version}] = true
	}
	for _, a := range requiredAPIs {
		required[property.GVKRequired{Group: a.Group, Kind: a.Kind, Version: a.Version}] = true
	}

	var props []property.Property
	for _, m := range r.manifests {
		val, err := marshalValue(property.BundleObject{Data: m.json})
		if err != nil {
			return nil, r.fail(m.file, ErrNoObjects, err)
		}
		props = append(props, property.Property{Type: property.TypeBundleObject, Value: val})
	}
	if pkgProp == nil {
		release, err := r.csv.Release()
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, fmt.Errorf("get release: %w", err))
		}
		val, err := marshalValue(property.Package{PackageName: r.md.annotations.PackageName, Version: version, Release: release})
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		pkgProp = &property.Property{Type: property.TypePackage, Value: val}
	}
	props = append(props, *pkgProp)
	for g := range provided {
		val, err := marshalValue(g)
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		props = append(props, property.Property{Type: property.TypeGVK, Value: val})
	}
	for g := range required {
		val, err := marshalValue(g)
		if err != nil {
			return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
		}
		props = append(props, property.Property{Type: property.TypeGVKRequired, Value: val})
	}
	props = append(props, pkgRequired...)
	props = append(props, others...)
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].Type != props[j].Type {
			return props[i].Type < props[j].Type
		}
		return string(props[i].Value) < string(props[j].Value)
	})
	// Values passed through from properties files, dependencies and the
	// olm.properties annotation keep their original spacing while being
	// sorted and de-duplicated (upstream compares the raw bytes). Compacting
	// them afterwards changes nothing in the output, since upstream's
	// encoder compacts and re-indents property values anyway, and gives
	// writers compact values.
	for i := range props {
		if len(props[i].Value) == 0 {
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, props[i].Value); err != nil {
			return nil, r.fail(propFile(), ErrInvalidProperty, fmt.Errorf("%s value: %w", props[i].Type, err))
		}
		if buf.Len() != len(props[i].Value) {
			props[i].Value = buf.Bytes()
		}
	}
	return props, nil
}

// relatedImages lists spec.relatedImages, then the bundle image and the
// operator images not already listed (upstream's getRelatedImages).
func (r *renderer) relatedImages(image string) ([]declcfg.RelatedImage, error) {
	listed, err := r.csv.RelatedImages()
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	var related []declcfg.RelatedImage
	if listed != nil { // an empty list stays an empty list, as upstream has it
		related = make([]declcfg.RelatedImage, 0, len(listed)+1)
	}
	seen := map[string]bool{}
	for _, ri := range listed {
		related = append(related, declcfg.RelatedImage{Name: ri.Name, Image: ri.Image})
		seen[ri.Image] = true
	}
	if image != "" && !seen[image] {
		related = append(related, declcfg.RelatedImage{Image: image})
	}
	ops, err := r.csv.OperatorImages()
	if err != nil {
		return nil, r.fail(r.csv.file, ErrInvalidCSV, err)
	}
	for _, img := range ops {
		if !seen[img] {
			related = append(related, declcfg.RelatedImage{Image: img})
		}
		seen[img] = true
	}
	return related, nil
}

// marshalValue encodes a property value as upstream's property builders
// do: encoding/json without HTML escaping, compacted.
func marshalValue(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, buf.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
