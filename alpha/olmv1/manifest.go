package olmv1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

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
	// unreadable: the ClusterServiceVersion, or the manifests, could not
	// be read (Errors say why); nothing else can be checked.
	unreadable bool
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

// AddObject reads one manifest (JSON or YAML) into m, every document of
// it, as operator-controller reads a file of a bundle's manifests/: a
// stream of JSON values, or YAML documents separated by "---", empty and
// null documents skipped. As operator-controller reads a bundle, a second
// ClusterServiceVersion replaces the first. Each document is made
// canonical (a fast check when it already is, as catalogs write objects)
// and only the members the checks read are decoded: a CRD's schema and a
// CSV's descriptions are skipped.
func (m *Manifest) AddObject(data []byte) {
	var c canonjson.Canonicalizer
	if t := bytes.TrimLeftFunc(data, unicode.IsSpace); len(t) > 0 && t[0] == '{' {
		for pos := 0; ; {
			canon, _, end, err := c.Value(data, pos)
			if err != nil {
				m.Errors = append(m.Errors, "a manifest does not decode: "+err.Error())
				return
			}
			if canon == nil {
				return
			}
			m.addDocument(canon)
			pos = end
		}
	}
	docs := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			m.Errors = append(m.Errors, fmt.Sprintf("a manifest is neither JSON nor YAML: %v", err))
			return
		}
		js, err := property.ManifestJSON(doc)
		if err != nil {
			m.Errors = append(m.Errors, fmt.Sprintf("a manifest is neither JSON nor YAML: %v", err))
			return
		}
		canon, _, _, err := c.Value(js, 0)
		if err != nil {
			m.Errors = append(m.Errors, "a manifest does not decode: "+err.Error())
			return
		}
		m.addDocument(canon)
	}
}

// addDocument reads one document, canonical JSON: a null one is nothing,
// as it is to operator-controller.
func (m *Manifest) addDocument(canon []byte) {
	switch canonjson.Kind(canon) {
	case 0, 'n':
		return
	case '{':
	default:
		m.Errors = append(m.Errors, "a manifest does not decode: it is not an object")
		return
	}
	var kind, name, meta, spec []byte
	canonjson.ForEachMember(canon, func(k, v []byte) bool {
		switch string(k) {
		case "kind":
			kind = v
		case "metadata":
			meta = v
		case "spec":
			spec = v
		}
		return true
	})
	canonjson.ForEachMember(meta, func(k, v []byte) bool {
		if string(k) == "name" {
			name = v
			return false
		}
		return true
	})
	// What an object's metadata.name reads as (unstructured's GetName):
	// "" when it is not a string.
	objName, _ := canonjson.String(name)
	k, ok := canonjson.String(kind)
	if canonjson.Kind(kind) == 0 || canonjson.Kind(kind) == 'n' || (ok && k == "") {
		// operator-controller's decoder refuses it: Object 'Kind' is missing.
		if objName == "" {
			m.Errors = append(m.Errors, "a manifest has no kind")
		} else {
			m.Errors = append(m.Errors, fmt.Sprintf("manifest %q has no kind", objName))
		}
		return
	}
	if !ok {
		m.Errors = append(m.Errors, fmt.Sprintf("manifest %q does not decode: %v", objName, typeError("kind", kind, "a string")))
		return
	}
	switch k {
	case "ClusterServiceVersion", "CustomResourceDefinition":
		// Decoded into their types: the metadata must be read as one.
		var r specReader
		if r.object("metadata", meta) {
			r.str("metadata.name", name)
		}
		if k == "ClusterServiceVersion" {
			if r.err == nil {
				r.err = m.addCSV(spec)
			}
			if r.err != nil {
				m.Errors = append(m.Errors, fmt.Sprintf("manifest %q (ClusterServiceVersion) does not decode: %v", objName, r.err))
				m.unreadable = true
				return
			}
			m.CSV, m.CSVName = true, objName
			return
		}
		crd := CRD{Name: objName}
		if r.object("spec", spec) {
			canonjson.ForEachMember(spec, func(k, v []byte) bool {
				if string(k) == "preserveUnknownFields" {
					crd.PreserveUnknownFields = r.boolean("spec.preserveUnknownFields", v)
					return false
				}
				return true
			})
		}
		if r.err != nil {
			m.Errors = append(m.Errors, fmt.Sprintf("manifest %q (CustomResourceDefinition) does not decode: %v", objName, r.err))
		}
		// Kept even so: its name is known, and the checks that name it
		// are not to fail for it too.
		m.CRDs = append(m.CRDs, crd)
	default:
		m.Others = append(m.Others, Object{Kind: k, Name: objName})
	}
}

// specReader reads the members of a manifest the checks read as
// operator-controller decodes them into their Go types: members by their
// exact names, null as the member's zero value, and a value of another
// JSON type an error (err, the first one), named by its path.
type specReader struct{ err error }

// typeError says that the value v at path is not of the JSON type want
// names: `"spec.installModes" must be a list of objects, found a string`.
func typeError(path string, v []byte, want string) error {
	found := map[string]string{"string": "a string", "object": "an object", "array": "a list", "bool": "a boolean", "number": "a number"}[canonjson.TypeName(v)]
	return fmt.Errorf("%q must be %s, found %s", path, want, found)
}

