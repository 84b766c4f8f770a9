package olmv1

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// Manifest is what OLM v1's checks read of a registry+v1 bundle's
// manifests (its olm.bundle.object properties, or the manifests/ of its
// image): the ClusterServiceVersion's install modes, deployments, owned
// CRDs and API services and webhooks, the CRDs, and the other objects'
// kinds and names. It is small: a catalog's bundles keep theirs, not the
// manifests.
type Manifest struct {
	// CSV is false when no manifest is a ClusterServiceVersion.
	CSV         bool
	CSVName     string
	InstallMode []InstallMode
	Deployments []string
	// OwnedCRDs are spec.customresourcedefinitions.owned[].name.
	OwnedCRDs []string
	// OwnedAPIServices counts spec.apiservicedefinitions.owned.
	OwnedAPIServices int
	Webhooks         []Webhook
	CRDs             []CRD
	Others           []Object
	// Errors are manifests that could not be read, in words.
	Errors []string
}

// InstallMode is one of the CSV's spec.installModes.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// Webhook is one of the CSV's spec.webhookdefinitions.
type Webhook struct {
	Type           string        `json:"type"`
	GenerateName   string        `json:"generateName"`
	DeploymentName string        `json:"deploymentName"`
	ConversionCRDs []string      `json:"conversionCRDs"`
	Rules          []WebhookRule `json:"rules"`
}

// WebhookRule is the part of an admission webhook's rule the checks read.
type WebhookRule struct {
	APIGroups []string `json:"apiGroups"`
	Resources []string `json:"resources"`
}

// CRD is a CustomResourceDefinition of the bundle.
type CRD struct {
	Name                  string
	PreserveUnknownFields bool
}

// Object is another object of the bundle: its kind and name.
type Object struct {
	Kind, Name string
}

// The webhook types of a CSV.
const (
	webhookConversion = "ConversionWebhook"
)

// The install modes.
const (
	AllNamespaces   = "AllNamespaces"
	SingleNamespace = "SingleNamespace"
	OwnNamespace    = "OwnNamespace"
	MultiNamespace  = "MultiNamespace"
)

// AddObject reads one manifest (JSON or YAML) into m. As
// operator-controller reads a bundle, a second ClusterServiceVersion
// replaces the first. The manifest is made canonical (a fast check when it
// already is, as catalogs write objects) and only the members the checks
// read are decoded: a CRD's schema and a CSV's descriptions are skipped.
func (m *Manifest) AddObject(data []byte) {
	js, err := property.ManifestJSON(data)
	if err != nil {
		m.Errors = append(m.Errors, fmt.Sprintf("a manifest is neither JSON nor YAML: %v", err))
		return
	}
	var c canonjson.Canonicalizer
	canon, _, _, err := c.Value(js, 0)
	if err != nil || canonjson.Kind(canon) != '{' {
		why := "it is not an object"
		if err != nil {
			why = err.Error()
		}
		m.Errors = append(m.Errors, "a manifest does not decode: "+why)
		return
	}
	var kind, name string
	var spec []byte
	canonjson.ForEachMember(canon, func(k, v []byte) bool {
		switch string(k) {
		case "kind":
			kind, _ = canonjson.String(v)
		case "metadata":
			canonjson.ForEachMember(v, func(k, v []byte) bool {
				if string(k) == "name" {
					name, _ = canonjson.String(v)
					return false
				}
				return true
			})
		case "spec":
			spec = v
		}
		return true
	})
	switch kind {
	case "ClusterServiceVersion":
		if err := m.addCSV(spec); err != nil {
			m.Errors = append(m.Errors, fmt.Sprintf("manifest %q (ClusterServiceVersion) does not decode: %v", name, err))
			return
		}
		m.CSV, m.CSVName = true, name
	case "CustomResourceDefinition":
		crd := CRD{Name: name}
		canonjson.ForEachMember(spec, func(k, v []byte) bool {
			if string(k) == "preserveUnknownFields" {
				crd.PreserveUnknownFields = string(v) == "true"
				return false
			}
			return true
		})
		m.CRDs = append(m.CRDs, crd)
	default:
		m.Others = append(m.Others, Object{Kind: kind, Name: name})
	}
}

// addCSV reads a CSV's spec: the install strategy's deployment names, the
// owned CRDs and API services, the webhooks and the install modes.
// specListError says in words what is wrong in the list at spec.field of
// a CSV, naming the field by its path: `"spec.installModes[].supported"
// must be a boolean, found a string`.
func specListError(field string, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return err
	}
	path := "spec." + field
	if te.Field != "" {
		path += "[]." + te.Field
	}
	return errors.New(property.ExplainTypeError(&json.UnmarshalTypeError{Value: te.Value, Type: te.Type, Field: path}))
}

func (m *Manifest) addCSV(spec []byte) error {
	var (
		deployments, owned []string
		apis               int
		webhooks           []Webhook
		modes              []InstallMode
		err                error
	)
	names := func(arr []byte) []string {
		var out []string
		canonjson.ForEachElement(arr, func(e []byte) bool {
			canonjson.ForEachMember(e, func(k, v []byte) bool {
				if string(k) == "name" {
					s, _ := canonjson.String(v)
					out = append(out, s)
					return false
				}
				return true
			})
			return true
		})
		return out
	}
	canonjson.ForEachMember(spec, func(k, v []byte) bool {
		switch string(k) {
		case "install":
			canonjson.ForEachMember(v, func(k, v []byte) bool {
				if string(k) == "spec" {
					canonjson.ForEachMember(v, func(k, v []byte) bool {
						if string(k) == "deployments" {
							deployments = names(v)
						}
						return true
					})
				}
				return true
			})
		case "customresourcedefinitions":
			canonjson.ForEachMember(v, func(k, v []byte) bool {
				if string(k) == "owned" {
					owned = names(v)
				}
				return true
			})
		case "apiservicedefinitions":
			canonjson.ForEachMember(v, func(k, v []byte) bool {
				if string(k) == "owned" {
					canonjson.ForEachElement(v, func([]byte) bool { apis++; return true })
				}
				return true
			})
		case "webhookdefinitions":
			if canonjson.Kind(v) != 'n' {
				if e := json.Unmarshal(v, &webhooks); e != nil {
					err = specListError("webhookdefinitions", e)
				}
			}
		case "installModes":
			if canonjson.Kind(v) != 'n' {
				if e := json.Unmarshal(v, &modes); e != nil {
					err = specListError("installModes", e)
				}
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	m.InstallMode, m.Deployments, m.OwnedCRDs, m.OwnedAPIServices, m.Webhooks = modes, deployments, owned, apis, webhooks
	return nil
}

// ManifestOfProperties reads the olm.bundle.object properties of a
// bundle; nil when it has none. Values that do not decode are reported in
// the Manifest's Errors.
func ManifestOfProperties(props []property.Property) *Manifest {
	var m *Manifest
	var buf []byte
	for _, p := range props {
		if p.Type != property.TypeBundleObject {
			continue
		}
		if m == nil {
			m = &Manifest{}
		}
		var err error
		buf, err = property.BundleObjectData(buf[:0], p.Value)
		if err != nil {
			m.Errors = append(m.Errors, fmt.Sprintf("an olm.bundle.object property does not decode: %v", err))
			continue
		}
		if len(buf) == 0 {
			continue
		}
		m.AddObject(buf)
	}
	return m
}

// csvMetadata is what the checks read of an olm.csv.metadata property.
type csvMetadata struct {
	InstallModes     []InstallMode
	ownedAPIServices int
}
