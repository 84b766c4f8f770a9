package bundle

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

const (
	kindCSV = "ClusterServiceVersion"
	kindCRD = "CustomResourceDefinition"

	groupAPIExtensions = "apiextensions.k8s.io"
)

// manifest is one decoded file of manifests/.
type manifest struct {
	file string // path inside the bundle, e.g. "manifests/foo.yaml"
	obj  object
	json []byte // the object as upstream marshals it
}

// csvInfo is the bundle's ClusterServiceVersion as upstream's
// registry.ClusterServiceVersion sees it: typed metadata and the spec as raw
// JSON, read field by field on demand.
type csvInfo struct {
	file        string
	name        string
	annotations map[string]string
	spec        []byte                      // spec as JSON
	fields      map[string]*json.RawMessage // spec's top-level keys
}

// newCSVInfo checks the CSV's metadata the way apimachinery's typed
// conversion into ObjectMeta would (the fields opm reads) and keeps its spec.
func newCSVInfo(m *manifest) (*csvInfo, error) {
	c := &csvInfo{file: m.file}
	switch meta := m.obj.m["metadata"].(type) {
	case nil:
	case map[string]any:
		for _, k := range []string{"name", "generateName", "namespace"} {
			switch v := meta[k].(type) {
			case nil:
			case string:
				if k == "name" {
					c.name = v
				}
			default:
				return nil, fmt.Errorf("metadata.%s: expected a string, found %s", k, jsonKind(v))
			}
		}
		if _, err := stringMap(meta, "labels"); err != nil {
			return nil, err
		}
		ann, err := stringMap(meta, "annotations")
		if err != nil {
			return nil, err
		}
		c.annotations = ann
		switch ts := meta["creationTimestamp"].(type) {
		case nil:
		case string:
			if _, err := time.Parse(time.RFC3339, ts); err != nil {
				return nil, fmt.Errorf("metadata.creationTimestamp: %w", err)
			}
		default:
			return nil, fmt.Errorf("metadata.creationTimestamp: expected a string, found %s", jsonKind(ts))
		}
	default:
		return nil, fmt.Errorf("metadata: expected an object, found %s", jsonKind(meta))
	}
	spec, ok := m.obj.m["spec"].(map[string]any)
	if !ok {
		if m.obj.m["spec"] == nil {
			return nil, fmt.Errorf("spec is missing")
		}
		return nil, fmt.Errorf("spec: expected an object, found %s", jsonKind(m.obj.m["spec"]))
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	c.spec = b
	if err := json.Unmarshal(b, &c.fields); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return c, nil
}

// stringMap reads meta[key] as a map of strings (null values read as "").
func stringMap(meta map[string]any, key string) (map[string]string, error) {
	switch v := meta[key].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		out := make(map[string]string, len(v))
		for k, e := range v {
			switch s := e.(type) {
			case nil:
				out[k] = ""
			case string:
				out[k] = s
			default:
				return nil, fmt.Errorf("metadata.%s[%q]: expected a string, found %s", key, k, jsonKind(e))
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("metadata.%s: expected an object, found %s", key, jsonKind(v))
	}
}

// specField returns the raw value of a top-level spec key (matched exactly,
// as upstream's map lookup does), nil when absent or null.
func (c *csvInfo) specField(key string) json.RawMessage {
	v := c.fields[key]
	if v == nil || string(*v) == "null" {
		return nil
	}
	return *v
}

// version returns spec.version, "" when absent.
func (c *csvInfo) version() (string, error) {
	raw := c.specField("version")
	if raw == nil {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("spec.version: %w", err)
	}
	return v, nil
}

// definitionKey is an owned or required CRD or APIService of the CSV.
type definitionKey struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// definitions reads spec.<key>.owned and .required.
func (c *csvInfo) definitions(key string) (owned, required []definitionKey, err error) {
	raw := c.specField(key)
	if raw == nil {
		return nil, nil, nil
	}
	var defs struct {
		Owned    []*definitionKey `json:"owned"`
		Required []*definitionKey `json:"required"`
	}
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, nil, fmt.Errorf("spec.%s: %w", key, err)
	}
	deref := func(list []*definitionKey, which string) ([]definitionKey, error) {
		out := make([]definitionKey, 0, len(list))
		for i, d := range list {
			if d == nil {
				return nil, fmt.Errorf("spec.%s.%s[%d] is null", key, which, i)
			}
			out = append(out, *d)
		}
		return out, nil
	}
	if owned, err = deref(defs.Owned, "owned"); err != nil {
		return nil, nil, err
	}
	if required, err = deref(defs.Required, "required"); err != nil {
		return nil, nil, err
	}
	return owned, required, nil
}

// relatedImages reads spec.relatedImages.
func (c *csvInfo) relatedImages() ([]declcfg.RelatedImage, error) {
	raw := c.specField("relatedImages")
	if raw == nil {
		return nil, nil
	}
	var out []declcfg.RelatedImage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("spec.relatedImages: %w", err)
	}
	return out, nil
}

