package httpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
	"github.com/fastopm/fastopm/pkg/csv"
	"github.com/fastopm/fastopm/pkg/markdown"
)

// What a bundle's ClusterServiceVersion says of its operator, as
// operatorhub.io and OpenShift's OperatorHub page show it: read from the
// bundle's olm.csv.metadata property, or from its CSV among its
// olm.bundle.object properties, in the JSON line of its olm.bundle blob.
// The package list shows the head bundle's (of the default channel)
// summary; a package and a bundle their details.

// operatorSummary is what the package list shows and filters on.
type operatorSummary struct {
	DisplayName string `json:"displayName,omitempty"`
	// ShortDescription is the CSV's "description" annotation (one line),
	// or the first line of text of its long description.
	ShortDescription string   `json:"shortDescription,omitempty"`
	Provider         string   `json:"provider,omitempty"`
	Keywords         []string `json:"keywords,omitempty"`
	// Categories are the "categories" annotation, split at commas.
	Categories []string `json:"categories,omitempty"`
	// Capabilities is the "capabilities" annotation (the capability
	// level: Basic Install ... Auto Pilot).
	Capabilities string `json:"capabilities,omitempty"`
	// InstallModes are the install modes the operator supports.
	InstallModes []string `json:"installModes,omitempty"`
	// Infrastructure are the infrastructure features it declares, in
	// OpenShift's console's words.
	Infrastructure []string `json:"infrastructure,omitempty"`
}

// operatorDetails is what a package's page shows of its head bundle, and a
// bundle's page of that bundle.
type operatorDetails struct {
	// Bundle is the bundle the details come from.
	Bundle string `json:"bundle"`
	operatorSummary
	// ProviderURL is the provider's URL when it is one a page may link
	// to (markdown.LinkURL).
	ProviderURL string `json:"providerURL,omitempty"`
	// Description is the long description, Markdown, and DescriptionHTML
	// its rendering, sanitized (pkg/markdown); both of the part of a
	// description longer than markdown.MaxSize that is rendered, and
	// DescriptionTruncated is then true.
	Description          string           `json:"description,omitempty"`
	DescriptionHTML      string           `json:"descriptionHTML,omitempty"`
	DescriptionTruncated bool             `json:"descriptionTruncated,omitempty"`
	Maintainers          []csv.Maintainer `json:"maintainers,omitempty"`
	// Links are the CSV's links, each URL one a page may link to
	// (markdown.LinkURL) or left out.
	Links          []csv.AppLink `json:"links,omitempty"`
	Maturity       string        `json:"maturity,omitempty"`
	Repository     string        `json:"repository,omitempty"`
	ContainerImage string        `json:"containerImage,omitempty"`
	CreatedAt      string        `json:"createdAt,omitempty"`
	Support        string        `json:"support,omitempty"`
	MinKubeVersion string        `json:"minKubeVersion,omitempty"`
	// SuggestedNamespace is the operatorframework.io/suggested-namespace
	// annotation.
	SuggestedNamespace string `json:"suggestedNamespace,omitempty"`
	// ValidSubscription is the operators.openshift.io/valid-subscription
	// annotation's list.
	ValidSubscription []string `json:"validSubscription,omitempty"`
	// UnsupportedInstallModes are the install modes the CSV lists as not
	// supported.
	UnsupportedInstallModes []string               `json:"unsupportedInstallModes,omitempty"`
	OwnedCRDs               []crdAnswer            `json:"ownedCRDs,omitempty"`
	RequiredCRDs            []crdAnswer            `json:"requiredCRDs,omitempty"`
	OwnedAPIServices        []apiServiceBrief      `json:"ownedAPIServices,omitempty"`
	RequiredAPIServices     []apiServiceBrief      `json:"requiredAPIServices,omitempty"`
	NativeAPIs              []csv.GroupVersionKind `json:"nativeAPIs,omitempty"`
	// Examples are the alm-examples that match no owned CRD.
	Examples []string `json:"examples,omitempty"`
	// ExamplesProblem says why the alm-examples annotation could not be
	// read (it is not a JSON list of objects).
	ExamplesProblem string `json:"examplesProblem,omitempty"`
}

// crdAnswer is an owned or required CRD, with its example custom
// resources (owned ones) from the alm-examples annotation, as indented
// JSON.
type crdAnswer struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Kind        string   `json:"kind"`
	DisplayName string   `json:"displayName,omitempty"`
	Description string   `json:"description,omitempty"`
	Examples    []string `json:"examples,omitempty"`
}

