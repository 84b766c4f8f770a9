package crdsafety

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// The schemas of two versions are compared node by node (schemaTree),
// but a schema that cannot be decoded must still be reported as it was
// when crdify decoded the two schemas pruned against each other (Checker
// used to give crdify that much; now it decodes only the nodes it
// compares): "invalid", which both OLMs refuse. validateSchemas decodes
// the same parts:
//
//   - a property whose subtree is the same in both: nothing;
//   - a property only the second has: nothing;
//   - a property only the first has: the property without its
//     properties and items;
//   - a property both have, differently: each without its properties and
//     items (allOf, anyOf, oneOf, not, additionalProperties and the
//     others are decoded with it, whole), and their properties and items
//     in turn; a list of schemas as items, whole.
//
// Each node is decoded once (schemaTree.decode, which the comparison
// uses too), so this is linear in the schemas' size, but for nodes whose
// allOf, anyOf, oneOf, not or additionalProperties nest deep, which are
// decoded whole at each level, as crdify compares them.

// validateSchemas decodes the parts of a and b that crdify would see, and
// returns the first error of each.
func validateSchemas(w *budget, a, b *schemaTree) (errA, errB error) {
	if len(a.nodes) == 0 || a.allValid() && b.allValid() {
		return nil, nil // nothing to compare, or nothing that fails
	}
	if len(b.nodes) == 0 {
		return w.decodeOwn(a, 0), nil
	}
	v := &validation{w: w, a: a, b: b}
	v.node(0, 0)
	return v.errA, v.errB
}

type validation struct {
	w          *budget
	a, b       *schemaTree
	errA, errB error
}

func (v *validation) noteA(err error) {
	if v.errA == nil {
		v.errA = err
	}
}

func (v *validation) noteB(err error) {
	if v.errB == nil {
		v.errB = err
	}
}

// node validates nodes i of a and j of b, which differ.
func (v *validation) node(i, j int32) {
	if v.w.err != nil {
		return // stopped
	}
	a, b := v.a, v.b
	v.noteA(v.w.decodeOwn(a, i))
	v.noteB(v.w.decodeOwn(b, j))
	na, nb := &a.nodes[i], &b.nodes[j]
	switch {
	case na.hasProps && nb.hasProps:
		bp := b.nodeProps(j)
		byName := make(map[string]*prop, len(bp))
		for k := range bp {
			byName[string(b.bytes(bp[k].name))] = &bp[k]
		}
		for _, pa := range a.nodeProps(i) {
			if v.w.err != nil {
				return
			}
			pb, ok := byName[string(a.bytes(pa.name))]
			switch {
			case !ok:
				v.noteA(v.w.stub(a, pa))
			case pa.node >= 0 && pb.node >= 0 && a.nodes[pa.node].full == b.nodes[pb.node].full,
				pa.node < 0 && pb.node < 0 && string(a.bytes(pa.raw)) == string(b.bytes(pb.raw)):
			case pa.node >= 0 && pb.node >= 0 && a.js[pa.raw[0]] == '{' && b.js[pb.raw[0]] == '{':
				v.node(pa.node, pb.node)
			default:
				v.noteA(v.w.decodeJSON(a.bytes(pa.raw)))
				v.noteB(v.w.decodeJSON(b.bytes(pb.raw)))
			}
		}
	case na.hasProps:
		for _, pa := range a.nodeProps(i) {
			v.noteA(v.w.stub(a, pa))
		}
	case na.propsRaw[1] != 0:
		v.noteA(v.w.decodeMember("properties", a.bytes(na.propsRaw)))
	}
	switch {
	case na.items >= 0 && nb.items >= 0:
		if a.nodes[na.items].full != b.nodes[nb.items].full {
			v.node(na.items, nb.items)
		}
	case na.items >= 0:
		v.noteA(v.w.decodeOwn(a, na.items))
	case na.itemsRaw[1] != 0:
		v.noteA(v.w.decodeMember("items", a.bytes(na.itemsRaw)))
		if nb.itemsRaw[1] != 0 {
			v.noteB(v.w.decodeMember("items", b.bytes(nb.itemsRaw)))
		} else if nb.items >= 0 {
			v.noteB(v.w.decodeJSON(b.bytes(b.nodes[nb.items].js)))
		}
	}
}

// stub decodes a property only the first schema has: the property
// without its properties and items when it is a schema, else its value.
func (w *budget) stub(t *schemaTree, p prop) error {
	if p.node >= 0 {
		return w.decodeOwn(t, p.node)
	}
	return w.decodeJSON(t.bytes(p.raw))
}

// decodeOwn decodes node i of t without its properties and items.
func (w *budget) decodeOwn(t *schemaTree, i int32) error {
	n, err := t.check(i)
	w.spend(int64(n))
	if err != nil {
		return pathError{t.path(i), err}
	}
	return nil
}

// decodeMember decodes a schema holding only member name, with value val.
func (w *budget) decodeMember(name string, val []byte) error {
	js := append(append([]byte(`{"`+name+`":`), val...), '}')
	return w.decodeJSON(js)
}

func (w *budget) decodeJSON(js []byte) error {
	w.spend(int64(len(js)))
	var s apiextensionsv1.JSONSchemaProps
	return kjson.UnmarshalCaseSensitivePreserveInts(js, &s)
}

// pathError is an error decoding the schema node at a path.
type pathError struct {
	path string
	err  error
}

func (e pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e pathError) Unwrap() error { return e.err }

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
