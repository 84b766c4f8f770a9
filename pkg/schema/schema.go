// Package schema checks file-based catalog (FBC) blobs against the CUE
// definitions of the FBC format (schema.cue, embedded): _Meta for every
// blob, #Package, #Channel, #Bundle and #Deprecations for the four typed
// schemas, and the OLM property value definitions chosen by property type.
//
// CUE stays the authority on every verdict, but evaluating it per blob is
// far too slow for large catalogs (seconds for a 120 MB catalog), so a
// Checker works on shapes:
//
//   - A blob is decomposed into its skeleton (the top-level lists whose
//     elements have their own definition, such as properties or entries,
//     emptied) and those list elements.
//   - Each part is abstracted into a shape that keeps every verdict of the
//     schema: strings become "" when empty, stay as they are when they equal
//     a string literal of schema.cue, and become one fixed placeholder
//     otherwise; object keys that are not labels of schema.cue are
//     anonymized; lists keep one copy of each distinct element shape. The
//     shape is computed in one pass over the canonical JSON bytes, skipping
//     long strings without decoding them.
//   - Verdicts are memoized by shape, so CUE only evaluates shapes never seen
//     before.
//   - Only when a part of a blob fails is the real blob evaluated, with its
//     split lists reduced to their failing elements, to report violations
//     with real paths and CUE's messages.
//
// The violations of a blob are exactly those that CUE reports when the whole
// blob is unified with its definition and validated for concreteness (with
// CUE's habits: for instance, a missing field is not reported next to an
// invalid value, and a closed struct's unknown fields are not reported when
// one of its fields is invalid). The tests compare Check with that direct
// evaluation on fixtures, random mutations and fuzzed input.
//
// schema.cue keeps the rules that make this exact: no length or position
// constraints on lists, strings constrained only by type, by != "" and by
// equality with literals of the file, [string] as the only pattern
// constraint, and no constraint between a list element and anything outside
// it. The tests check the schema text for them.
package schema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

//go:embed schema.cue
var schemaSource string

// Source returns the CUE text of the schema every blob is checked against.
func Source() string { return schemaSource }

// Violation is one schema finding.
type Violation struct {
	// Path is the CUE path of the offending value inside the blob, e.g.
	// "properties[2].value.version" or "icon.type". List indexes are written
	// [n]; labels that are not CUE identifiers are quoted. It is empty for a
	// finding about the blob as a whole.
	Path string
	// Message is CUE's message, e.g. `field not allowed` or
	// `invalid value "" (out of bound !="")`.
	Message string
}

// String formats v as "path: message".
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

// kind names a definition that a part of a blob is checked against.
type kind uint8

const (
	kindMeta kind = iota // _Meta: blobs of any other schema
	kindPackage
	kindChannel
	kindBundle
	kindDeprecations
	kindProperty
	kindRelatedImage
	kindChannelEntry
	kindDeprecationEntry
	kindConstraint // a constraint nested in an olm.constraint value (constraint.go)
	numKinds
)

// kindDefs names each kind's definition in schema.cue. Blob kinds other
// than kindMeta are also unified with _Meta.
var kindDefs = [numKinds]string{
	kindMeta:             "_Meta",
	kindPackage:          "#Package",
	kindChannel:          "#Channel",
	kindBundle:           "#Bundle",
	kindDeprecations:     "#Deprecations",
	kindProperty:         "#Property",
	kindRelatedImage:     "#RelatedImage",
	kindChannelEntry:     "#ChannelEntry",
	kindDeprecationEntry: "#DeprecationEntry",
	kindConstraint:       "#Constraint",
}

// listField is a top-level list of a blob whose elements are checked on
// their own against the element kind.
type listField struct {
	name string
	elem kind
}

