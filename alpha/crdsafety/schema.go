package crdsafety

import (
	"crypto/sha256"
	"hash"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// crdify compares two versions' schemas property by property
// (validations.CompareVersions): it lists every property of each schema
// under its path ("^.spec.size"), each with a deep copy of its subtree,
// and compares each property of the first, without its properties and
// items, with the property of the same path in the second. The copies and
// the paths cost the sum of the subtrees' sizes: quadratic in a schema's
// depth (a schema nested 1000 deep took 55 s and 2 GB).
//
// A schemaTree holds what that comparison needs of a schema, read once,
// in one pass over its canonical JSON: each schema node crdify's walk
// (validations.SchemaHas) visits, with a key of its path string, and a
// digest of the node without its properties and items (what crdify
// compares). Nothing is copied, no path is written out: two trees are
// compared by looking up each node's path key in the other (as crdify
// looks up each path string), and only the nodes whose digests differ are
// decoded and given to crdify's comparators. Each step is linear in the
// schemas' size; paths are written out only for the findings.

// pathKey identifies a path string ("^.spec.size") by two polynomial hashes
// of its bytes, modulo 2^61-1, with bases chosen at random when the program
// starts, and its length. A key is extended by a segment in the segment's
// length, and two different paths get the same key with a probability
// below 2^-100.
type pathKey struct {
	a, b uint64
	n    int
}

const mersenne61 = 1<<61 - 1

var keyBaseA, keyBaseB = 256 + rand.Uint64N(mersenne61-512), 256 + rand.Uint64N(mersenne61-512)

// mulmod61 is a·b mod 2^61-1, for a and b below it.
func mulmod61(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// a·b = hi·2^64 + lo; 2^64 ≡ 8 (mod 2^61-1)
	x := (lo & mersenne61) + (lo >> 61) + (hi << 3)
	x = (x & mersenne61) + (x >> 61)
	if x >= mersenne61 {
		x -= mersenne61
	}
	return x
}

func addmod61(a, b uint64) uint64 {
	x := a + b
	if x >= mersenne61 {
		x -= mersenne61
	}
	return x
}

// extend is the key of the path k's string followed by seg.
func (k pathKey) extend(seg string) pathKey {
	for i := 0; i < len(seg); i++ {
		c := uint64(seg[i]) + 1
		k.a = addmod61(mulmod61(k.a, keyBaseA), c)
		k.b = addmod61(mulmod61(k.b, keyBaseB), c)
	}
	k.n += len(seg)
	return k
}

// keyOf is the key of a path string.
func keyOf(path string) pathKey { return pathKey{}.extend(path) }

// digest is a SHA-256 digest of a part of a schema. Child schema nodes are
// hashed by their digests (a Merkle tree), so that every byte of a schema
// is hashed once.
type digest [sha256.Size]byte

// schemaTree is one version's schema read for comparison.
type schemaTree struct {
	js    []byte // the schema's canonical JSON
	nodes []snode
	// keys has the last node crdify's walk visits with each path key, as
	// crdify's flattened map of paths holds the last one it visited.
	keys map[pathKey]int32
	// own has each node's digest without its properties and items
	// (crdify's DropChildrenPropertiesFromJSONSchema) nor its description
	// (which operator-controller does not check, and which no other check
	// looks at); nkeys each node's path key. (Apart from nodes, which the
	// comparison of two trees reads in turn.)
	own   []digest
	nkeys []pathKey
	// valid counts the nodes of the main tree (reached from the root
	// through properties and items objects, which validateSchemas decodes
	// one by one) known to decode, of main; raw says some properties or
	// items member is not a schema (or a list of them). The other nodes
	// are decoded with the main node they are in.
	valid, main int
	raw         bool
	// unique says no two nodes have the same path.
	unique bool
}

// snode is one schema node: the root, or a schema inside one (in
// properties, items, allOf, anyOf, oneOf, not, additionalProperties,
// patternProperties, additionalItems, definitions or dependencies).
type snode struct {
	start, end int32 // the node's JSON: js[start:end]
	parent     int32 // -1 for the root
	// seg is what the node adds to its parent's path as crdify writes it
	// (field.Path's String): ".name", ".items", ".allOf[0]",
	// ".patternProperties[key]", "[]" for a property named "".
	seg string
	key pathKey
	// strParent is the key of parent(path) (the path cut at its last '.'
	// or '['), which changes looks up for the served versions; for the
	// root, hasStrParent is false.
	strParent    pathKey
	hasStrParent bool
	// kids are the node's child schema nodes, in crdify's walk order.
	kids []int32
	// full is the digest of the whole node (its own in schemaTree.own).
	full digest
	// nest is how many lists of schemas (allOf, anyOf, oneOf, items) the
	// node's schemas nest at most; ownNest the same in the node without
	// its properties and items (what crdify compares).
	nest, ownNest int32
	// cut are the spans of the node's properties and items members (each
	// from its key to the end of its value), left out of its own JSON.
	cut [2][2]int32
	// props are the node's properties member, by name, in key order:
	// each name's raw value and child node (-1 when the value is not a
	// schema), for validate. hasProps says the node has a properties
	// member that is an object; propsRaw is the value otherwise.
	props    []prop
	hasProps bool
	propsRaw []byte
	// items is the child node of an items object (-1 for none); itemsRaw
	// is the items member's value when it is not an object.
	items    int32
	itemsRaw []byte

	// shallow is the node decoded for comparison, once; valid says it
	// decodes, err why it does not. main says the node is in the main
	// tree (schemaTree.main).
	shallow *apiextensionsv1.JSONSchemaProps
	ownLen  int32
	valid   bool
	main    bool
	err     error
}

type prop struct {
	name string
	raw  []byte
	node int32
}

// kid kinds, in the order crdify's walk (validations.SchemaHas) visits a
// node's children.
const (
	kindItems = iota
	kindItemsArray
	kindAllOf
	kindAnyOf
	kindOneOf
	kindNot
	kindProperties
	kindAdditionalProperties
	kindPatternProperties
	kindAdditionalItems
	kindDefinitions
	kindDependencies
)

// treeParser reads a schema's canonical JSON into a schemaTree.
type treeParser struct {
	t *schemaTree
	// hashers by depth, reused.
	hashers [][2]hash.Hash
	kinds   []int // the kind of each node, for ordering its parent's kids
}

// isList reports whether children of kind are elements of a list of
// schemas.
func isList(kind int) bool {
	return kind == kindItemsArray || kind == kindAllOf || kind == kindAnyOf || kind == kindOneOf
}

// kindOf is the kind of the children of a schema member.
func kindOf(member string) int {
	switch member {
	case "allOf":
		return kindAllOf
	case "anyOf":
		return kindAnyOf
	case "oneOf":
		return kindOneOf
	case "not":
		return kindNot
	case "additionalProperties":
		return kindAdditionalProperties
	case "patternProperties":
		return kindPatternProperties
	case "additionalItems":
		return kindAdditionalItems
	case "definitions":
		return kindDefinitions
	}
	return kindDependencies
}

// parseSchema reads a schema (canonical JSON of an openAPIV3Schema) into a
// tree. A schema that is not an object gives an empty tree: crdify finds
// nothing in a schema that is not there.
func parseSchema(js []byte) *schemaTree {
	t := &schemaTree{js: js}
	if canonjson.Kind(js) == '{' {
		p := &treeParser{t: t}
		p.node(0, -1, "", 0, 0)
		t.buildKeys(p.kinds)
	}
	return t
}

// node reads the schema node at t.js[i] (an object or null) and returns
// its index and where it ends.
func (p *treeParser) node(i int, parent int32, seg string, kind, depth int) (int32, int) {
	t := p.t
	js := t.js
	idx := int32(len(t.nodes))
	n := snode{start: int32(i), parent: parent, seg: seg, items: -1, cut: [2][2]int32{{-1, -1}, {-1, -1}}}
	if parent < 0 {
		n.key = keyOf("^")
		n.main = true
	} else {
		n.main = t.nodes[parent].main && (kind == kindProperties || kind == kindItems)
		par := &t.nodes[parent]
		n.key = par.key.extend(seg)
		// parent() of the path cuts at its last '.' or '['; seg starts
		// with one of them.
		n.strParent, n.hasStrParent = par.key, true
		if j := strings.LastIndexAny(seg, ".["); j > 0 {
			n.strParent = par.key.extend(seg[:j])
		}
	}
	t.nodes = append(t.nodes, n)
	t.own = append(t.own, digest{})
	t.nkeys = append(t.nkeys, n.key)
	if n.main {
		t.main++
	}
	p.kinds = append(p.kinds, kind)
	for len(p.hashers) <= depth {
		p.hashers = append(p.hashers, [2]hash.Hash{sha256.New(), sha256.New()})
	}
	hOwn, hFull := p.hashers[depth][0], p.hashers[depth][1]
	hOwn.Reset()
	hFull.Reset()
	var kids []int32
	var end int
	if js[i] != '{' { // null: crdify sees an empty schema
		end = canonjson.SkipValue(js, i)
		hOwn.Write(js[i:end])
		hFull.Write(js[i:end])
	} else {
		j := i + 1
		for j < len(js) && js[j] == '"' {
			keyEnd := canonjson.SkipString(js, j)
			name := string(js[j+1 : keyEnd-1])
			v := keyEnd + 1
			// The member's bytes, its children replaced by their
			// digests, go to full and, unless own leaves it out, to own.
			var vEnd int
			mark := j
			inOwn := true
			write := func(to int) {
				hFull.Write(js[mark:to])
				if inOwn {
					hOwn.Write(js[mark:to])
				}
			}
			child := func(at int, seg string, kind int) int {
				write(at)
				c, cEnd := p.node(at, idx, seg, kind, depth+1)
				kids = append(kids, c)
				hFull.Write([]byte{0})
				hFull.Write(t.nodes[c].full[:])
				if inOwn {
					hOwn.Write([]byte{0})
					hOwn.Write(t.nodes[c].full[:])
				}
				mark = cEnd
				return cEnd
			}
			switch name {
			case "properties":
				inOwn = false
				if js[v] == '{' {
					t.nodes[idx].hasProps = true
					vEnd = p.members(v, func(k, kEnd, val int) int {
						raw, _ := canonjson.Key(js[k+1 : kEnd-1])
						seg := "." + raw
						if raw == "" {
							seg = "[]" // field.Path writes a child named "" as "[]"
						}
						pr := prop{name: raw, node: -1}
						var e int
						if js[val] == '{' || js[val] == 'n' {
							e = child(val, seg, kindProperties)
							pr.node = kids[len(kids)-1]
						} else {
							e = canonjson.SkipValue(js, val)
							t.raw = true
						}
						pr.raw = js[val:e]
						t.nodes[idx].props = append(t.nodes[idx].props, pr)
						return e
					})
				} else {
					vEnd = canonjson.SkipValue(js, v)
					t.nodes[idx].propsRaw = js[v:vEnd]
					t.raw = true
				}
				t.nodes[idx].cut[0] = [2]int32{int32(j), int32(vEnd)}
			case "items":
				inOwn = false
				switch js[v] {
				case '{':
					vEnd = child(v, ".items", kindItems)
					t.nodes[idx].items = kids[len(kids)-1]
				case '[':
					vEnd = p.elements(v, ".items", kindItemsArray, child)
					t.nodes[idx].itemsRaw = js[v:vEnd]
					t.raw = true
				default:
					vEnd = canonjson.SkipValue(js, v)
					t.nodes[idx].itemsRaw = js[v:vEnd]
					t.raw = true
				}
				t.nodes[idx].cut[1] = [2]int32{int32(j), int32(vEnd)}
			case "allOf", "anyOf", "oneOf":
				kind := kindOf(name)
				if js[v] == '[' {
					vEnd = p.elements(v, "."+name, kind, child)
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "not", "additionalProperties", "additionalItems":
				kind := kindOf(name)
				if js[v] == '{' {
					vEnd = child(v, "."+name, kind)
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "patternProperties", "definitions", "dependencies":
				kind := kindOf(name)
				if js[v] == '{' {
					vEnd = p.members(v, func(k, kEnd, val int) int {
						// dependencies holds a schema or a list of names;
						// the others a schema, null an empty one.
						if js[val] == '{' || js[val] == 'n' && kind != kindDependencies {
							raw, _ := canonjson.Key(js[k+1 : kEnd-1])
							return child(val, "."+name+"["+raw+"]", kind)
						}
						return canonjson.SkipValue(js, val)
					})
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "description":
				// Left out of own when it decodes (a string or null):
				// crdify's description check is not enforced.
				inOwn = js[v] != '"' && js[v] != 'n'
				vEnd = canonjson.SkipValue(js, v)
			default:
				vEnd = canonjson.SkipValue(js, v)
			}
			write(vEnd)
			hFull.Write([]byte{','})
			if inOwn {
				hOwn.Write([]byte{','})
			}
			j = vEnd
			if j < len(js) && js[j] == ',' {
				j++
			}
		}
		end = j + 1 // past '}'
	}
	n2 := &t.nodes[idx]
	n2.end = int32(end)
	n2.kids = kids
	for _, k := range kids {
		kk := &t.nodes[k]
		d := kk.nest
		if isList(p.kinds[k]) {
			d++
		}
		n2.nest = max(n2.nest, d)
		if p.kinds[k] != kindProperties && p.kinds[k] != kindItems && p.kinds[k] != kindItemsArray {
			n2.ownNest = max(n2.ownNest, d)
		}
	}
	var own digest
	hOwn.Sum(own[:0])
	hFull.Write([]byte{1})
	hFull.Write(own[:])
	t.own[idx] = own
	hFull.Sum(n2.full[:0])
	return idx, end
}

// members calls fn with the offsets of each key (its quote), the key's
// end and the value of the object at js[v]; fn returns where the value
// ends. members returns where the object ends.
func (p *treeParser) members(v int, fn func(k, kEnd, val int) int) int {
	js := p.t.js
	j := v + 1
	for j < len(js) && js[j] == '"' {
		kEnd := canonjson.SkipString(js, j)
		j = fn(j, kEnd, kEnd+1)
		if j < len(js) && js[j] == ',' {
			j++
		}
	}
	return j + 1
}

// elements reads the array at js[v], each object or null in it a child
// schema node (seg "[i]").
func (p *treeParser) elements(v int, seg string, kind int, child func(at int, seg string, kind int) int) int {
	js := p.t.js
	j := v + 1
	for i := 0; j < len(js) && js[j] != ']'; i++ {
		if js[j] == '{' || js[j] == 'n' {
			j = child(j, seg+"["+strconv.Itoa(i)+"]", kind)
		} else {
			j = canonjson.SkipValue(js, j)
		}
		if j < len(js) && js[j] == ',' {
			j++
		}
	}
	return j + 1
}

// buildKeys orders each node's children as crdify's walk visits them
// (their kinds in SchemaHas's order; properties and the maps by name,
// where crdify takes Go's map order), and notes the last node visited
// with each path key.
func (t *schemaTree) buildKeys(kinds []int) {
	t.keys = make(map[pathKey]int32, len(t.nodes))
	defer func() { t.unique = len(t.keys) == len(t.nodes) }()
	for i := range t.nodes {
		slices.SortStableFunc(t.nodes[i].kids, func(a, b int32) int { return kinds[a] - kinds[b] })
	}
	stack := []int32{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t.keys[t.nodes[i].key] = i
		kids := t.nodes[i].kids
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, kids[k])
		}
	}
}

// path writes out node i's path as crdify does ("^.spec.size").
func (t *schemaTree) path(i int32) string {
	var segs []string
	n := 0
	for ; i > 0; i = t.nodes[i].parent {
		segs = append(segs, t.nodes[i].seg)
		n += len(t.nodes[i].seg)
	}
	var b strings.Builder
	b.Grow(1 + n)
	b.WriteByte('^')
	for k := len(segs) - 1; k >= 0; k-- {
		b.WriteString(segs[k])
	}
	return b.String()
}

// ownJSON is node i's JSON without its properties and items members.
func (t *schemaTree) ownJSON(i int32) []byte {
	n := &t.nodes[i]
	js := t.js[n.start:n.end]
	if js[0] != '{' || n.cut[0][0] < 0 && n.cut[1][0] < 0 {
		return js
	}
	size := len(js)
	for _, c := range n.cut {
		if c[0] >= 0 {
			size -= int(c[1] - c[0])
		}
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	pos := n.start + 1
	cuts := [][2]int32{n.cut[0], n.cut[1]}
	if cuts[1][0] < cuts[0][0] {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	piece := func(from, to int32) {
		b := t.js[from:to]
		for len(b) > 0 && b[0] == ',' {
			b = b[1:]
		}
		for len(b) > 0 && b[len(b)-1] == ',' {
			b = b[:len(b)-1]
		}
		if len(b) == 0 {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	for _, c := range cuts {
		if c[0] < 0 {
			continue
		}
		piece(pos, c[0])
		pos = c[1]
	}
	piece(pos, n.end-1)
	return append(out, '}')
}

// decode decodes node i without its properties and items, as crdify
// compares it (DropChildrenPropertiesFromJSONSchema), and keeps it for the
// next comparison; n is the number of bytes it decoded (0 when it had
// already).
func (t *schemaTree) decode(i int32) (s *apiextensionsv1.JSONSchemaProps, n int, err error) {
	nd := &t.nodes[i]
	if nd.shallow != nil || nd.err != nil {
		return nd.shallow, 0, nd.err
	}
	js := t.ownJSON(i)
	var p apiextensionsv1.JSONSchemaProps
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &p); err != nil {
		nd.err = err
		return nil, len(js), err
	}
	p.Properties, p.Items = nil, nil
	nd.shallow, nd.ownLen = &p, int32(len(js))
	t.noteValid(i)
	return nd.shallow, len(js), nil
}

// check decodes node i as decode does, without keeping it: whether it
// decodes.
func (t *schemaTree) check(i int32) (n int, err error) {
	nd := &t.nodes[i]
	if nd.valid || nd.shallow != nil || nd.err != nil {
		return 0, nd.err
	}
	js := t.ownJSON(i)
	var p apiextensionsv1.JSONSchemaProps
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &p); err != nil {
		nd.err = err
		return len(js), err
	}
	t.noteValid(i)
	return len(js), nil
}

func (t *schemaTree) noteValid(i int32) {
	if nd := &t.nodes[i]; !nd.valid {
		nd.valid = true
		if nd.main {
			t.valid++
		}
	}
}

// allValid reports whether every node of t decodes, and t has nothing
// else that validateSchemas decodes (members of properties or items that
// are not schemas): then no part of it fails to decode.
func (t *schemaTree) allValid() bool { return !t.raw && t.valid == t.main }
