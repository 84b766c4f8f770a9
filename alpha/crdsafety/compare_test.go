package crdsafety

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validators/version/served"
)

// The cases of operator-controller's CRD upgrade-safety preflight tests
// (v1.11.0, crdupgradesafety_test.go TestUpgrade and the tests after it),
// restated on CRDs built here: the same old CRD and the same kinds of
// change, and the checks it expects to fail.

func props(kv ...any) map[string]apiextensionsv1.JSONSchemaProps {
	m := map[string]apiextensionsv1.JSONSchemaProps{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(apiextensionsv1.JSONSchemaProps)
	}
	return m
}

func str() apiextensionsv1.JSONSchemaProps { return apiextensionsv1.JSONSchemaProps{Type: "string"} }
func integer() apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "integer"}
}

// cronSpec is the spec of the preflight tests' old CRD: a field of each
// kind that the invalid upgrade then constrains.
func cronSpec() apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "description one",
		Required:    []string{"requiredVal"},
		Properties: props(
			"removedField", integer(),
			"enum", apiextensionsv1.JSONSchemaProps{Type: "string", Enum: enums("a", "b", "c")},
			"minMaxValue", integer(),
			"required", integer(),
			"minMaxItems", apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: ptr.To(str())}},
			"minMaxLength", str(),
			"defaultVal", str(),
			"requiredVal", str(),
			"minMaxProperties", apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: ptr.To(str())}},
		),
	}
}

var metaV1CRD = metav1.TypeMeta{APIVersion: APIVersionV1, Kind: crdKind}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func enums(vs ...string) []apiextensionsv1.JSON {
	var out []apiextensionsv1.JSON
	for _, v := range vs {
		out = append(out, apiextensionsv1.JSON{Raw: []byte(`"` + v + `"`)})
	}
	return out
}

func ver(name string, served, storage bool, spec apiextensionsv1.JSONSchemaProps) apiextensionsv1.CustomResourceDefinitionVersion {
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: served, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: props("spec", spec), Required: []string{"spec"}}}}
}

// oldCron is the old CRD: versions v1 and v2 served, v2 stored.
func oldCron() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metaV1CRD,
		ObjectMeta: objectMeta("crontabs.stable.example.com"),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Singular: "crontab", Kind: "CronTab"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				ver("v1", true, false, cronSpec()),
				ver("v2", true, true, cronSpec()),
			},
		},
	}
}

// specOf returns the spec property of version i, for changing it.
func specOf(crd *apiextensionsv1.CustomResourceDefinition, i int) *apiextensionsv1.JSONSchemaProps {
	root := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
	s := root.Properties["spec"]
	return &s
}

func setSpec(crd *apiextensionsv1.CustomResourceDefinition, i int, s *apiextensionsv1.JSONSchemaProps) {
	crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = *s
}

// editSpecs applies fn to the spec of every version.
func editSpecs(crd *apiextensionsv1.CustomResourceDefinition, fn func(s *apiextensionsv1.JSONSchemaProps)) {
	for i := range crd.Spec.Versions {
		s := specOf(crd, i)
		fn(s)
		setSpec(crd, i, s)
	}
}

func setField(s *apiextensionsv1.JSONSchemaProps, name string, fn func(p *apiextensionsv1.JSONSchemaProps)) {
	p := s.Properties[name]
	fn(&p)
	s.Properties[name] = p
}

func toCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) CRD {
	t.Helper()
	js, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := ParseManifest(js)
	if err != nil || !ok {
		t.Fatalf("ParseManifest: %v %v", ok, err)
	}
	return c
}