// blobLists gives, for each blob kind, the top-level lists that are split
// off the skeleton. Only lists that the blob's definition types as
// [...#Elem] appear here, so that splitting them keeps every verdict.
var blobLists = [numKinds][]listField{
	kindMeta:         {{"properties", kindProperty}},
	kindPackage:      {{"properties", kindProperty}},
	kindChannel:      {{"entries", kindChannelEntry}, {"properties", kindProperty}},
	kindBundle:       {{"properties", kindProperty}, {"relatedImages", kindRelatedImage}},
	kindDeprecations: {{"entries", kindDeprecationEntry}},
}

// blobKind maps a blob's schema to the kind it is checked as.
func blobKind(schemaName string) kind {
	switch schemaName {
	case declcfg.SchemaPackage:
		return kindPackage
	case declcfg.SchemaChannel:
		return kindChannel
	case declcfg.SchemaBundle:
		return kindBundle
	case declcfg.SchemaDeprecations:
		return kindDeprecations
	}
	return kindMeta
}

// Checker checks blobs against the embedded schema. It is safe for
// concurrent use. Verdicts are memoized for the Checker's lifetime: its
// memory grows with the number of distinct shapes (about a hundred for a
// 120 MB catalog), so use one Checker per catalog or per process.
type Checker struct {
	voc vocabulary
	// metaLabels are the fields _Meta names. _Meta is open, so the other
	// top-level fields of a blob checked against it alone do not matter.
	metaLabels wordSet

	// mu serializes CUE evaluation: cue.Value reads of finalized values are
	// safe for concurrent use, but building and unifying new values on a
	// shared context is not documented to be.
	mu   sync.Mutex
	ctx  *cue.Context
	defs [numKinds]cue.Value

	memo memo
	// cel memoizes cel-go's verdicts on the rules OLMRefusals parses.
	cel celVerdicts

	// shapeEvals and realEvals count CUE evaluations of shapes (memo
	// misses) and of the real values of failing parts.
	shapeEvals, realEvals atomic.Int64
}

// New compiles the embedded schema once.
func New() (*Checker, error) {
	voc, err := schemaVocabulary(schemaSource)
	if err != nil {
		return nil, err
	}
	ctx := cuecontext.New()
	root := ctx.CompileString(schemaSource, cue.Filename("schema.cue"))
	if err := root.Err(); err != nil {
		return nil, fmt.Errorf("compiling schema.cue: %w", err)
	}
	c := &Checker{voc: voc, ctx: ctx}
	meta := root.LookupPath(cue.MakePath(cue.Hid("_Meta", "_")))
	if !meta.Exists() {
		return nil, fmt.Errorf("schema.cue: _Meta not found")
	}
	if !meta.Allows(cue.Str(keyPlaceholderPrefix + "any")) {
		return nil, fmt.Errorf("schema.cue: _Meta must be open (shapes leave out the fields it does not name)")
	}
	fields, err := meta.Fields(cue.Optional(true))
	if err != nil {
		return nil, fmt.Errorf("schema.cue: _Meta: %w", err)
	}
	for fields.Next() {
		c.metaLabels.add(fields.Selector().Unquoted())
	}
	for k, name := range kindDefs {
		v := meta
		if kind(k) != kindMeta {
			v = root.LookupPath(cue.ParsePath(name))
			if !v.Exists() {
				return nil, fmt.Errorf("schema.cue: %s not found", name)
			}
			if kind(k) < kindProperty {
				v = v.Unify(meta)
			}
		}
		// Definitions are not concrete; only evaluation errors count.
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("schema.cue: definition %s: %w", name, err)
		}
		c.defs[k] = v
	}
	return c, nil
}

// wordSet is a set of plain strings (printable ASCII, no quotes or
// backslashes: the tests check schema.cue for that).
type wordSet struct {
	set    map[string]struct{}
	maxLen int
}

func (w *wordSet) add(s string) {
	if w.set == nil {
		w.set = map[string]struct{}{}
	}
	w.set[s] = struct{}{}
	w.maxLen = max(w.maxLen, len(s))
}

