package crdsafety

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/validations"
)

// maxListNest is the deepest lists of schemas (allOf, anyOf, oneOf, items
// as a list) may nest in a property for crdify's own comparison. crdify
// reports a change no validation handles with go-cmp's diff of the two
// properties, whose cost grows fourfold to sixfold with each list nested
// in another (2 ms for 4 nested anyOf, 100 ms for 7, 3.6 s for 10). Real
// CRDs nest one at most (the test catalogs, 2026-11-28).
const maxListNest = 3

// schemaFields are the fields of JSONSchemaProps that hold schemas, which
// compareProperties does not give go-cmp past maxListNest.
var schemaFields = []string{"AllOf", "OneOf", "AnyOf", "Not", "AdditionalProperties", "PatternProperties", "AdditionalItems", "Definitions", "Dependencies"}

// compareProperties is crdify's CompareProperties(a, b), with operator-
// controller's enforcement; nest is how deep lists of schemas nest in a
// or b. Past maxListNest, the unhandled check leaves out of go-cmp's diff
// the fields that nest them deeper, and writes for each that changed two
// lines of its own in their place (see unhandledWithoutDeepDiff). But for
// a field that one of a and b does not have, and that holds few schemas
// (at most maxFormatted): go-cmp does not compare it, it shows it (in one
// line when it fits), which costs little.
func (c *Checker) compareProperties(a, b *apiextensionsv1.JSONSchemaProps, nest int32) []validations.ComparisonResult {
	if nest <= maxListNest {
		return validations.CompareProperties(a, b, config.EnforcementPolicyError, c.properties...)
	}
	ac, bc := a.DeepCopy(), b.DeepCopy()
	out := make([]validations.ComparisonResult, 0, len(c.properties)+1)
	for _, comp := range c.properties {
		out = append(out, comp.Compare(ac, bc))
	}
	r := validations.ComparisonResult{Name: "unhandled"}
	if !equality.Semantic.DeepEqual(ac, bc) {
		r.Errors = []string{unhandledWithoutDeepDiff(ac, bc)}
	}
	return append(out, r)
}

// valueDigest identifies a field's value by a digest of its JSON.
func valueDigest(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	d := sha256.Sum256(js)
	return hex.EncodeToString(d[:12])
}

// deepValue stands for the value of a field that nests lists of schemas
// past maxListNest in unhandledWithoutDeepDiff's diff.
const deepValue = "<nested too deep to diff>"

// maxFormatted is the most schemas a field may hold for go-cmp to show it.
const maxFormatted = 256

// unhandledWithoutDeepDiff is crdify's unhandled message on a and b
// ("unhandled changes found :" and go-cmp's diff), without go-cmp's diff
// of the fields that nest lists of schemas past maxListNest (see
// compareProperties): each of them that changed is given as two lines of
// its own, which operator-controller's wording (conciseUnhandled) says
// "AnyOf <nested too deep to diff> -> <nested too deep to diff>
// (changed)" of; the other fields are go-cmp's diff. (Where crdify
// leaves out an issue the old CRD had between two served versions when
// go-cmp writes the same diff, subtract leaves it out when the deep
// fields are the same, and the other fields' diff.)
func unhandledWithoutDeepDiff(a, b *apiextensionsv1.JSONSchemaProps) string {
	pa, pb := *a, *b
	va, vb := reflect.ValueOf(&pa).Elem(), reflect.ValueOf(&pb).Elem()
	var deep []string
	for _, f := range schemaFields {
		fa, fb := va.FieldByName(f), vb.FieldByName(f)
		na, sa := fieldShape(fa)
		nb, sb := fieldShape(fb)
		switch {
		case max(na, nb) <= maxListNest:
			continue
		case sa == 0 && sb <= maxFormatted, sb == 0 && sa <= maxFormatted:
			continue
		}
		if !equality.Semantic.DeepEqual(fa.Interface(), fb.Interface()) {
			// The second value keeps a comma that the wording takes
			// out: the same words, another text ("(changed)"). A
			// comment line, which the wording skips, tells the values
			// apart by their digests, for subtract: an issue the old
			// CRD had is left out when its deep fields were the same.
			deep = append(deep, fmt.Sprintf("-\t%s: %s,\n+\t%s: %s,,\n \t// %s: %s -> %s\n", f, deepValue, f, deepValue,
				f, valueDigest(fa.Interface()), valueDigest(fb.Interface())))
		}
		fa.SetZero()
		fb.SetZero()
	}
	msg := validations.ErrUnhandledChangesFound.Error() + " :\n" + cmp.Diff(&pa, &pb)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return msg + strings.Join(deep, "")
}

// fieldShape says how deep lists of schemas nest in a field of
// JSONSchemaProps (one of schemaFields, or Properties), and how many
// schemas it holds.
func fieldShape(v reflect.Value) (nest, size int) {
	add := func(n, s int) {
		nest, size = max(nest, n), size+s
	}
	switch x := v.Interface().(type) {
	case []apiextensionsv1.JSONSchemaProps:
		for i := range x {
			n, s := schemaShape(&x[i])
			add(n+1, s)
		}
	case *apiextensionsv1.JSONSchemaProps:
		return schemaShape(x)
	case *apiextensionsv1.JSONSchemaPropsOrBool:
		if x != nil {
			return schemaShape(x.Schema)
		}
	case map[string]apiextensionsv1.JSONSchemaProps:
		for k := range x {
			s := x[k]
			add(schemaShape(&s))
		}
	case apiextensionsv1.JSONSchemaDefinitions:
		return fieldShape(reflect.ValueOf(map[string]apiextensionsv1.JSONSchemaProps(x)))
	case apiextensionsv1.JSONSchemaDependencies:
		for _, dep := range x {
			add(schemaShape(dep.Schema))
		}
	}
	return nest, size
}

// schemaShape says how deep lists of schemas (allOf, anyOf, oneOf, items
// as a list) nest in s, and how many schemas s is and holds.
func schemaShape(s *apiextensionsv1.JSONSchemaProps) (nest, size int) {
	if s == nil {
		return 0, 0
	}
	size = 1
	add := func(n, z int) {
		nest, size = max(nest, n), size+z
	}
	v := reflect.ValueOf(s).Elem()
	for _, f := range schemaFields {
		add(fieldShape(v.FieldByName(f)))
	}
	add(fieldShape(reflect.ValueOf(s.Properties)))
	if s.Items != nil {
		add(schemaShape(s.Items.Schema))
		for i := range s.Items.JSONSchemas {
			n, z := schemaShape(&s.Items.JSONSchemas[i])
			add(n+1, z)
		}
	}
	return nest, size
}