func newChecker(t testing.TB) *Checker {
	t.Helper()
	c, err := NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// compareCRDs is c.Compare, which fails the test on an error.
func compareCRDs(t testing.TB, c *Checker, old, new []CRD) []Change {
	t.Helper()
	cs, err := c.Compare(context.Background(), old, new)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// compareOne is c.compare on one pair, sorted.
func compareOne(t testing.TB, c *Checker, old, new CRD) []Change {
	t.Helper()
	cs, err := c.compare(context.Background(), old, new)
	if err != nil {
		t.Fatal(err)
	}
	sortChanges(cs)
	return cs
}

// compareIndex is ix.Compare, which fails the test on an error.
func compareIndex(t testing.TB, ix *Index, c *Checker, pkg, from, to string) Result {
	t.Helper()
	r, err := ix.Compare(context.Background(), c, pkg, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fields are the properties of a version's schema, as crdify names them.
func fields(v *apiextensionsv1.CustomResourceDefinitionVersion) map[string]bool {
	out := map[string]bool{}
	if v == nil || v.Schema == nil {
		return out
	}
	validations.SchemaHas(v.Schema.OpenAPIV3Schema, field.NewPath("^"), field.NewPath("^"), nil,
		func(_ *apiextensionsv1.JSONSchemaProps, _, loc *field.Path, _ []*apiextensionsv1.JSONSchemaProps) bool {
			out[loc.String()] = true
			return false
		})
	return out
}

func checks(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Check)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type ocCase struct {
	name string
	old  func() *apiextensionsv1.CustomResourceDefinition
	new  func() *apiextensionsv1.CustomResourceDefinition
	// wantChecks are the checks that must report (all of them, exactly).
	wantChecks []string
	// want are strings that must appear in the report.
	want []string
	// notWant must not appear.
	notWant []string
}

func operatorControllerCases() []ocCase {
	return []ocCase{
		{
			name: "valid upgrade: a new storage version, an enum value added",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) {
					setField(s, "enum", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = enums("a", "b", "c", "adding-enum-is-allowed") })
				})
				crd.Spec.Versions[1].Storage = false
				v3 := crd.Spec.Versions[1].DeepCopy()
				v3.Name, v3.Storage = "v3", true
				crd.Spec.Versions = append(crd.Spec.Versions, *v3)
				return crd
			},
		},
		{
			name: "every validation but field removal fails",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Scope = apiextensionsv1.NamespaceScoped
				// v2, the stored version, is gone: v1 becomes the storage.
				crd.Spec.Versions = crd.Spec.Versions[:1]
				crd.Spec.Versions[0].Storage = true
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) {
					setField(s, "enum", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = enums("a", "b") })
					setField(s, "minMaxValue", func(p *apiextensionsv1.JSONSchemaProps) {
						p.Minimum, p.Maximum = ptr.To(10.0), ptr.To(20.0)
					})
					setField(s, "minMaxItems", func(p *apiextensionsv1.JSONSchemaProps) { p.MinItems, p.MaxItems = ptr.To[int64](1), ptr.To[int64](5) })
					setField(s, "minMaxLength", func(p *apiextensionsv1.JSONSchemaProps) {
						p.MinLength, p.MaxLength = ptr.To[int64](1), ptr.To[int64](5)
					})
					setField(s, "minMaxProperties", func(p *apiextensionsv1.JSONSchemaProps) {
						p.MinProperties, p.MaxProperties = ptr.To[int64](1), ptr.To[int64](5)
					})
					setField(s, "defaultVal", func(p *apiextensionsv1.JSONSchemaProps) {
						p.Default = &apiextensionsv1.JSON{Raw: []byte(`"new default"`)}
					})
					s.Required = []string{"requiredVal", "required"}
				})
				return crd
			},
			wantChecks: []string{"default", "enum", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
				"minLength", "minProperties", "minimum", "required", "scope", "storedVersionRemoval"},
			want: []string{`scope changed : "Cluster" -> "Namespaced"`, "stored versions removed : [v2]", `allowed enum values removed : ["c"]`, "new required fields: [required]"},
		},
		{
			name: "existing field removed",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, "removedField") })
				return crd
			},
			wantChecks: []string{"existingFieldRemoval"},
			want:       []string{"CRD crontabs.stable.example.com v1 ^.spec.removedField: existingFieldRemoval: removed field", "v2 ^.spec.removedField"},
		},
		{
			name: "description changes pass",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) { s.Description = "description two" })
				return crd
			},
		},
		{
			name: "optional field added",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) { s.Properties["optional"] = str() })
				return crd
			},
		},
		{
			name: "served versions differ, but the new CRD converts through a webhook",
			old:  func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(false, false) },
			new:  func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(true, true) },
		},
		{
			name:       "served versions differ without a webhook: enum values removed from v1 to v2",
			old:        func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(false, false) },
			new:        func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(true, false) },
			wantChecks: []string{"enum"},
			want:       []string{"CRD crontabs.stable.example.com v1 -> v2 ^.spec.foobarbaz: enum: allowed enum values removed : [\"bar\" \"baz\" \"foo\"] (OLM v1 refuses it)"},
		},
		{
			name: "the old CRD had the same served-version issue",
			old:  func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(true, false) },
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := fooBarBaz(true, false)
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Description = "changed, to make it another manifest"
				return crd
			},
		},
		{
			name: "the old CRD had the same served-version issue, the new one adds another",
			old:  func() *apiextensionsv1.CustomResourceDefinition { return fooBarBaz(true, false) },
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := fooBarBaz(true, false)
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["extraField"] = apiextensionsv1.JSONSchemaProps{Type: "boolean"}
				crd.Spec.Versions[1].Schema.OpenAPIV3Schema.Properties["spec"].Properties["extraField"] = str()
				return crd
			},
			wantChecks: []string{"type"},
			want:       []string{`v1 -> v2 ^.spec.extraField: type: type changed : "boolean" -> "string"`},
			notWant:    []string{"enum"},
		},
		{
			name:       "complex breaking changes: type dropped, nullable added, oneOf added",
			old:        func() *apiextensionsv1.CustomResourceDefinition { return gateway(false) },
			new:        func() *apiextensionsv1.CustomResourceDefinition { return gateway(true) },
			wantChecks: []string{"nullable", "oneOf", "type"},
			want:       []string{`type: type changed : "object" -> ""`, "nullable: nullable added : false -> true", "oneOf: oneOf constraint added when there was none previously: [&JSONSchemaProps{"},
		},
		{
			name: "oneOf removed",
			old:  func() *apiextensionsv1.CustomResourceDefinition { return tls(true) },
			new:  func() *apiextensionsv1.CustomResourceDefinition { return tls(false) },
			// crdify walks oneOf's schemas as fields, so they are also
			// removed fields (there too).
			wantChecks: []string{"existingFieldRemoval", "oneOf"},
			want:       []string{"oneOf: allowed oneOf schemas removed: [", "v1beta1 ^.spec.tls.oneOf[0]: existingFieldRemoval"},
		},
		{
			name:       "oneOf added to an existing property",
			old:        func() *apiextensionsv1.CustomResourceDefinition { return tls(false) },
			new:        func() *apiextensionsv1.CustomResourceDefinition { return tls(true) },
			wantChecks: []string{"oneOf"},
			want:       []string{"v1beta1 ^.spec.tls: oneOf: oneOf constraint added when there was none previously"},
			notWant:    []string{"unhandled", "type:"},
		},
		{
			name: "a oneOf schema added",
			old:  func() *apiextensionsv1.CustomResourceDefinition { return tls(true) },
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := tls(true)
				p := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["tls"]
				p.OneOf = append(p.OneOf, apiextensionsv1.JSONSchemaProps{Required: []string{"mode"}})
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["tls"] = p
				return crd
			},
			wantChecks: []string{"oneOf"},
			want:       []string{"v1beta1 ^.spec.tls: oneOf: allowed oneOf schemas added: [&JSONSchemaProps{"},
			notWant:    []string{"unhandled"},
		},
		{
			name:       "unhandled change: a format added",
			old:        func() *apiextensionsv1.CustomResourceDefinition { return formatCRD("") },
			new:        func() *apiextensionsv1.CustomResourceDefinition { return formatCRD("email") },
			wantChecks: []string{"unhandled"},
			want:       []string{`^.spec.field: unhandled: unhandled changes found (Format "" -> "email")`},
			notWant:    []string{"JSONSchemaProps"},
		},
	}
}