type apiServiceBrief struct {
	Name        string `json:"name"`
	Group       string `json:"group"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

// installModeTypes are OLM's install modes, in its order.
var installModeTypes = []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}

// infraFeatures are OpenShift's features.operators.openshift.io/NAME
// annotations ("true" declares the feature) and the words the console
// shows for them (openshift/console, operator-hub's InfrastructureFeature).
var infraFeatures = []struct{ key, words string }{
	{"disconnected", "Disconnected"},
	{"proxy-aware", "Proxy-aware"},
	{"fips-compliant", "Designed for FIPS"},
	{"tls-profiles", "Configurable TLS ciphers"},
	{"cnf", "Cloud-Native Network Function"},
	{"cni", "Container Network Interface"},
	{"csi", "Container Storage Interface"},
	{"token-auth-aws", "Short-lived token authentication: AWS"},
	{"token-auth-azure", "Short-lived token authentication: Azure"},
	{"token-auth-gcp", "Short-lived token authentication: GCP"},
}

// legacyInfra are the values of the older
// operators.openshift.io/infrastructure-features annotation (a JSON list).
var legacyInfra = map[string]string{
	"disconnected": "Disconnected",
	"proxy-aware":  "Proxy-aware",
	"fips":         "Designed for FIPS",
	"tls-profiles": "Configurable TLS ciphers",
	"cnf":          "Cloud-Native Network Function",
	"cni":          "Container Network Interface",
	"csi":          "Container Storage Interface",
	"sno":          "Single Node Clusters",
}

// bundleBlob is the part of an olm.bundle blob read here.
type bundleBlob struct {
	Name          string              `json:"name"`
	Image         string              `json:"image"`
	Properties    []property.Property `json:"properties"`
	RelatedImages []relatedImage      `json:"relatedImages"`
}

type relatedImage struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
}

// csvObject is the part of a ClusterServiceVersion read here.
type csvObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
		Labels      map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		CRDs           csv.CustomResourceDefinitions `json:"customresourcedefinitions"`
		APIServices    csv.APIServiceDefinitions     `json:"apiservicedefinitions"`
		Description    string                        `json:"description"`
		DisplayName    string                        `json:"displayName"`
		InstallModes   []csv.InstallMode             `json:"installModes"`
		Keywords       []string                      `json:"keywords"`
		Links          []csv.AppLink                 `json:"links"`
		Maintainers    []csv.Maintainer              `json:"maintainers"`
		Maturity       string                        `json:"maturity"`
		MinKubeVersion string                        `json:"minKubeVersion"`
		NativeAPIs     []csv.GroupVersionKind        `json:"nativeAPIs"`
		Provider       csv.AppLink                   `json:"provider"`
	} `json:"spec"`
}

// lenient decodes data into v as encoding/json does, keeping what decodes
// when a field has the wrong type (encoding/json goes on after a type
// error): a page shows what it can of a CSV.
func lenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// readCSVMetadata returns the CSV metadata of an olm.bundle blob's JSON
// line: its olm.csv.metadata property, else the CSV among its
// olm.bundle.object properties; nil when it has neither. The blob's
// properties' values are slices of line.
func readCSVMetadata(line []byte) (*bundleBlob, *property.CSVMetadata, error) {
	b, err := scanBundle(line)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range b.Properties {
		if p.Type != property.TypeCSVMetadata {
			continue
		}
		var m property.CSVMetadata
		if err := lenient(p.Value, &m); err != nil {
			return b, nil, fmt.Errorf("bundle %q: read %s: %w", b.Name, property.TypeCSVMetadata, err)
		}
		return b, &m, nil
	}
	// The CSV among the objects: found by the start of each object (its
	// kind is near the top when its keys are sorted, as opm writes them),
	// or failing that by decoding each.
	var objects [][]byte
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		r := canonjson.NewReader(p.Value)
		if !r.Object() {
			continue
		}
		for {
			k, ok := r.Key()
			if !ok {
				break
			}
			v := r.Skip()
			if string(k) == "data" {
				if raw, ok := canonjson.RawString(v); ok {
					objects = append(objects, raw)
				}
			}
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, raw := range objects {
			if pass == 0 {
				n := min(len(raw), 1024) &^ 3
				head := make([]byte, base64.StdEncoding.DecodedLen(n))
				k, _ := base64.StdEncoding.Decode(head, raw[:n])
				if !bytes.Contains(head[:k], []byte(csv.Kind)) {
					continue
				}
			}
			data := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
			k, err := base64.StdEncoding.Decode(data, raw)
			if err != nil || !bytes.Contains(data[:k], []byte(csv.Kind)) {
				continue
			}
			if m := csvMetadataOf(data[:k]); m != nil {
				return b, m, nil
			}
		}
	}
	return b, nil, nil
}

// csvMetadataOf reads a bundle object (JSON or YAML) as a CSV; nil when
// it is not one.
func csvMetadataOf(data []byte) *property.CSVMetadata {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] != '{' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil
		}
		data = j
	}
	var c csvObject
	if err := lenient(data, &c); err != nil || c.Kind != csv.Kind {
		return nil
	}
	return &property.CSVMetadata{
		Annotations:               c.Metadata.Annotations,
		Labels:                    c.Metadata.Labels,
		APIServiceDefinitions:     c.Spec.APIServices,
		CustomResourceDefinitions: c.Spec.CRDs,
		Description:               c.Spec.Description,
		DisplayName:               c.Spec.DisplayName,
		InstallModes:              c.Spec.InstallModes,
		Keywords:                  c.Spec.Keywords,
		Links:                     c.Spec.Links,
		Maintainers:               c.Spec.Maintainers,
		Maturity:                  c.Spec.Maturity,
		MinKubeVersion:            c.Spec.MinKubeVersion,
		NativeAPIs:                c.Spec.NativeAPIs,
		Provider:                  c.Spec.Provider,
	}
}

// scanBundle reads the parts of an olm.bundle blob's line that are read
// here, walking the canonical JSON rather than decoding it: a bundle's
// line can be megabytes of base64 objects, of which only the CSV is read.
func scanBundle(line []byte) (*bundleBlob, error) {
	b := &bundleBlob{}
	r := canonjson.NewReader(line)
	if !r.Object() {
		return nil, errors.New("read bundle: not a JSON object")
	}
	str := func(dst *string) {
		if v, ok := canonjson.String(r.Skip()); ok {
			*dst = v
		}
	}
	for {
		k, ok := r.Key()
		if !ok {
			break
		}
		switch string(k) {
		case "name":
			str(&b.Name)
		case "image":
			str(&b.Image)
		case "relatedImages":
			_ = lenient(r.Skip(), &b.RelatedImages)
		case "properties":
			if !r.Array() {
				r.Skip()
				continue
			}
			for r.Next() {
				var p property.Property
				if !r.Object() {
					r.Skip()
					continue
				}
				for {
					pk, ok := r.Key()
					if !ok {
						break
					}
					switch string(pk) {
					case "type":
						str(&p.Type)
					case "value":
						p.Value = r.Skip()
					default:
						r.Skip()
					}
				}
				b.Properties = append(b.Properties, p)
			}
		default:
			r.Skip()
		}
	}
	if r.Pos() != len(line) {
		return nil, fmt.Errorf("read bundle: malformed JSON at byte %d", r.Pos())
	}
	return b, nil
}

// summarize is the list's view of m.
func summarize(m *property.CSVMetadata) operatorSummary {
	a := m.Annotations
	s := operatorSummary{
		DisplayName:      strings.TrimSpace(m.DisplayName),
		ShortDescription: oneLine(a["description"]),
		Provider:         strings.TrimSpace(m.Provider.Name),
		Capabilities:     strings.TrimSpace(a["capabilities"]),
	}
	if s.ShortDescription == "" {
		s.ShortDescription = firstLine(m.Description)
	}
	for _, k := range m.Keywords {
		if k = strings.TrimSpace(k); k != "" && !slices.Contains(s.Keywords, k) {
			s.Keywords = append(s.Keywords, k)
		}
	}
	for c := range strings.SplitSeq(a["categories"], ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(s.Categories, c) {
			s.Categories = append(s.Categories, c)
		}
	}
	for _, t := range installModeTypes {
		for _, im := range m.InstallModes {
			if im.Type == t && im.Supported {
				s.InstallModes = append(s.InstallModes, t)
				break
			}
		}
	}
	s.Infrastructure = infrastructure(a)
	return s
}

// infrastructure lists the infrastructure features the annotations
// declare: the features.operators.openshift.io/NAME annotations that are
// "true", and the older operators.openshift.io/infrastructure-features
// list.
func infrastructure(a map[string]string) []string {
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, f := range infraFeatures {
		if strings.EqualFold(strings.TrimSpace(a["features.operators.openshift.io/"+f.key]), "true") {
			add(f.words)
		}
	}
	if v := a["operators.openshift.io/infrastructure-features"]; v != "" {
		var list []string
		if json.Unmarshal([]byte(v), &list) == nil {
			for _, l := range list {
				l = strings.TrimSpace(l)
				if w, ok := legacyInfra[strings.ToLower(l)]; ok {
					add(w)
				} else if l != "" {
					add(l)
				}
			}
		}
	}
	return out
}

// maxShort bounds a short description, in bytes.
const maxShort = 300

// oneLine is s on one line, cut at maxShort bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxShort {
		cut := maxShort
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// firstLine is the first line of text of a Markdown description: not a
// heading, a rule, a fence or an image.
func firstLine(md string) string {
	for l := range strings.SplitSeq(md, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "---") ||
			strings.HasPrefix(l, "===") || strings.HasPrefix(l, "![") || strings.HasPrefix(l, "[![") || strings.HasPrefix(l, "<") {
			continue
		}
		return oneLine(l)
	}
	return ""
}

// detail is the page's view of m, from bundle.
func detail(bundle string, m *property.CSVMetadata) *operatorDetails {
	a := m.Annotations
	d := &operatorDetails{
		Bundle:          bundle,
		operatorSummary: summarize(m),
		ProviderURL:     linkURL(m.Provider.URL),
		Maintainers: nonEmpty(m.Maintainers, func(x csv.Maintainer) bool {
			return strings.TrimSpace(x.Name) != "" || strings.TrimSpace(x.Email) != ""
		}),
		Maturity:           m.Maturity,
		Repository:         a["repository"],
		ContainerImage:     a["containerImage"],
		CreatedAt:          a["createdAt"],
		Support:            a["support"],
		MinKubeVersion:     m.MinKubeVersion,
		SuggestedNamespace: a["operatorframework.io/suggested-namespace"],
	}
	d.Description, d.DescriptionTruncated = markdown.Cut(m.Description)
	d.DescriptionHTML = markdown.Render(d.Description)
	for _, l := range m.Links {
		l.URL = linkURL(l.URL)
		if strings.TrimSpace(l.Name) != "" || l.URL != "" {
			d.Links = append(d.Links, l)
		}
	}
	d.NativeAPIs = nonEmpty(m.NativeAPIs, func(x csv.GroupVersionKind) bool { return x.Kind != "" })
	if v := a["operators.openshift.io/valid-subscription"]; v != "" {
		var list []string
		_ = json.Unmarshal([]byte(v), &list)
		d.ValidSubscription = nonEmpty(list, func(x string) bool { return strings.TrimSpace(x) != "" })
	}
	for _, t := range installModeTypes {
		for _, im := range m.InstallModes {
			if im.Type == t && !im.Supported {
				d.UnsupportedInstallModes = append(d.UnsupportedInstallModes, t)
				break
			}
		}
	}
	examples, problem := almExamples(a["alm-examples"])
	d.ExamplesProblem = problem
	used := make([]bool, len(examples))
	for _, c := range m.CustomResourceDefinitions.Owned {
		if c.Name == "" && c.Kind == "" {
			continue // not a CRD (a CSV's list holding a wrong value)
		}
		ca := crdOf(c)
		group := ""
		if _, g, ok := strings.Cut(c.Name, "."); ok {
			group = g
		}
		// The examples of the CRD's kind, group and version; failing
		// that, of its kind and group (another served version).
		for pass := 0; pass < 2 && len(ca.Examples) == 0; pass++ {
			for i, e := range examples {
				g, v := splitAPIVersion(e.apiVersion)
				if e.kind == c.Kind && g == group && (pass == 1 || v == c.Version) && !used[i] {
					ca.Examples = append(ca.Examples, e.text)
					used[i] = true
				}
			}
		}
		d.OwnedCRDs = append(d.OwnedCRDs, ca)
	}
	for i, e := range examples {
		if !used[i] {
			d.Examples = append(d.Examples, e.text)
		}
	}
	for _, c := range m.CustomResourceDefinitions.Required {
		if c.Name != "" || c.Kind != "" {
			d.RequiredCRDs = append(d.RequiredCRDs, crdOf(c))
		}
	}
	for _, s := range m.APIServiceDefinitions.Owned {
		if s.Name != "" || s.Kind != "" {
			d.OwnedAPIServices = append(d.OwnedAPIServices, apiServiceOf(s))
		}
	}
	for _, s := range m.APIServiceDefinitions.Required {
		if s.Name != "" || s.Kind != "" {
			d.RequiredAPIServices = append(d.RequiredAPIServices, apiServiceOf(s))
		}
	}
	return d
}

// linkURL is u, less its surrounding spaces, when it is a URL a page may
// link to (markdown.LinkURL), else "": a javascript: URL, a relative one
// or text is left out of the answer, so that no client makes a link of it.
func linkURL(u string) string {
	if u = strings.TrimSpace(u); markdown.LinkURL(u) {
		return u
	}
	return ""
}

// nonEmpty is the elements of list that keep says are not empty: a CSV
// read leniently can hold empty ones (a list with a number in it), which
// the page would show as stray commas.
func nonEmpty[T any](list []T, keep func(T) bool) []T {
	var out []T
	for _, x := range list {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func crdOf(c csv.CRDDescription) crdAnswer {
	return crdAnswer{Name: c.Name, Version: c.Version, Kind: c.Kind, DisplayName: c.DisplayName, Description: c.Description}
}

func apiServiceOf(s csv.APIServiceDescription) apiServiceBrief {
	return apiServiceBrief{Name: s.Name, Group: s.Group, Version: s.Version, Kind: s.Kind, DisplayName: s.DisplayName, Description: s.Description}
}

func splitAPIVersion(av string) (group, version string) {
	if g, v, ok := strings.Cut(av, "/"); ok {
		return g, v
	}
	return "", av
}

type example struct {
	apiVersion, kind string
	text             string // indented JSON
}

// almExamples reads the alm-examples annotation: a JSON list of custom
// resources (objects). What is not read is said in words: the annotation
// is not a list, or some of its items are not objects (they are left out).
func almExamples(s string) ([]example, string) {
	if strings.TrimSpace(s) == "" {
		return nil, ""
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, "the alm-examples annotation is " + jsonKind(te.Value) + ", not a JSON list of custom resources"
		}
		return nil, "the alm-examples annotation is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	var out []example
	skipped := 0
	for _, raw := range list {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			skipped++
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := lenient(raw, &head); err != nil {
			skipped++
			continue
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			skipped++
			continue
		}
		out = append(out, example{apiVersion: head.APIVersion, kind: head.Kind, text: buf.String()})
	}
	problem := ""
	if skipped > 0 {
		problem = fmt.Sprintf("%d of the %d items of the alm-examples annotation are not objects (custom resources): left out", skipped, len(list))
	}
	return out, problem
}

// jsonKind names a JSON value's kind as encoding/json's UnmarshalTypeError
// gives it ("object", "string", "number", "bool"), with an article.
func jsonKind(v string) string {
	switch v {
	case "object":
		return "a JSON object"
	case "string":
		return "a JSON string"
	case "number":
		return "a JSON number"
	case "bool":
		return "a JSON true or false"
	}
	return "JSON " + v
}

// readLine reads line i of the snapshot's JSON lines, without its newline.
func (s *Server) readLine(i int32, buf []byte) ([]byte, error) {
	off, n := s.lines.Line(int(i))
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.lines.ReadAt(buf, off); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf, []byte("\n")), nil
}

// bundleLine reads the olm.bundle blob of a package's bundle; nil when the
// catalog has none.
func (s *Server) bundleLine(pkg, name string, buf []byte) ([]byte, error) {
	idx := s.lines.Select(declcfg.SchemaBundle, pkg, name)
	if len(idx) == 0 {
		return nil, nil
	}
	return s.readLine(idx[0], buf)
}

// packageBlob reads the olm.package blob of a package.
func (s *Server) packageBlob(name string) (*declcfg.Package, error) {
	idx := s.lines.Select(declcfg.SchemaPackage, "", name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("package %q has no olm.package blob", name)
	}
	line, err := s.readLine(idx[0], nil)
	if err != nil {
		return nil, err
	}
	p, err := declcfg.DecodePackage(line)
	if err != nil {
		return nil, fmt.Errorf("package %q: %w", name, err)
	}
	return &p, nil
}
