package crdsafety

import (
	"bytes"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// crdify compares two versions' schemas property by property: it lists
// every property of the first with its subtree copied, and compares each
// one, without its properties and items, with the property of the same
// path in the second. A schema is often a megabyte, with thousands of
// properties, and between two bundles a few of them change. pruneSchemas
// leaves out of both schemas what cannot change crdify's answer, before
// they are decoded:
//
//   - a property whose subtree is the same in both: every property in it
//     compares equal, and its parent is compared without it;
//   - a property only the second has: crdify looks only at the first's;
//   - inside a property only the first has, its properties and items:
//     crdify reports the property itself (removed, its type and more
//     changed to nothing), then each one inside it again, which is left
//     out of the answer anyway (see changes).
//
// Only "properties" and object "items" are pruned, the children crdify
// leaves out of a property's own comparison; allOf, anyOf, oneOf, not,
// additionalProperties and the others are part of it and kept whole. The
// answer is the same as on the whole schemas (TestPruneSameAnswer).

// pruneSchemas returns the schemas a and b (canonical JSON of an
// openAPIV3Schema) pruned against each other.
func pruneSchemas(a, b []byte) (pa, pb []byte) {
	switch {
	case canonjson.Kind(a) != '{':
		return nil, nil // crdify finds nothing in a schema that is not there
	case canonjson.Kind(b) != '{':
		return stub(a), nil
	}
	return pruneNode(a, b)
}

// pruneNode prunes the properties and items of two schema nodes.
func pruneNode(a, b []byte) (pa, pb []byte) {
	ap, bp := member(a, "properties"), member(b, "properties")
	ai, bi := member(a, "items"), member(b, "items")
	var nap, nbp []byte
	switch {
	case canonjson.Kind(ap) == '{' && canonjson.Kind(bp) == '{':
		nap, nbp = pruneProperties(ap, bp)
	case canonjson.Kind(ap) == '{':
		nap = stubProperties(ap)
	default:
		nap = ap
	}
	var nai, nbi []byte
	switch {
	case canonjson.Kind(ai) == '{' && canonjson.Kind(bi) == '{':
		if !bytes.Equal(ai, bi) {
			nai, nbi = pruneNode(ai, bi)
		}
	case canonjson.Kind(ai) == '{':
		nai = stub(ai)
	case ai != nil:
		nai, nbi = ai, bi // a list of schemas: kept as it is
	}
	pa = editMember(editMember(a, "properties", func([]byte) []byte { return nap }), "items", func([]byte) []byte { return nai })
	pb = editMember(editMember(b, "properties", func([]byte) []byte { return nbp }), "items", func([]byte) []byte { return nbi })
	return pa, pb
}

// pruneProperties prunes two "properties" objects: the same subtree in
// both goes, one only b has goes, one only a has is stubbed, the others
// are pruned in turn.
func pruneProperties(ap, bp []byte) (pa, pb []byte) {
	bv := map[string][]byte{}
	canonjson.ForEachMember(bp, func(k, v []byte) bool {
		bv[string(k)] = v
		return true
	})
	pa, pb = []byte{'{'}, []byte{'{'}
	canonjson.ForEachMember(ap, func(k, v []byte) bool {
		w, ok := bv[string(k)]
		switch {
		case !ok:
			pa = appendMember(pa, k, stub(v))
		case bytes.Equal(v, w):
		case canonjson.Kind(v) == '{' && canonjson.Kind(w) == '{':
			x, y := pruneNode(v, w)
			pa, pb = appendMember(pa, k, x), appendMember(pb, k, y)
		default:
			pa, pb = appendMember(pa, k, v), appendMember(pb, k, w)
		}
		return true
	})
	return append(pa, '}'), append(pb, '}')
}

// stub is a schema node without its properties and items.
func stub(node []byte) []byte {
	if canonjson.Kind(node) != '{' {
		return node
	}
	drop := func([]byte) []byte { return nil }
	return editMember(editMember(node, "properties", drop), "items", drop)
}

func stubProperties(props []byte) []byte {
	out := []byte{'{'}
	canonjson.ForEachMember(props, func(k, v []byte) bool {
		out = appendMember(out, k, stub(v))
		return true
	})
	return append(out, '}')
}

func appendMember(obj, key, val []byte) []byte {
	if len(obj) > 1 {
		obj = append(obj, ',')
	}
	obj = append(obj, '"')
	obj = append(obj, key...)
	obj = append(obj, '"', ':')
	return append(obj, val...)
}

// member is the value of key in the canonical JSON object obj, or nil.
func member(obj []byte, key string) []byte {
	var found []byte
	canonjson.ForEachMember(obj, func(k, v []byte) bool {
		if string(k) == key {
			found = v
			return false
		}
		return string(k) < key // keys are sorted
	})
	return found
}

// editMember returns obj with the value of key replaced by edit's answer
// (given the current value), or left out when edit returns nil. obj is
// returned as it is when it has no such key.
func editMember(obj []byte, key string, edit func([]byte) []byte) []byte {
	if canonjson.Kind(obj) != '{' || member(obj, key) == nil {
		return obj
	}
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	canonjson.ForEachMember(obj, func(k, v []byte) bool {
		if string(k) == key {
			v = edit(v)
			if v == nil {
				return true
			}
		}
		out = appendMember(out, k, v)
		return true
	})
	return append(out, '}')
}

// decodeSchema decodes a schema as the API server does, nil for none.
func decodeSchema(js []byte) (*apiextensionsv1.JSONSchemaProps, error) {
	if js == nil {
		return nil, nil
	}
	var s apiextensionsv1.JSONSchemaProps
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
