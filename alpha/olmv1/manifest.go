package olmv1

import (
	"encoding/json"
	"fmt"

	"github.com/fastopm/fastopm/alpha/property"
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

// object is what the checks read of any manifest, decoded in one pass:
// the kind and name, and the spec fields of a CSV and of a CRD (their
// names do not overlap).
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		// ClusterServiceVersion
		Install struct {
			Spec struct {
				Deployments []struct {
					Name string `json:"name"`
				} `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
		CRDs struct {
			Owned []struct {
				Name string `json:"name"`
			} `json:"owned"`
		} `json:"customresourcedefinitions"`
		APIServices struct {
			Owned []struct{} `json:"owned"`
		} `json:"apiservicedefinitions"`
		Webhooks     []Webhook     `json:"webhookdefinitions"`
		InstallModes []InstallMode `json:"installModes"`
		// CustomResourceDefinition
		PreserveUnknownFields bool `json:"preserveUnknownFields"`
	} `json:"spec"`
}

// AddObject reads one manifest (JSON or YAML) into m. As
// operator-controller reads a bundle, a second ClusterServiceVersion
// replaces the first.
func (m *Manifest) AddObject(data []byte) {
	js, err := property.ManifestJSON(data)
	if err != nil {
		m.Errors = append(m.Errors, fmt.Sprintf("a manifest is neither JSON nor YAML: %v", err))
		return
	}
	var o object
	if err := json.Unmarshal(js, &o); err != nil {
		// Only a CSV's and a CRD's spec must decode; of another object,
		// whose spec may hold anything, the kind and name are enough.
		var h struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal(js, &h) != nil || h.Kind == "ClusterServiceVersion" || h.Kind == "CustomResourceDefinition" {
			m.Errors = append(m.Errors, fmt.Sprintf("manifest %q (%s) does not decode: %v", h.Metadata.Name, h.Kind, err))
			return
		}
		m.Others = append(m.Others, Object{Kind: h.Kind, Name: h.Metadata.Name})
		return
	}
	switch o.Kind {
	case "ClusterServiceVersion":
		c := &o.Spec
		m.CSV, m.CSVName = true, o.Metadata.Name
		m.InstallMode = c.InstallModes
		m.Deployments = m.Deployments[:0]
		for _, d := range c.Install.Spec.Deployments {
			m.Deployments = append(m.Deployments, d.Name)
		}
		m.OwnedCRDs = m.OwnedCRDs[:0]
		for _, d := range c.CRDs.Owned {
			m.OwnedCRDs = append(m.OwnedCRDs, d.Name)
		}
		m.OwnedAPIServices = len(c.APIServices.Owned)
		m.Webhooks = c.Webhooks
	case "CustomResourceDefinition":
		m.CRDs = append(m.CRDs, CRD{Name: o.Metadata.Name, PreserveUnknownFields: o.Spec.PreserveUnknownFields})
	default:
		m.Others = append(m.Others, Object{Kind: o.Kind, Name: o.Metadata.Name})
	}
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
	InstallModes []InstallMode `json:"installModes"`
	APIServices  struct {
		Owned []json.RawMessage `json:"owned"`
	} `json:"apiServiceDefinitions"`
}
