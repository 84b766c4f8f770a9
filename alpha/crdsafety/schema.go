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
	// kids holds each node's children (snode.kids), in crdify's walk
	// order; props each node's properties (snode.props).
	kids  []int32
	props []prop
	// errs are why nodes do not decode.
	errs map[int32]error
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

// span is a part of a schemaTree's JSON, js[span[0]:span[1]]; or of one
// of its lists; {0, 0} for none.
type span [2]int32

// snode is one schema node: the root, or a schema inside one (in
// properties, items, allOf, anyOf, oneOf, not, additionalProperties,
// patternProperties, additionalItems, definitions or dependencies).
type snode struct {
	js     span  // the node's JSON
	parent int32 // -1 for the root
	// seg is what the node adds to its parent's path as crdify writes it
	// (field.Path's String): ".name", ".items", ".allOf[0]",
	// ".patternProperties[key]", "[]" for a property named "".
	seg string
	// kids are the node's child schema nodes (in schemaTree.kids).
	kids span
	// full is the digest of the whole node (its own in schemaTree.own).
	full digest
	// nest is how many lists of schemas (allOf, anyOf, oneOf, items) the
	// node's schemas nest at most; ownNest the same in the node without
	// its properties and items (what crdify compares).
	nest, ownNest int32
	// cut are the node's properties and items members (each from its key
	// to the end of its value), left out of its own JSON.
	cut [2]span
	// props are the members of the node's properties object, in key
	// order (in schemaTree.props), for validateSchemas. hasProps says the
	// node has a properties member that is an object; propsRaw is the
	// member's value otherwise.
	props    span
	hasProps bool
	propsRaw span
	// items is the child node of an items object (-1 for none); itemsRaw
	// is the items member's value when it is not an object.
	items    int32
	itemsRaw span
	// oneOf says the node has a oneOf list, which crdify's oneOf check
	// compares by the schemas' String(), which may hold pointer
	// addresses: then it reports a change whenever the node is compared,
	// even for a description (see compareTrees).
	oneOf bool

	// shallow is the node decoded for comparison, once; ownLen the length
	// of the JSON decoded; valid says it decodes (schemaTree.errs says
	// why not). main says the node is in the main tree (schemaTree.main).
	shallow *apiextensionsv1.JSONSchemaProps
	ownLen  int32
	valid   bool
	main    bool
}

// prop is a member of a properties object: its raw name, its value, and
// the value's node (-1 when the value is not a schema).
type prop struct {
	name, raw span
	node      int32
}

// bytes is the part of t's JSON at sp; nil for none.
func (t *schemaTree) bytes(sp span) []byte {
	if sp[1] == 0 {
		return nil
	}
	return t.js[sp[0]:sp[1]]
}

// nodeProps are node i's properties.
func (t *schemaTree) nodeProps(i int32) []prop {
	sp := t.nodes[i].props
	return t.props[sp[0]:sp[1]]
}

