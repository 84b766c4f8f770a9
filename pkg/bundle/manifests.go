package bundle

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastopm/fastopm/pkg/canonjson"
	"github.com/fastopm/fastopm/pkg/csv"
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

// csvInfo is the bundle's ClusterServiceVersion, read as upstream's bundle
// parser reads it (csv.View), and the file it came from.
type csvInfo struct {
	*csv.View
	file string
}

// newCSVInfo reads the CSV manifest m.
func newCSVInfo(m *manifest) (*csvInfo, error) {
	v, err := csv.NewView(m.obj.m)
	if err != nil {
		return nil, err
	}
	return &csvInfo{View: v, file: m.file}, nil
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
				return nil, fmt.Errorf("%s.served: expected a boolean, found %s", path, canonjson.DescribeValue(s))
			}
			c.versions = append(c.versions, cv)
		}
	default:
		return nil, fmt.Errorf("spec.versions: expected an array, found %s", canonjson.DescribeValue(vs))
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
		return nil, fmt.Errorf("%s: expected an object, found %s", path, canonjson.DescribeValue(v))
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
		return "", fmt.Errorf("%s: expected a string, found %s", path, canonjson.DescribeValue(v))
	}
}

// providedAPIs returns every API of the bundle's CRDs (all their versions)
// and the CSV's owned APIServices, with whether each is served.
func providedAPIs(crds []*crdInfo, ownedAPIServices []csv.DefinitionKey) map[apiKey]bool {
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
func crdKey(d csv.DefinitionKey) (apiKey, error) {
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