// has reports whether the raw (unquoted, undecoded) key is in the set.
// Members are plain, so a key with an escape sequence is compared decoded.
func (w *wordSet) has(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		_, ok := w.set[string(raw)]
		return ok
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	_, ok := w.match(q, 0, len(q))
	return ok
}

// match reports whether the JSON string src[i:end] (quotes included) is in
// the set, and returns its decoded text when it is.
func (w *wordSet) match(src []byte, i, end int) ([]byte, bool) {
	raw := src[i+1 : end-1]
	// An escape sequence decodes to at least one byte from at most six, so
	// a longer raw string cannot decode to a member.
	if len(raw) > 6*w.maxLen {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		_, ok := w.set[string(raw)]
		return raw, ok
	}
	// Members are plain, so only a string whose escapes are all \uXXXX or
	// \/ can decode to one. That never happens in canonical JSON.
	if !onlyUnicodeEscapes(raw) {
		return nil, false
	}
	var dec string
	if err := json.Unmarshal(src[i:end], &dec); err != nil {
		return nil, false
	}
	_, ok := w.set[dec]
	return []byte(dec), ok
}

// onlyUnicodeEscapes reports whether every escape sequence of the raw
// string contents is \uXXXX or \/.
func onlyUnicodeEscapes(raw []byte) bool {
	for k := 0; k < len(raw); k++ {
		if raw[k] != '\\' {
			continue
		}
		if k+1 >= len(raw) || (raw[k+1] != 'u' && raw[k+1] != '/') {
			return false
		}
		k++
	}
	return true
}

// vocabulary is what the shape abstraction keeps of schema.cue.
type vocabulary struct {
	// lits are the string literals of the constraints (not the labels):
	// strings equal to one keep their value in shapes.
	lits wordSet
	// labels are the field names of the definitions: object keys equal to
	// one are kept in shapes; other keys are anonymized.
	labels wordSet
}

// schemaVocabulary parses src and returns its string literals and labels.
func schemaVocabulary(src string) (vocabulary, error) {
	f, err := parser.ParseFile("schema.cue", src)
	if err != nil {
		return vocabulary{}, fmt.Errorf("parsing schema.cue: %w", err)
	}
	var voc vocabulary
	var walkErr error
	var before func(n ast.Node) bool
	before = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if _, ok := n.Label.(*ast.ListLit); ok {
				// A pattern constraint [string]: T names no field.
				ast.Walk(n.Value, before, nil)
				return false
			}
			name, _, err := ast.LabelName(n.Label)
			if err != nil {
				walkErr = fmt.Errorf("schema.cue: label %v: %w", n.Label, err)
				return false
			}
			if !strings.HasPrefix(name, "#") && !strings.HasPrefix(name, "_") {
				voc.labels.add(name)
			}
			// The label is a name, not a constraint: only walk the value.
			ast.Walk(n.Value, before, nil)
			return false
		case *ast.BasicLit:
			if n.Kind == token.INT || n.Kind == token.FLOAT {
				// Shapes replace every number by 0 or 0.5 (shape.go).
				walkErr = fmt.Errorf("schema.cue: number literal %s: shapes keep only whether a number is an int", n.Value)
				return false
			}
			if n.Kind != token.STRING {
				return true
			}
			s, err := literal.Unquote(n.Value)
			if err != nil {
				walkErr = fmt.Errorf("schema.cue: literal %s: %w", n.Value, err)
				return false
			}
			voc.lits.add(s)
		}
		return true
	}
	ast.Walk(f, before, nil)
	if walkErr != nil {
		return vocabulary{}, walkErr
	}
	if _, ok := voc.lits.set[placeholder]; ok {
		return vocabulary{}, fmt.Errorf("schema.cue uses the shape placeholder %q as a literal", placeholder)
	}
	for l := range voc.labels.set {
		if strings.HasPrefix(l, keyPlaceholderPrefix) {
			return vocabulary{}, fmt.Errorf("schema.cue label %q starts like an anonymized key", l)
		}
	}
	return voc, nil
}