// strParent is the key of parent(path) of node i's path (the path cut at
// its last '.' or '['), which changes looks up for the served versions;
// ok is false for the root.
func (t *schemaTree) strParent(i int32) (k pathKey, ok bool) {
	n := &t.nodes[i]
	if n.parent < 0 {
		return pathKey{}, false
	}
	k = t.nkeys[n.parent]
	// seg starts with '.' or '['.
	if j := strings.LastIndexAny(n.seg, ".["); j > 0 {
		k = k.extend(n.seg[:j])
	}
	return k, true
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
	kinds   []int8 // the kind of each node, for ordering its parent's kids
	// kids and props of the nodes being read, moved to the tree's lists
	// when each node ends.
	kids  []int32
	props []prop
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

// memberReader is what node reads of one member of a schema node: its bytes go
// to the node's full digest and, unless own leaves the member out, to
// own, each child schema node in it replaced by its digest.
type memberReader struct {
	p          *treeParser
	idx        int32 // the node
	depth      int
	mark       int // what is written so far
	inOwn      bool
	hOwn, hAll hash.Hash
}

func (m *memberReader) write(to int) {
	js := m.p.t.js
	m.hAll.Write(js[m.mark:to])
	if m.inOwn {
		m.hOwn.Write(js[m.mark:to])
	}
	m.mark = to
}

// child reads the child schema node at js[at] and returns its index and
// where it ends.
func (m *memberReader) child(at int, seg string, kind int) (int32, int) {
	m.write(at)
	c, end := m.p.node(at, m.idx, seg, kind, m.depth+1)
	m.p.kids = append(m.p.kids, c)
	full := &m.p.t.nodes[c].full
	m.hAll.Write([]byte{0})
	m.hAll.Write(full[:])
	if m.inOwn {
		m.hOwn.Write([]byte{0})
		m.hOwn.Write(full[:])
	}
	m.mark = end
	return c, end
}

// node reads the schema node at t.js[i] (an object or null) and returns
// its index and where it ends.
func (p *treeParser) node(i int, parent int32, seg string, kind, depth int) (int32, int) {
	t := p.t
	js := t.js
	idx := int32(len(t.nodes))
	n := snode{js: span{int32(i), 0}, parent: parent, seg: seg, items: -1}
	key := keyOf("^")
	if parent < 0 {
		n.main = true
	} else {
		n.main = t.nodes[parent].main && (kind == kindProperties || kind == kindItems)
		key = t.nkeys[parent].extend(seg)
	}
	t.nodes = append(t.nodes, n)
	t.own = append(t.own, digest{})
	t.nkeys = append(t.nkeys, key)
	if n.main {
		t.main++
	}
	p.kinds = append(p.kinds, int8(kind))
	for len(p.hashers) <= depth {
		p.hashers = append(p.hashers, [2]hash.Hash{sha256.New(), sha256.New()})
	}
	m := memberReader{p: p, idx: idx, depth: depth, hOwn: p.hashers[depth][0], hAll: p.hashers[depth][1]}
	m.hOwn.Reset()
	m.hAll.Reset()
	kidsFrom, propsFrom := len(p.kids), len(p.props)
	var end int
	if js[i] != '{' { // null: crdify sees an empty schema
		end = canonjson.SkipValue(js, i)
		m.hOwn.Write(js[i:end])
		m.hAll.Write(js[i:end])
	} else {
		j := i + 1
		for j < len(js) && js[j] == '"' {
			keyEnd := canonjson.SkipString(js, j)
			name := js[j+1 : keyEnd-1]
			v := keyEnd + 1
			var vEnd int
			m.mark, m.inOwn = j, true
			switch string(name) {
			case "properties":
				m.inOwn = false
				if js[v] == '{' {
					t.nodes[idx].hasProps = true
					vEnd = p.members(v, func(k, kEnd, val int) int {
						raw, _ := canonjson.Key(js[k+1 : kEnd-1])
						seg := "." + raw
						if raw == "" {
							seg = "[]" // field.Path writes a child named "" as "[]"
						}
						pr := prop{name: span{int32(k + 1), int32(kEnd - 1)}, node: -1}
						var e int
						if js[val] == '{' || js[val] == 'n' {
							pr.node, e = m.child(val, seg, kindProperties)
						} else {
							e = canonjson.SkipValue(js, val)
							t.raw = true
						}
						pr.raw = span{int32(val), int32(e)}
						p.props = append(p.props, pr)
						return e
					})
				} else {
					vEnd = canonjson.SkipValue(js, v)
					t.nodes[idx].propsRaw = span{int32(v), int32(vEnd)}
					t.raw = true
				}
				t.nodes[idx].cut[0] = span{int32(j), int32(vEnd)}
			case "items":
				m.inOwn = false
				switch js[v] {
				case '{':
					t.nodes[idx].items, vEnd = m.child(v, ".items", kindItems)
				case '[':
					vEnd = p.elements(v, ".items", kindItemsArray, &m)
					t.nodes[idx].itemsRaw = span{int32(v), int32(vEnd)}
					t.raw = true
				default:
					vEnd = canonjson.SkipValue(js, v)
					t.nodes[idx].itemsRaw = span{int32(v), int32(vEnd)}
					t.raw = true
				}
				t.nodes[idx].cut[1] = span{int32(j), int32(vEnd)}
			case "allOf", "anyOf", "oneOf":
				if js[v] == '[' {
					t.nodes[idx].oneOf = t.nodes[idx].oneOf || string(name) == "oneOf"
					vEnd = p.elements(v, "."+string(name), kindOf(string(name)), &m)
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "not", "additionalProperties", "additionalItems":
				if js[v] == '{' {
					_, vEnd = m.child(v, "."+string(name), kindOf(string(name)))
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "patternProperties", "definitions", "dependencies":
				kind := kindOf(string(name))
				if js[v] == '{' {
					vEnd = p.members(v, func(k, kEnd, val int) int {
						// dependencies holds a schema or a list of names;
						// the others a schema, null an empty one.
						if js[val] == '{' || js[val] == 'n' && kind != kindDependencies {
							raw, _ := canonjson.Key(js[k+1 : kEnd-1])
							_, e := m.child(val, "."+string(name)+"["+raw+"]", kind)
							return e
						}
						return canonjson.SkipValue(js, val)
					})
				} else {
					vEnd = canonjson.SkipValue(js, v)
				}
			case "description":
				// Left out of own when it decodes (a string or null):
				// crdify's description check is not enforced.
				m.inOwn = js[v] != '"' && js[v] != 'n'
				vEnd = canonjson.SkipValue(js, v)
			default:
				vEnd = canonjson.SkipValue(js, v)
			}
			m.write(vEnd)
			m.hAll.Write([]byte{','})
			if m.inOwn {
				m.hOwn.Write([]byte{','})
			}
			j = vEnd
			if j < len(js) && js[j] == ',' {
				j++
			}
		}
		end = j + 1 // past '}'
	}
	nd := &t.nodes[idx]
	nd.js[1] = int32(end)
	nd.kids = span{int32(len(t.kids)), int32(len(t.kids) + len(p.kids) - kidsFrom)}
	t.kids = append(t.kids, p.kids[kidsFrom:]...)
	p.kids = p.kids[:kidsFrom]
	nd.props = span{int32(len(t.props)), int32(len(t.props) + len(p.props) - propsFrom)}
	t.props = append(t.props, p.props[propsFrom:]...)
	p.props = p.props[:propsFrom]
	for _, k := range t.kids[nd.kids[0]:nd.kids[1]] {
		kind := int(p.kinds[k])
		d := t.nodes[k].nest
		if isList(kind) {
			d++
		}
		nd.nest = max(nd.nest, d)
		if kind != kindProperties && kind != kindItems && kind != kindItemsArray {
			nd.ownNest = max(nd.ownNest, d)
		}
	}
	var own digest
	m.hOwn.Sum(own[:0])
	m.hAll.Write([]byte{1})
	m.hAll.Write(own[:])
	t.own[idx] = own
	m.hAll.Sum(nd.full[:0])
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
func (p *treeParser) elements(v int, seg string, kind int, m *memberReader) int {
	js := p.t.js
	j := v + 1
	for i := 0; j < len(js) && js[j] != ']'; i++ {
		if js[j] == '{' || js[j] == 'n' {
			_, j = m.child(j, seg+"["+strconv.Itoa(i)+"]", kind)
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
func (t *schemaTree) buildKeys(kinds []int8) {
	t.keys = make(map[pathKey]int32, len(t.nodes))
	for i := range t.nodes {
		sp := t.nodes[i].kids
		slices.SortStableFunc(t.kids[sp[0]:sp[1]], func(a, b int32) int { return int(kinds[a]) - int(kinds[b]) })
	}
	stack := []int32{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t.keys[t.nkeys[i]] = i
		sp := t.nodes[i].kids
		for k := sp[1] - 1; k >= sp[0]; k-- {
			stack = append(stack, t.kids[k])
		}
	}
	t.unique = len(t.keys) == len(t.nodes)
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
	js := t.bytes(n.js)
	if js[0] != '{' || n.cut[0][1] == 0 && n.cut[1][1] == 0 {
		return js
	}
	cuts := []span{n.cut[0], n.cut[1]}
	if cuts[0][1] == 0 || cuts[1][1] != 0 && cuts[1][0] < cuts[0][0] {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	size := len(js)
	for _, c := range cuts {
		size -= int(c[1] - c[0])
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
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
	pos := n.js[0] + 1
	for _, c := range cuts {
		if c[1] == 0 {
			continue
		}
		piece(pos, c[0])
		pos = c[1]
	}
	piece(pos, n.js[1]-1)
	return append(out, '}')
}

// decode decodes node i without its properties and items, as crdify
// compares it (DropChildrenPropertiesFromJSONSchema), and keeps it for the
// next comparison; n is the number of bytes it decoded (0 when it had
// already).
func (t *schemaTree) decode(i int32) (s *apiextensionsv1.JSONSchemaProps, n int, err error) {
	nd := &t.nodes[i]
	if err := t.errs[i]; nd.shallow != nil || err != nil {
		return nd.shallow, 0, err
	}
	js := t.ownJSON(i)
	var p apiextensionsv1.JSONSchemaProps
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &p); err != nil {
		t.noteErr(i, err)
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
	if err := t.errs[i]; nd.valid || err != nil {
		return 0, err
	}
	js := t.ownJSON(i)
	var p apiextensionsv1.JSONSchemaProps
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &p); err != nil {
		t.noteErr(i, err)
		return len(js), err
	}
	t.noteValid(i)
	return len(js), nil
}

func (t *schemaTree) noteErr(i int32, err error) {
	if t.errs == nil {
		t.errs = map[int32]error{}
	}
	t.errs[i] = err
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
