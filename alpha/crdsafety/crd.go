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

// Digest identifies a CRD manifest by its canonical JSON.
type Digest [sha256.Size]byte

// CRD is one CustomResourceDefinition manifest of a bundle.
type CRD struct {
	Name       string
	APIVersion string
	Digest     Digest
	// JSON is the manifest as canonical JSON.
	JSON []byte
}

// ParseManifest reads a bundle object's manifest (JSON or YAML, as an
// olm.bundle.object property holds it) and returns it as a CRD when it is
// one; ok is false for any other kind of object.
func ParseManifest(data []byte) (crd CRD, ok bool, err error) {
	if !bytes.Contains(data, []byte(crdKind)) {
		return CRD{}, false, nil
	}
	js, err := property.ManifestJSON(data)
	if err != nil {
		return CRD{}, false, err
	}
	canon, err := canonjson.Canonicalize(js)
	if err != nil {
		return CRD{}, false, err
	}
	if canonjson.Kind(canon) != '{' {
		return CRD{}, false, nil
	}
	var kind string
	canonjson.ForEachMember(canon, func(k, v []byte) bool {
		switch string(k) {
		case "apiVersion":
			crd.APIVersion, _ = canonjson.String(v)
		case "kind":
			kind, _ = canonjson.String(v)
		case "metadata":
			if canonjson.Kind(v) == '{' {
				canonjson.ForEachMember(v, func(k, v []byte) bool {
					if string(k) == "name" {
						crd.Name, _ = canonjson.String(v)
						return false
					}
					return true
				})
			}
		}
		return true
	})
	if kind != crdKind {
		return CRD{}, false, nil
	}
	if crd.Name == "" {
		return CRD{}, true, fmt.Errorf("a %s without metadata.name", crdKind)
	}
	crd.JSON = canon
	crd.Digest = sha256.Sum256(canon)
	return crd, true, nil
}