func TestCompareOperatorControllerCases(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	for _, tc := range operatorControllerCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := compareCRDs(t, c, []CRD{toCRD(t, tc.old())}, []CRD{toCRD(t, tc.new())})
			var lines []string
			for _, ch := range got {
				lines = append(lines, ch.String())
			}
			report := strings.Join(lines, "\n")
			if g := checks(got); !slices.Equal(g, tc.wantChecks) {
				t.Errorf("checks %v, want %v; report:\n%s", g, tc.wantChecks, report)
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(report, w) {
					t.Errorf("report has %q:\n%s", w, report)
				}
			}
		})
	}
}

// fooBarBaz is the preflight tests' conversion CRD: v1 allows foo, bar
// and baz; with v2, v2 allows only bark and woof.
func fooBarBaz(withV2, webhook bool) *apiextensionsv1.CustomResourceDefinition {
	spec := func(vals ...string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("foobarbaz", apiextensionsv1.JSONSchemaProps{Type: "string", Enum: enums(vals...)})}
	}
	crd := oldCron()
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{ver("v1", true, true, spec("foo", "bar", "baz"))}
	if withV2 {
		crd.Spec.Versions = append(crd.Spec.Versions, ver("v2", true, false, spec("bark", "woof")))
	}
	if webhook {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
				ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "svc"}}}}
	}
	return crd
}