// operatorImages returns the images of the containers and init containers
// of the install strategy's deployments, in order of appearance and without
// repeats. Like upstream (registry.ClusterServiceVersion.GetOperatorImages)
// the spec is decoded with encoding/json's case-insensitive field matching,
// and a strategy other than "deployment" has no images.
func (c *csvInfo) operatorImages() ([]string, error) {
	type container struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	type podSpec struct {
		Containers     []container `json:"containers"`
		InitContainers []container `json:"initContainers"`
	}
	type podTemplate struct {
		Spec podSpec `json:"spec"`
	}
	type deploymentSpec struct {
		Template podTemplate `json:"template"`
	}
	type deployment struct {
		Name string
		Spec deploymentSpec
	}
	type strategySpec struct {
		Deployments []deployment
	}
	type strategy struct {
		Name string       `json:"strategy"`
		Spec strategySpec `json:"spec"`
	}
	var spec struct {
		Install strategy
	}
	if err := json.Unmarshal(c.spec, &spec); err != nil {
		return nil, fmt.Errorf("spec.install: %w", err)
	}
	if spec.Install.Name != "deployment" {
		return nil, nil
	}
	var (
		out  []string
		seen = map[string]bool{}
	)
	add := func(img string) {
		if !seen[img] {
			seen[img] = true
			out = append(out, img)
		}
	}
	for _, d := range spec.Install.Spec.Deployments {
		for _, ct := range d.Spec.Template.Spec.Containers {
			add(ct.Image)
		}
		for _, ct := range d.Spec.Template.Spec.InitContainers {
			add(ct.Image)
		}
	}
	return out, nil
}

// apiKey identifies an API the way upstream's registry.APIKey does.
type apiKey struct {
	Group, Version, Kind, Plural string
}

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s/%s (%s)", k.Group, k.Version, k.Kind, k.Plural)
}

// crdInfo is what opm reads from a CustomResourceDefinition.
type crdInfo struct {
	file     string
	group    string
	kind     string
	plural   string
	versions []crdVersion
}

type crdVersion struct {
	name   string
	served bool
}

// newCRDInfo reads an apiextensions.k8s.io/v1 or v1beta1 CRD (version is
// the apiVersion's version). Keys match exactly and values must have the
// right JSON type, as in apimachinery's typed decoding.
func newCRDInfo(m *manifest, group, version string) (*crdInfo, error) {
	if group != groupAPIExtensions {
		return nil, fmt.Errorf("apiVersion %q: kind CustomResourceDefinition is only known in group %s", m.obj.apiVersion(), groupAPIExtensions)
	}
	c := &crdInfo{file: m.file}
	spec, err := objField(m.obj.m, "spec", "spec")
	if err != nil {
		return nil, err
	}
	if c.group, err = strField(spec, "group", "spec.group"); err != nil {
		return nil, err
	}
	names, err := objField(spec, "names", "spec.names")
	if err != nil {
		return nil, err
	}
	if c.kind, err = strField(names, "kind", "spec.names.kind"); err != nil {
		return nil, err
	}
	if c.plural, err = strField(names, "plural", "spec.names.plural"); err != nil {
		return nil, err
	}
	switch vs := spec["versions"].(type) {
	case nil:
	case []any:
		for i, e := range vs {
			path := fmt.Sprintf("spec.versions[%d]", i)
			v, err := objField(map[string]any{"v": e}, "v", path)
			if err != nil {
				return nil, err
			}
			var cv crdVersion
			if cv.name, err = strField(v, "name", path+".name"); err != nil {
				return nil, err
			}
			switch s := v["served"].(type) {
			case nil:
			case bool:
				cv.served = s
			default:
				return nil, fmt.Errorf("%s.served: expected a boolean, found %s", path, jsonKind(s))
			}
			c.versions = append(c.versions, cv)
		}
	default:
		return nil, fmt.Errorf("spec.versions: expected an array, found %s", jsonKind(vs))
	}
	if version == "v1beta1" {
		legacy, err := strField(spec, "version", "spec.version")
		if err != nil {
			return nil, err
		}
		if legacy != "" {
			// The legacy single version is served unless versions says
			// otherwise.
			served := true
			for _, v := range c.versions {
				if v.name == legacy {
					served = v.served
				}
			}
			c.versions = append(c.versions, crdVersion{name: legacy, served: served})
		}
	}
	return c, nil
}

// objField reads m[key] as an object; null or absent gives an empty one.
func objField(m map[string]any, key, path string) (map[string]any, error) {
	switch v := m[key].(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: expected an object, found %s", path, jsonKind(v))
	}
}

// strField reads m[key] as a string; null or absent gives "".
func strField(m map[string]any, key, path string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: expected a string, found %s", path, jsonKind(v))
	}
}

// providedAPIs returns every API of the bundle's CRDs (all their versions)
// and the CSV's owned APIServices, with whether each is served.
func providedAPIs(crds []*crdInfo, ownedAPIServices []definitionKey) map[apiKey]bool {
	out := map[apiKey]bool{}
	for _, c := range crds {
		for _, v := range c.versions {
			k := apiKey{Group: c.group, Version: v.name, Kind: c.kind, Plural: c.plural}
			out[k] = out[k] || v.served
		}
	}
	for _, a := range ownedAPIServices {
		out[apiKey{Group: a.Group, Version: a.Version, Kind: a.Kind, Plural: a.Name}] = true
	}
	return out
}

// crdKey turns an owned or required CRD of the CSV into an API key; the
// CRD name must be "<plural>.<group>".
func crdKey(d definitionKey) (apiKey, error) {
	plural, group, ok := strings.Cut(d.Name, ".")
	if !ok {
		return apiKey{}, fmt.Errorf("couldn't parse plural.group from crd name: %s", d.Name)
	}
	return apiKey{Group: group, Version: d.Version, Kind: d.Kind, Plural: plural}, nil
}

// sortedKeys lists the keys of a set in a stable order.
func sortedKeys(set map[apiKey]bool) []apiKey {
	out := make([]apiKey, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
