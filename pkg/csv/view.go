package csv

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// View is a ClusterServiceVersion as upstream's bundle parser reads it
// (operator-registry's registry.ClusterServiceVersion): the metadata opm
// reads, checked as apimachinery's typed decoding of ObjectMeta would check
// it, and the spec kept as JSON and read field by field when asked, so that
// a field opm never reads cannot fail a bundle. (ClusterServiceVersion is
// the whole typed object, for the CSVs opm writes.)
type View struct {
	// Name is metadata.name.
	Name string
	// Annotations are metadata.annotations (a null value reads as "").
	Annotations map[string]string

	spec   []byte                      // spec as JSON
	fields map[string]*json.RawMessage // spec's top-level keys
}

// NewView reads a CSV decoded from YAML or JSON into obj.
func NewView(obj map[string]any) (*View, error) {
	c := &View{}
	switch meta := obj["metadata"].(type) {
	case nil:
	case map[string]any:
		for _, k := range []string{"name", "generateName", "namespace"} {
			switch v := meta[k].(type) {
			case nil:
			case string:
				if k == "name" {
					c.Name = v
				}
			default:
				return nil, fmt.Errorf("metadata.%s: expected a string, found %s", k, canonjson.DescribeValue(v))
			}
		}
		if _, err := stringMap(meta, "labels"); err != nil {
			return nil, err
		}
		ann, err := stringMap(meta, "annotations")
		if err != nil {
			return nil, err
		}
		c.Annotations = ann
		switch ts := meta["creationTimestamp"].(type) {
		case nil:
		case string:
			if _, err := time.Parse(time.RFC3339, ts); err != nil {
				return nil, fmt.Errorf("metadata.creationTimestamp: %w", err)
			}
		default:
			return nil, fmt.Errorf("metadata.creationTimestamp: expected a string, found %s", canonjson.DescribeValue(ts))
		}
	default:
		return nil, fmt.Errorf("metadata: expected an object, found %s", canonjson.DescribeValue(meta))
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		if obj["spec"] == nil {
			return nil, fmt.Errorf("spec is missing")
		}
		return nil, fmt.Errorf("spec: expected an object, found %s", canonjson.DescribeValue(obj["spec"]))
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
				return nil, fmt.Errorf("metadata.%s[%q]: expected a string, found %s", key, k, canonjson.DescribeValue(e))
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("metadata.%s: expected an object, found %s", key, canonjson.DescribeValue(v))
	}
}

// specField returns the raw value of a top-level spec key (matched exactly,
// as upstream's map lookup does), nil when absent or null.
func (c *View) specField(key string) json.RawMessage {
	v := c.fields[key]
	if v == nil || string(*v) == "null" {
		return nil
	}
	return *v
}

// Version returns spec.version, "" when absent.
func (c *View) Version() (string, error) {
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

// DefinitionKey is an owned or required CRD or APIService of the CSV.
type DefinitionKey struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Definitions reads spec.<key>.owned and .required (key is
// customresourcedefinitions or apiservicedefinitions, matched as upstream's
// encoding/json matches it).
func (c *View) Definitions(key string) (owned, required []DefinitionKey, err error) {
	raw := c.specField(key)
	if raw == nil {
		return nil, nil, nil
	}
	var defs struct {
		Owned    []*DefinitionKey `json:"owned"`
		Required []*DefinitionKey `json:"required"`
	}
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, nil, fmt.Errorf("spec.%s: %w", key, err)
	}
	deref := func(list []*DefinitionKey, which string) ([]DefinitionKey, error) {
		out := make([]DefinitionKey, 0, len(list))
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

// RelatedImages reads spec.relatedImages.
func (c *View) RelatedImages() ([]RelatedImage, error) {
	raw := c.specField("relatedImages")
	if raw == nil {
		return nil, nil
	}
	var out []RelatedImage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("spec.relatedImages: %w", err)
	}
	return out, nil
}

// OperatorImages returns the images of the containers and init containers
// of the install strategy's deployments, in order of appearance and without
// repeats. Like upstream (registry.ClusterServiceVersion.GetOperatorImages)
// the spec is decoded with encoding/json's case-insensitive field matching,
// and a strategy other than "deployment" has no images.
func (c *View) OperatorImages() ([]string, error) {
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