// gateway is the preflight tests' complex CRD: a tls object that the new
// version makes untyped, nullable and oneOf-constrained.
func gateway(changed bool) *apiextensionsv1.CustomResourceDefinition {
	tls := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("credentialName", str(), "mode", str())}
	if changed {
		tls.Type, tls.Nullable = "", true
		tls.OneOf = []apiextensionsv1.JSONSchemaProps{{Required: []string{"mode", "credentialName"}}, {Required: []string{"httpsRedirect"}}}
		tls.Properties["httpsRedirect"] = apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	}
	server := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("hosts", apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: ptr.To(str())}}, "tls", tls)}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("servers", apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &server}})}
	crd := oldCron()
	crd.Name, crd.Spec.Group, crd.Spec.Names = "services.networking.example.com", "networking.example.com",
		apiextensionsv1.CustomResourceDefinitionNames{Plural: "services", Kind: "Service"}
	crd.Spec.Scope = apiextensionsv1.NamespaceScoped
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{ver("v1beta1", true, true, spec)}
	return crd
}

func tls(oneOf bool) *apiextensionsv1.CustomResourceDefinition {
	t := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("credentialName", str(), "mode", str(), "httpsRedirect", apiextensionsv1.JSONSchemaProps{Type: "boolean"})}
	if oneOf {
		t.OneOf = []apiextensionsv1.JSONSchemaProps{{Required: []string{"mode", "credentialName"}}, {Required: []string{"httpsRedirect"}}}
	}
	crd := gateway(false)
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{ver("v1beta1", true, true, apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("tls", t)})}
	return crd
}

func formatCRD(format string) *apiextensionsv1.CustomResourceDefinition {
	crd := gateway(false)
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{ver("v1alpha1", true, true,
		apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props("field", apiextensionsv1.JSONSchemaProps{Type: "string", Format: format})})}
	return crd
}

