package crdsafety

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// The apiVersions of CustomResourceDefinition.
const (
	APIVersionV1      = "apiextensions.k8s.io/v1"
	APIVersionV1beta1 = "apiextensions.k8s.io/v1beta1"
	crdKind           = "CustomResourceDefinition"
)

// Digest identifies a CRD manifest by its JSON text.
type Digest [sha256.Size]byte

// CRD is one CustomResourceDefinition manifest of a bundle.
type CRD struct {
	Name       string
	APIVersion string
	Digest     Digest
	// JSON is the manifest as JSON text (property.ManifestJSON): a YAML
	// manifest as canonical JSON, a JSON one as it is. It is read only
	// when the CRD is compared with another one.
	JSON []byte
	// ConversionWebhook says the bundle's ClusterServiceVersion declares a
	// conversion webhook for the CRD (spec.webhookdefinitions, of type
	// ConversionWebhook, naming it in conversionCRDs): OLM v1's
	// registry+v1 renderer (BundleCRDGenerator) then applies it with a
	// webhook conversion, whatever its manifest says, and its preflight
	// does not compare its served versions with each other. OLM v0 applies
	// the manifest as it is in its CRD step, and sets the webhook later,
	// when it installs the CSV.
	ConversionWebhook bool
}

// The kind of a ClusterServiceVersion, and the type of its webhook
// definitions that converts CRDs.
const (
	csvKind               = "ClusterServiceVersion"
	conversionWebhookType = "ConversionWebhook"
)

// conversionCRDs reads a bundle object's manifest (JSON or YAML) and,
// when it is a ClusterServiceVersion, returns the names of the CRDs its
// conversion webhooks convert (ok true, names maybe none). Members of
// unexpected types are skipped: OLM v1 refuses to install a bundle whose
// CSV does not decode (alpha/olmv1 says so), and OLM v0 too.
func conversionCRDs(data []byte) (names []string, ok bool, err error) {
	if !bytes.Contains(data, []byte(csvKind)) {
		return nil, false, nil
	}
	js, err := property.ManifestJSON(data)
	if err != nil {
		return nil, false, err
	}
	var kind string
	var spec []byte
	members(js, func(k, v []byte) {
		switch string(k) {
		case "kind":
			kind, _ = canonjson.String(v)
		case "spec":
			spec = v
		}
	})
	if kind != csvKind {
		return nil, false, nil
	}
	members(spec, func(k, v []byte) {
		if string(k) != "webhookdefinitions" {
			return
		}
		elements(v, func(wh []byte) {
			var typ string
			var crds []string
			members(wh, func(k, v []byte) {
				switch string(k) {
				case "type":
					typ, _ = canonjson.String(v)
				case "conversionCRDs":
					elements(v, func(e []byte) {
						if s, ok := canonjson.String(e); ok {
							crds = append(crds, s)
						}
					})
				}
			})
			if typ == conversionWebhookType {
				names = append(names, crds...)
			}
		})
	})
	return names, true, nil
}

// elements calls fn with each element of the JSON array arr, whitespace
// allowed. It stops at anything that is not an array's syntax.
func elements(arr []byte, fn func(val []byte)) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i = skipWS(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		end := canonjson.SkipValue(arr, i)
		if end <= i {
			return
		}
		fn(arr[i:end])
		i = skipWS(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = skipWS(arr, i+1)
	}
}

// ParseManifest reads a bundle object's manifest (JSON or YAML, as an
// olm.bundle.object property holds it) and returns it as a CRD when it is
// one; ok is false for any other kind of object. Only the manifest's kind,
// apiVersion and name are read: a CRD that is not valid JSON is reported
// when it is compared.
func ParseManifest(data []byte) (crd CRD, ok bool, err error) {
	if !bytes.Contains(data, []byte(crdKind)) {
		return CRD{}, false, nil
	}
	js, err := property.ManifestJSON(data)
	if err != nil {
		return CRD{}, false, err
	}
	var kind string
	members(js, func(k, v []byte) {
		switch string(k) {
		case "apiVersion":
			crd.APIVersion, _ = canonjson.String(v)
		case "kind":
			kind, _ = canonjson.String(v)
		case "metadata":
			members(v, func(k, v []byte) {
				if string(k) == "name" {
					crd.Name, _ = canonjson.String(v)
				}
			})
		}
	})
	if kind != crdKind {
		return CRD{}, false, nil
	}
	if crd.Name == "" {
		return CRD{}, true, fmt.Errorf("a %s without metadata.name", crdKind)
	}
	crd.JSON = js
	crd.Digest = sha256.Sum256(js)
	return crd, true, nil
}

// members calls fn with the raw key and the value of each member of the
// JSON object obj, whitespace allowed, without checking the values. It
// stops at anything that is not an object's syntax.
func members(obj []byte, fn func(key, val []byte)) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i = skipWS(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end := canonjson.SkipString(obj, i)
		key := obj[i+1 : max(i+1, end-1)]
		i = skipWS(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		start := skipWS(obj, i+1)
		vEnd := canonjson.SkipValue(obj, start)
		fn(key, obj[start:vEnd])
		i = skipWS(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i = skipWS(obj, i+1)
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