// is reports whether v is a value of the JSON kind (canonjson.Kind) that
// want names; not when it is null or absent, or of another kind (then an
// error, unless one was already found).
func (r *specReader) is(path string, v []byte, kind byte, want string) bool {
	k := canonjson.Kind(v)
	if k == 'f' {
		k = 't'
	}
	switch {
	case r.err != nil:
		return false
	case k == kind:
		return true
	case k != 0 && k != 'n':
		r.err = typeError(path, v, want)
	}
	return false
}

func (r *specReader) object(path string, v []byte) bool { return r.is(path, v, '{', "an object") }

func (r *specReader) str(path string, v []byte) string {
	if !r.is(path, v, '"', "a string") {
		return ""
	}
	s, _ := canonjson.String(v)
	return s
}

func (r *specReader) boolean(path string, v []byte) bool {
	return r.is(path, v, 't', "a boolean") && string(v) == "true"
}

// list calls fn with each element of the list v, an element null or of
// the kind want names (the element's kind: an object or a string).
func (r *specReader) list(path string, v []byte, kind byte, want string, fn func(e []byte)) {
	plural := map[byte]string{'{': "objects", '"': "strings"}[kind]
	if !r.is(path, v, '[', "a list of "+plural) {
		return
	}
	canonjson.ForEachElement(v, func(e []byte) bool {
		if r.is(path+"[]", e, kind, want) || canonjson.Kind(e) == 'n' {
			fn(e)
		}
		return r.err == nil
	})
}

func (r *specReader) strings(path string, v []byte) []string {
	var out []string
	r.list(path, v, '"', "a string", func(e []byte) { out = append(out, r.str(path+"[]", e)) })
	return out
}

// member calls fn with the value of obj's member key, when obj is an
// object that has it.
func member(obj []byte, key string, fn func(v []byte)) {
	canonjson.ForEachMember(obj, func(k, v []byte) bool {
		if string(k) == key {
			fn(v)
			return false
		}
		return true
	})
}

// names are the name members of a list of objects (a null element, or
// one without a name, is named "").
func (r *specReader) names(path string, v []byte) []string {
	var out []string
	r.list(path, v, '{', "an object", func(e []byte) {
		name := ""
		member(e, "name", func(v []byte) { name = r.str(path+"[].name", v) })
		out = append(out, name)
	})
	return out
}

// addCSV reads a CSV's spec: the install strategy's deployment names, the
// owned CRDs and API services, the webhooks and the install modes. A
// member of another JSON type than its Go type in operator-framework/api
// is an error, named by its path, as operator-controller fails to decode
// such a CSV; the other members are not looked at.
func (m *Manifest) addCSV(spec []byte) error {
	var (
		r                  specReader
		deployments, owned []string
		apis               int
		webhooks           []Webhook
		modes              []InstallMode
	)
	if r.object("spec", spec) {
		canonjson.ForEachMember(spec, func(k, v []byte) bool {
			switch string(k) {
			case "install":
				if r.object("spec.install", v) {
					member(v, "spec", func(v []byte) {
						if r.object("spec.install.spec", v) {
							member(v, "deployments", func(v []byte) { deployments = r.names("spec.install.spec.deployments", v) })
						}
					})
				}
			case "customresourcedefinitions":
				if r.object("spec.customresourcedefinitions", v) {
					member(v, "owned", func(v []byte) { owned = r.names("spec.customresourcedefinitions.owned", v) })
				}
			case "apiservicedefinitions":
				if r.object("spec.apiservicedefinitions", v) {
					member(v, "owned", func(v []byte) {
						r.list("spec.apiservicedefinitions.owned", v, '{', "an object", func([]byte) { apis++ })
					})
				}
			case "webhookdefinitions":
				r.list("spec.webhookdefinitions", v, '{', "an object", func(e []byte) { webhooks = append(webhooks, r.webhook(e)) })
			case "installModes":
				r.list("spec.installModes", v, '{', "an object", func(e []byte) {
					var im InstallMode
					canonjson.ForEachMember(e, func(k, v []byte) bool {
						switch string(k) {
						case "type":
							im.Type = r.str("spec.installModes[].type", v)
						case "supported":
							im.Supported = r.boolean("spec.installModes[].supported", v)
						}
						return true
					})
					modes = append(modes, im)
				})
			}
			return r.err == nil
		})
	}
	if r.err != nil {
		return r.err
	}
	m.InstallMode, m.Deployments, m.OwnedCRDs, m.OwnedAPIServices, m.Webhooks = modes, deployments, owned, apis, webhooks
	return nil
}

// webhook reads one of spec.webhookdefinitions (null: the zero one).
func (r *specReader) webhook(e []byte) Webhook {
	const path = "spec.webhookdefinitions[]."
	var w Webhook
	canonjson.ForEachMember(e, func(k, v []byte) bool {
		switch string(k) {
		case "type":
			w.Type = r.str(path+"type", v)
		case "generateName":
			w.GenerateName = r.str(path+"generateName", v)
		case "deploymentName":
			w.DeploymentName = r.str(path+"deploymentName", v)
		case "conversionCRDs":
			w.ConversionCRDs = r.strings(path+"conversionCRDs", v)
		case "rules":
			r.list(path+"rules", v, '{', "an object", func(e []byte) {
				var rule WebhookRule
				canonjson.ForEachMember(e, func(k, v []byte) bool {
					switch string(k) {
					case "apiGroups":
						rule.APIGroups = r.strings(path+"rules[].apiGroups", v)
					case "resources":
						rule.Resources = r.strings(path+"rules[].resources", v)
					}
					return true
				})
				w.Rules = append(w.Rules, rule)
			})
		}
		return r.err == nil
	})
	return w
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