// referenceChanges is what crdify's own runner (runner.Run, on the whole
// CRDs, operator-controller's configuration) reports, through the same
// changes as Checker: the answer Checker's comparisons must give. But for
// one thing: crdify's runner leaves out the issues the old CRD already had
// between two served versions by comparing its messages as they are,
// go-cmp's diffs among them, whose spacing go-cmp varies on purpose, and
// which show unchanged lines around the changes; so it may or may not
// leave out an issue from one run to the next (docs/crd-safety.md). The
// served versions are compared here with crdify's served-version
// validator, each CRD's pairs alone, and the old CRD's issues left out
// with the Checker's subtract, which compares tidied messages: the answer
// crdify's runner gives when it leaves the issue out.
func referenceChanges(t testing.TB, oldCRD, newCRD CRD) []Change {
	t.Helper()
	full := func(c CRD) *apiextensionsv1.CustomResourceDefinition {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := json.Unmarshal(c.JSON, &crd); err != nil {
			t.Fatal(err)
		}
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Schema == nil {
				crd.Spec.Versions[i].Schema = &apiextensionsv1.CustomResourceValidation{}
			}
		}
		return &crd
	}
	old, nw := full(oldCRD), full(newCRD)
	old.Status.StoredVersions = storedVersions(old)
	r, err := runner.New(crdifyConfig(), runner.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rr := r.Run(old, nw)
	res := results{crd: rr.CRDValidation}
	for _, v := range rr.SameVersionValidation {
		res.same = append(res.same, versionResult{version: v.Version, properties: v.PropertyComparisons})
	}
	comparators := newChecker(t).properties
	pairs := func(crd *apiextensionsv1.CustomResourceDefinition) map[string][]validations.PropertyComparisonResult {
		if crd == old {
			crd = crd.DeepCopy()
			crd.Spec.Conversion = nil // crdify compares the old CRD's pairs whatever its conversion
		}
		v := served.New(served.WithComparators(comparators...), served.WithConversionPolicy(config.ConversionPolicyIgnore),
			served.WithUnhandledEnforcementPolicy(config.EnforcementPolicyError))
		out := map[string][]validations.PropertyComparisonResult{}
		for _, p := range v.Validate(&apiextensionsv1.CustomResourceDefinition{}, crd) {
			out[p.Version] = p.PropertyComparisons
		}
		return out
	}
	oldPairs := pairs(old)
	for name, found := range pairs(nw) {
		if known, ok := oldPairs[name]; ok {
			found = subtract(found, known)
		}
		_, later, _ := strings.Cut(name, " -> ")
		res.served = append(res.served, versionResult{version: name, properties: found, later: fields(version(nw, later))})
	}
	cs := changes(Change{CRD: newCRD.Name}, old, nw, res)
	sortChanges(cs)
	return cs
}

// TestOneOfPointerAddresses: crdify's oneOf check compares a oneOf's
// schemas by their String(), which prints the properties inside them
// with %v, pointers (a maxLength) as their addresses: the old and the new
// CRD's never match, and a node whose oneOf's schemas have such
// properties is reported changed whenever crdify compares it, for a
// description too (operator-controller v1.11.0 refuses this update; the
// same with a pattern, a string, it allows), and the issues of served
// versions are never the old CRD's. The addresses are written 0x0.
func TestOneOfPointerAddresses(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	crd := func(constraint apiextensionsv1.JSONSchemaProps, description string) *apiextensionsv1.CustomResourceDefinition {
		spec := apiextensionsv1.JSONSchemaProps{Type: "object", Description: description,
			Properties: props("a", str(), "b", str()),
			OneOf:      []apiextensionsv1.JSONSchemaProps{{Properties: props("a", constraint)}, {Required: []string{"b"}}}}
		out := oldCron()
		out.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{ver("v1", true, true, spec)}
		return out
	}
	maxLength := apiextensionsv1.JSONSchemaProps{MaxLength: ptr.To[int64](3)}
	got := compareCRDs(t, c, []CRD{toCRD(t, crd(maxLength, "one"))}, []CRD{toCRD(t, crd(maxLength, "two"))})
	if len(got) != 1 || got[0].Check != "oneOf" || got[0].Field != "^.spec" || !strings.Contains(got[0].Message, "allowed oneOf schemas removed: [") ||
		!strings.Contains(got[0].Message, " 0x0 ") || got[0].V1 != Refuses {
		t.Errorf("a description changed beside a oneOf holding a maxLength:\n%s", report(got))
	}
	pattern := apiextensionsv1.JSONSchemaProps{Pattern: "x"}
	if got := compareCRDs(t, c, []CRD{toCRD(t, crd(pattern, "one"))}, []CRD{toCRD(t, crd(pattern, "two"))}); len(got) != 0 {
		t.Errorf("a description changed beside a oneOf holding a pattern:\n%s", report(got))
	}
	// The issues the old CRD had between two served versions are left out
	// by their messages, which hold different addresses: the same CRD,
	// byte for byte, is refused when v2 adds such a oneOf to v1's schema
	// (as operator-controller v1.11.0 refuses it).
	twoVersions := func(constraint apiextensionsv1.JSONSchemaProps) CRD {
		v2 := crd(constraint, "")
		v1 := v2.Spec.Versions[0].DeepCopy()
		spec := v1.Schema.OpenAPIV3Schema.Properties["spec"]
		spec.OneOf = nil
		v1.Schema.OpenAPIV3Schema.Properties["spec"] = spec
		v2.Spec.Versions[0].Name = "v2"
		v1.Storage = false
		v2.Spec.Versions = append([]apiextensionsv1.CustomResourceDefinitionVersion{*v1}, v2.Spec.Versions...)
		return toCRD(t, v2)
	}
	same := twoVersions(maxLength)
	got = compareCRDs(t, c, []CRD{same}, []CRD{same})
	if len(got) != 1 || got[0].Version != "v1 -> v2" || got[0].Check != "oneOf" || got[0].V1 != Refuses ||
		!strings.HasPrefix(got[0].Message, "oneOf constraint added when there was none previously: [") {
		t.Errorf("the same CRD, whose v2 adds a oneOf holding a maxLength:\n%s", report(got))
	}
	same = twoVersions(pattern)
	if got := compareCRDs(t, c, []CRD{same}, []CRD{same}); len(got) != 0 {
		t.Errorf("the same CRD, whose v2 adds a oneOf holding a pattern:\n%s", report(got))
	}
}

// TestSubtractOneOfAddresses: a oneOf issue whose message holds pointer
// addresses is never one the old CRD had (crdify's addresses are of the
// old and the new CRD's schemas, live at once), even when the same
// address was printed for both, as can happen to ours when the old
// CRD's schemas are decoded into memory freed from the new one's. An
// issue without addresses is left out when the old CRD had it.
func TestSubtractOneOfAddresses(t *testing.T) {
	t.Parallel()
	issue := func(msg string) []validations.PropertyComparisonResult {
		return []validations.PropertyComparisonResult{{Property: "^.spec", ComparisonResults: []validations.ComparisonResult{{Name: "oneOf", Errors: []string{msg}}}}}
	}
	withAddress := "oneOf constraint added when there was none previously: [&JSONSchemaProps{MaxLength:0xc000a1b2c8,}]"
	got := subtract(issue(withAddress), issue(withAddress))
	if len(got) != 1 || len(got[0].ComparisonResults) != 1 || !slices.Equal(got[0].ComparisonResults[0].Errors, []string{withAddress}) {
		t.Errorf("an issue whose message holds an address was left out: %+v", got)
	}
	without := "oneOf constraint added when there was none previously: [&JSONSchemaProps{Pattern:x,}]"
	got = subtract(issue(without), issue(without))
	if len(got) != 1 || len(got[0].ComparisonResults) != 1 || len(got[0].ComparisonResults[0].Errors) != 0 {
		t.Errorf("an issue the old CRD had was kept: %+v", got)
	}
}
