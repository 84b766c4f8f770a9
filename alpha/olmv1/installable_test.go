package olmv1

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// csv is a hand-made ClusterServiceVersion's spec.
type csv struct {
	modes       []string // supported install modes (AllNamespaces when nil)
	deployments []string
	owned       []string
	apiServices int
	webhooks    []Webhook
}

func (c csv) manifest() string {
	modes := c.modes
	if modes == nil {
		modes = []string{AllNamespaces}
	}
	var ims []map[string]any
	for _, m := range []string{OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces} {
		ims = append(ims, map[string]any{"type": m, "supported": slices.Contains(modes, m)})
	}
	deps := []map[string]any{}
	for _, d := range c.deployments {
		deps = append(deps, map[string]any{"name": d, "spec": map[string]any{}})
	}
	owned := []map[string]any{}
	for _, o := range c.owned {
		owned = append(owned, map[string]any{"name": o, "version": "v1", "kind": "K"})
	}
	apis := []map[string]any{}
	for i := 0; i < c.apiServices; i++ {
		apis = append(apis, map[string]any{"name": "v1.example.com", "group": "example.com", "version": "v1", "kind": "K"})
	}
	js, _ := json.Marshal(map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": "op.v1.0.0"},
		"spec": map[string]any{
			"install":                   map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": deps}},
			"installModes":              ims,
			"customresourcedefinitions": map[string]any{"owned": owned},
			"apiservicedefinitions":     map[string]any{"owned": apis},
			"webhookdefinitions":        c.webhooks,
		},
	})
	return string(js)
}

func crd(name string, preserve bool) string {
	return fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":%q},"spec":{"preserveUnknownFields":%v}}`, name, preserve)
}

func yamlObject(kind, name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n", kind, name)
}

// bundleWith is a bundle whose olm.bundle.object properties hold the
// manifests, read as a catalog's bundle is.
func bundleWith(pkg string, manifests ...string) *Bundle {
	bd := declcfg.Bundle{Name: "op.v1.0.0", Package: pkg, Properties: []property.Property{pkgProp(pkg, "1.0.0")}}
	for _, m := range manifests {
		v, _ := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(m))})
		bd.Properties = append(bd.Properties, property.Property{Type: property.TypeBundleObject, Value: v})
	}
	return NewBundle(&bd)
}

const dns1123 = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

// TestCheck restates the cases of operator-controller v1.11.0's
// validators (rukpak/render/registryv1/validators/validator_test.go), its
// manifest provider's (applier/provider_test.go), render's target
// namespaces and the CRD generator's conversion check, with their words.
func TestCheck(t *testing.T) {
	long := "a-name-is-w" + strings.Repeat("a", 240) + "y-too-long-and-bad-"
	conv := func(name string, crds ...string) Webhook {
		return Webhook{Type: webhookConversion, GenerateName: name, DeploymentName: "d", ConversionCRDs: crds}
	}
	adm := func(typ, name string, groups, resources []string) Webhook {
		return Webhook{Type: typ, GenerateName: name, DeploymentName: "d", Rules: []WebhookRule{{APIGroups: groups, Resources: resources}}}
	}
	for _, tc := range []struct {
		name      string
		pkg       string
		manifests []string
		cfg       Config
		want      []string
	}{
		{name: "a plain bundle installs", manifests: []string{csv{deployments: []string{"d"}, owned: []string{"a.crd"}}.manifest(), crd("a.crd", false), yamlObject("Service", "s")}},
		{name: "duplicate deployment names, sorted", manifests: []string{csv{deployments: []string{"test-deployment-b", "test-deployment-a", "test-deployment-b", "test-deployment-a"}}.manifest()},
			want: []string{"cluster service version contains duplicate strategy deployment spec 'test-deployment-a'", "cluster service version contains duplicate strategy deployment spec 'test-deployment-b'"}},
		{name: "deployment names not DNS-1123, sorted", manifests: []string{csv{deployments: []string{long, "-bad-name"}}.manifest()},
			want: []string{"invalid cluster service version strategy deployment name '-bad-name': " + dns1123,
				"invalid cluster service version strategy deployment name '" + long + "': " + dns1123 + ", must be no more than 253 characters"}},
		{name: "duplicate CRDs, sorted", manifests: []string{csv{}.manifest(), crd("c.crd.something", false), crd("a.crd.something", false), crd("c.crd.something", false), crd("a.crd.something", false)},
			want: []string{"bundle contains duplicate custom resource definition 'a.crd.something'", "bundle contains duplicate custom resource definition 'c.crd.something'"}},
		{name: "owned CRDs missing, sorted", manifests: []string{csv{owned: []string{"c.crd.something", "a.crd.something", "b.crd.something"}}.manifest()},
			want: []string{"cluster service definition references owned custom resource definition 'a.crd.something' not found in bundle",
				"cluster service definition references owned custom resource definition 'b.crd.something' not found in bundle",
				"cluster service definition references owned custom resource definition 'c.crd.something' not found in bundle"}},
		{name: "empty package name", pkg: "-", manifests: []string{csv{}.manifest()}, want: []string{"package name is empty"}},
		{name: "conversion webhooks with AllNamespaces only", manifests: []string{csv{deployments: []string{"d"}, owned: []string{"a"}, webhooks: []Webhook{conv("w", "a")}}.manifest(), crd("a", false)}},
		{name: "validating webhook with more modes than AllNamespaces", manifests: []string{csv{modes: []string{AllNamespaces, SingleNamespace}, deployments: []string{"d"}, webhooks: []Webhook{adm("ValidatingAdmissionWebhook", "w", []string{"apps"}, []string{"deployments"})}}.manifest()}},
		{name: "conversion webhooks with more modes than AllNamespaces", manifests: []string{csv{modes: []string{AllNamespaces, SingleNamespace}, deployments: []string{"d"}, owned: []string{"a", "b"},
			webhooks: []Webhook{conv("webhook-b", "b"), conv("webhook-a", "a")}}.manifest(), crd("a", false), crd("b", false)},
			want: []string{
				`bundle contains conversion webhook "webhook-b" and supports install modes [AllNamespaces SingleNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode`,
				`bundle contains conversion webhook "webhook-a" and supports install modes [AllNamespaces SingleNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode`}},
		{name: "webhooks of a missing deployment, sorted", manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{
			{Type: "ValidatingAdmissionWebhook", GenerateName: "b", DeploymentName: "y"}, {Type: "MutatingAdmissionWebhook", GenerateName: "a", DeploymentName: "y"}, {Type: "ValidatingAdmissionWebhook", GenerateName: "c", DeploymentName: "x"}}}.manifest()},
			want: []string{"webhook of type 'ValidatingAdmissionWebhook' with name 'c' references non-existent deployment 'x'",
				"webhook of type 'MutatingAdmissionWebhook' with name 'a' references non-existent deployment 'y'",
				"webhook of type 'ValidatingAdmissionWebhook' with name 'b' references non-existent deployment 'y'"}},
		{name: "duplicate webhook names per type", manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{
			{Type: "ValidatingAdmissionWebhook", GenerateName: "w", DeploymentName: "d"}, {Type: "ValidatingAdmissionWebhook", GenerateName: "w", DeploymentName: "d"}, {Type: "MutatingAdmissionWebhook", GenerateName: "w", DeploymentName: "d"}}}.manifest()},
			want: []string{"duplicate webhook 'w' of type 'ValidatingAdmissionWebhook'"}},
		{name: "webhook names not DNS-1123", manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{{Type: "MutatingAdmissionWebhook", GenerateName: "Bad_Name", DeploymentName: "d"}}}.manifest()},
			want: []string{"webhook of type 'MutatingAdmissionWebhook' has invalid name 'Bad_Name': " + dns1123}},
		{name: "two conversion webhooks for one CRD", manifests: []string{csv{deployments: []string{"d"}, owned: []string{"a"}, webhooks: []Webhook{conv("w2", "a"), conv("w1", "a")}}.manifest(), crd("a", false)},
			want: []string{"conversion webhooks [w1,w2] reference same custom resource definition 'a'"}},
		{name: "conversion webhook for a CRD not owned", manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{conv("w", "b.crd", "a.crd")}}.manifest()},
			want: []string{"conversion webhook 'w' references custom resource definition 'a.crd' not owned bundle", "conversion webhook 'w' references custom resource definition 'b.crd' not owned bundle"}},
		{name: "forbidden webhook rules", manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{
			adm("ValidatingAdmissionWebhook", "webhook-z", []string{"*"}, nil),
			adm("MutatingAdmissionWebhook", "webhook-a", []string{"olm.operatorframework.io"}, nil),
			adm("ValidatingAdmissionWebhook", "webhook-b", []string{"admissionregistration.k8s.io"}, []string{"MutatingWebhookConfiguration", "validatingwebhookconfigurations", "*", "pods"}),
			conv("webhook-c")}}.manifest()},
			want: []string{`webhook "webhook-z" contains forbidden rule: admission webhook rules cannot reference API group "*"`,
				`webhook "webhook-a" contains forbidden rule: admission webhook rules cannot reference API group "olm.operatorframework.io"`,
				`webhook "webhook-b" contains forbidden rule: admission webhook rules cannot reference resource "MutatingWebhookConfiguration" for API group "admissionregistration.k8s.io"`,
				`webhook "webhook-b" contains forbidden rule: admission webhook rules cannot reference resource "validatingwebhookconfigurations" for API group "admissionregistration.k8s.io"`,
				`webhook "webhook-b" contains forbidden rule: admission webhook rules cannot reference resource "*" for API group "admissionregistration.k8s.io"`}},
		{name: "unsupported object kinds", manifests: []string{csv{}.manifest(), yamlObject("Deployment", "dep"), yamlObject("ConfigMap", "cm"), yamlObject("Namespace", "ns")},
			want: []string{`unsupported resource "dep" with kind "Deployment"`, `unsupported resource "ns" with kind "Namespace"`}},
		{name: "conversion CRD that preserves unknown fields", manifests: []string{csv{deployments: []string{"d"}, owned: []string{"a"}, webhooks: []Webhook{conv("w", "a")}}.manifest(), crd("a", true)},
			want: []string{"custom resource definition 'a' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion"}},
		// The manifest provider (applier/provider_test.go).
		{name: "owned API services", manifests: []string{csv{apiServices: 1}.manifest()}, want: []string{"unsupported bundle: apiServiceDefintions are not supported"}},
		{name: "webhooks without a certificate provider", cfg: Config{NoWebhookProvider: true}, manifests: []string{csv{deployments: []string{"d"}, webhooks: []Webhook{adm("ValidatingAdmissionWebhook", "w", nil, nil)}}.manifest()},
			want: []string{"unsupported bundle: webhookDefinitions are not supported"}},
		{name: "no AllNamespaces without the feature gate", manifests: []string{csv{modes: []string{OwnNamespace, SingleNamespace}}.manifest()},
			want: []string{"unsupported bundle: bundle does not support AllNamespaces install mode"}},
		{name: "MultiNamespace only", manifests: []string{csv{modes: []string{MultiNamespace}}.manifest()},
			want: []string{"unsupported bundle: bundle does not support AllNamespaces install mode", "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes"}},
		{name: "no CSV", manifests: []string{crd("a", false)}, want: []string{`no ClusterServiceVersion found in "manifests"`}},
		{name: "SingleNamespace only, a watchNamespace but not the gate", cfg: Config{InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()},
			want: []string{"unsupported bundle: bundle does not support AllNamespaces install mode"}},
		{name: "OwnNamespace only, the gate but no watchNamespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns"}, manifests: []string{csv{modes: []string{OwnNamespace}}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing`}},
		{name: "MultiNamespace only, with the gate: no consequence of it reported", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns"}, manifests: []string{csv{modes: []string{MultiNamespace}}.manifest()},
			want: []string{"unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes"}},
		{name: "AllNamespaces and SingleNamespace, a watchNamespace without the gate: a configuration is read", cfg: Config{InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{AllNamespaces, SingleNamespace}}.manifest()}},
		{name: "AllNamespaces only, a watchNamespace without the gate", cfg: Config{InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace"`}},
		// The watchNamespace configuration, with the gate.
		{name: "OwnNamespace with its namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "ns"}, manifests: []string{csv{modes: []string{OwnNamespace}}.manifest()}},
		{name: "OwnNamespace with another namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{OwnNamespace}}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: invalid format for field "watchNamespace": 'other' is not valid ownNamespaceInstallMode: invalid value "other": must be "ns" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`}},
		{name: "SingleNamespace with the install namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "ns"}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: invalid format for field "watchNamespace": 'ns' is not valid singleNamespaceInstallMode: invalid value "ns": must be different from "ns" (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace`}},
		{name: "SingleNamespace with another namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()}},
		{name: "SingleNamespace without a watchNamespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns"}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing`}},
		{name: "watchNamespace for an AllNamespaces-only bundle", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace"`}},
		{name: "watchNamespace not a namespace name", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "Not_A_Name"}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()},
			want: []string{`invalid ClusterExtension configuration: invalid configuration: field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`}},
		{name: "AllNamespaces and OwnNamespace with its namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "ns"}, manifests: []string{csv{modes: []string{AllNamespaces, OwnNamespace}}.manifest()}},
		{name: "AllNamespaces and OwnNamespace with another namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{AllNamespaces, OwnNamespace}}.manifest()},
			want: []string{"invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n" +
				`  - invalid value for field "watchNamespace"` + "\n" +
				`  - invalid type for field "watchNamespace": got string, want null` + "\n" +
				`  - invalid format for field "watchNamespace": 'other' is not valid ownNamespaceInstallMode: invalid value "other": must be "ns" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`}},
		// What operator-controller v1.11.0 answered for watch namespaces
		// its schema refuses (hack/olmv1diff; config's
		// error_formatting_test.go checks substrings of these): the
		// format alone when it fails, then every length and pattern
		// error, and with AllNamespaces the anyOf's errors before them.
		{name: "OwnNamespace with a name too long and not a namespace name: the format first", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: strings.Repeat("A", 64)}, manifests: []string{csv{modes: []string{OwnNamespace}}.manifest()},
			want: []string{fmt.Sprintf(`invalid ClusterExtension configuration: invalid configuration: invalid format for field "watchNamespace": '%[1]s' is not valid ownNamespaceInstallMode: invalid value %[1]q: must be "ns" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`, strings.Repeat("A", 64))}},
		{name: "SingleNamespace with a name too long and not a namespace name", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: strings.Repeat("A", 64)}, manifests: []string{csv{modes: []string{SingleNamespace}}.manifest()},
			want: []string{"invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n" +
				`  - field "watchNamespace" must have maximum length of 63 (len=64)` + "\n" +
				`  - field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`}},
		{name: "AllNamespaces and SingleNamespace with a name that is not a namespace name", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "Team_A"}, manifests: []string{csv{modes: []string{AllNamespaces, SingleNamespace}}.manifest()},
			want: []string{"invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n" +
				`  - invalid value for field "watchNamespace"` + "\n" +
				`  - invalid type for field "watchNamespace": got string, want null` + "\n" +
				`  - field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`}},
		{name: "AllNamespaces and SingleNamespace with a name too long and not a namespace name", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: strings.Repeat("A", 64)}, manifests: []string{csv{modes: []string{AllNamespaces, SingleNamespace}}.manifest()},
			want: []string{"invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n" +
				`  - invalid value for field "watchNamespace"` + "\n" +
				`  - invalid type for field "watchNamespace": got string, want null` + "\n" +
				"  - validation failed\n" +
				`  - field "watchNamespace" must have maximum length of 63 (len=64)` + "\n" +
				`  - field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`}},
		{name: "Own and Single with another namespace", cfg: Config{SingleOwnNamespace: true, InstallNamespace: "ns", WatchNamespace: "other"}, manifests: []string{csv{modes: []string{OwnNamespace, SingleNamespace}}.manifest()}},
		{name: "Own and Single without an install namespace: the one that suits", cfg: Config{SingleOwnNamespace: true, WatchNamespace: "other"}, manifests: []string{csv{modes: []string{OwnNamespace}}.manifest()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkg := "op"
			if tc.pkg == "-" {
				pkg = ""
			} else if tc.pkg != "" {
				pkg = tc.pkg
			}
			in := Check(bundleWith(pkg, tc.manifests...), tc.cfg)
			if !slices.Equal(in.Reasons, tc.want) {
				t.Fatalf("reasons:\n  %s\nwant:\n  %s", strings.Join(in.Reasons, "\n  "), strings.Join(tc.want, "\n  "))
			}
			want := Installable
			if len(tc.want) > 0 {
				want = NotInstallable
			}
			if in.Status != want || in.Checked != "bundle objects" {
				t.Errorf("status %s (checked %s), want %s", in.Status, in.Checked, want)
			}
		})
	}
}

// TestCheckWithoutObjects: dependencies (resolve's validation_test.go)
// and what olm.csv.metadata tells; without objects the answer is unknown
// unless a reason is found.
func TestCheckWithoutObjects(t *testing.T) {
	dep := func(typ string) property.Property {
		return property.Property{Type: typ, Value: json.RawMessage(`{}`)}
	}
	meta := func(modes ...string) property.Property {
		var ims []InstallMode
		for _, m := range modes {
			ims = append(ims, InstallMode{Type: m, Supported: true})
		}
		v, _ := json.Marshal(map[string]any{"installModes": ims})
		return property.Property{Type: property.TypeCSVMetadata, Value: v}
	}
	for _, tc := range []struct {
		name    string
		props   []property.Property
		status  Status
		checked string
		want    []string
	}{
		{"no dependencies, nothing else", nil, Unknown, "properties only", nil},
		{"a package dependency", []property.Property{dep(property.TypePackageRequired)}, NotInstallable, "properties only",
			[]string{`bundle "b" has a dependency declared via property "olm.package.required" which is currently not supported`}},
		{"gvk and constraint, each once", []property.Property{dep(property.TypeGVKRequired), dep(property.TypeConstraint), dep(property.TypeGVKRequired)}, NotInstallable, "properties only",
			[]string{`bundle "b" has a dependency declared via property "olm.gvk.required" which is currently not supported`,
				`bundle "b" has a dependency declared via property "olm.constraint" which is currently not supported`}},
		{"a label dependency is no dependency to OLM v1", []property.Property{dep("olm.label.required")}, Unknown, "properties only", nil},
		{"csv metadata with AllNamespaces", []property.Property{meta(AllNamespaces, OwnNamespace)}, Unknown, "olm.csv.metadata only", nil},
		{"csv metadata without AllNamespaces", []property.Property{meta(OwnNamespace)}, NotInstallable, "olm.csv.metadata only",
			[]string{"unsupported bundle: bundle does not support AllNamespaces install mode"}},
	} {
		bd := declcfg.Bundle{Name: "b", Package: "p", Properties: append([]property.Property{pkgProp("p", "1.0.0")}, tc.props...)}
		in := Check(NewBundle(&bd), Config{})
		if in.Status != tc.status || in.Checked != tc.checked || !slices.Equal(in.Reasons, tc.want) {
			t.Errorf("%s: got %s (%s) %q, want %s (%s) %q", tc.name, in.Status, in.Checked, in.Reasons, tc.status, tc.checked, tc.want)
		}
	}
}

// TestResolveRefusesDependencies: the resolver's NoDependencyValidation
// fails the resolution of a bundle with a dependency, naming the first
// (TestValidationFailed), and does not pick another bundle.
func TestResolveRefusesDependencies(t *testing.T) {
	f := genPackage("pkg")
	f.bundles[5].Properties = append(f.bundles[5].Properties,
		property.Property{Type: property.TypeGVKRequired, Value: json.RawMessage(`{"group":"g","kind":"K","version":"v1"}`)},
		property.Property{Type: property.TypePackageRequired, Value: json.RawMessage(`{"packageName":"x","versionRange":">=1.0.0"}`)})
	r := newResolver(t, catalogOf(t, "c", 0, f))
	a, err := r.Resolve(Spec{Package: "pkg"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `validating bundle "pkg.v3.0.0": bundle "pkg.v3.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported`
	if a.Resolved || a.Error != want || a.Bundle == nil || a.Bundle.Name != "pkg.v3.0.0" {
		t.Fatalf("got resolved=%v %q (bundle %+v), want %q", a.Resolved, a.Error, a.Bundle, want)
	}
	if a.Installable == nil || a.Installable.Status != NotInstallable || len(a.Installable.Reasons) != 2 {
		t.Errorf("installable: %+v", a.Installable)
	}
}

// TestManifestDecode: what is wrong in a bundle's manifests is a reason
// in words, never a panic: a CSV is read as operator-controller decodes it
// (the members the checks read must have their Go types; null is
// nothing), another object's spec may hold anything, a manifest must be
// an object with a kind, and each document of a stream counts.
func TestManifestDecode(t *testing.T) {
	csvWith := func(spec string) string {
		return `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"c"}` + spec + `}`
	}
	const all = `"installModes":[{"type":"AllNamespaces","supported":true}]`
	noAll := []string{"unsupported bundle: bundle does not support AllNamespaces install mode",
		"unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes"}
	undecodable := func(why string) []string {
		return []string{`manifest "c" (ClusterServiceVersion) does not decode: ` + why}
	}
	for _, tc := range []struct {
		name      string
		manifests []string
		want      []string
	}{
		{"a CSV without spec supports no install mode", []string{csvWith("")}, noAll},
		{"a CSV with a null spec", []string{csvWith(`,"spec":null`)}, noAll},
		{"empty install modes", []string{csvWith(`,"spec":{"installModes":[]}`)}, noAll},
		{"install modes not supported", []string{csvWith(`,"spec":{"installModes":[{"type":"AllNamespaces","supported":false},null]}`)}, noAll},
		{"a spec that is no object", []string{csvWith(`,"spec":"everything"`)}, undecodable(`"spec" must be an object, found a string`)},
		{"install modes that are no list", []string{csvWith(`,"spec":{"installModes":"AllNamespaces"}`)}, undecodable(`"spec.installModes" must be a list of objects, found a string`)},
		{"an install mode that is no object", []string{csvWith(`,"spec":{"installModes":["AllNamespaces"]}`)}, undecodable(`"spec.installModes[]" must be an object, found a string`)},
		{"supported that is no boolean", []string{csvWith(`,"spec":{"installModes":[{"type":"AllNamespaces","supported":"yes"}]}`)}, undecodable(`"spec.installModes[].supported" must be a boolean, found a string`)},
		{"member names are exact", []string{csvWith(`,"spec":{"installModes":[{"Type":"AllNamespaces","Supported":true}]}`)}, noAll},
		{"an install strategy that is no object", []string{csvWith(`,"spec":{` + all + `,"install":"deployment"}`)}, undecodable(`"spec.install" must be an object, found a string`)},
		{"deployments that are no objects", []string{csvWith(`,"spec":{` + all + `,"install":{"spec":{"deployments":[1]}}}`)}, undecodable(`"spec.install.spec.deployments[]" must be an object, found a number`)},
		{"a deployment name that is no string", []string{csvWith(`,"spec":{` + all + `,"install":{"spec":{"deployments":[{"name":7}]}}}`)}, undecodable(`"spec.install.spec.deployments[].name" must be a string, found a number`)},
		{"owned CRDs that are no list", []string{csvWith(`,"spec":{` + all + `,"customresourcedefinitions":{"owned":{"name":"a.example.com"}}}`)}, undecodable(`"spec.customresourcedefinitions.owned" must be a list of objects, found an object`)},
		{"owned API services that are no list", []string{csvWith(`,"spec":{` + all + `,"apiservicedefinitions":{"owned":{"name":"a"}}}`)}, undecodable(`"spec.apiservicedefinitions.owned" must be a list of objects, found an object`)},
		{"a webhook that is no object", []string{csvWith(`,"spec":{` + all + `,"webhookdefinitions":[1]}`)}, undecodable(`"spec.webhookdefinitions[]" must be an object, found a number`)},
		{"conversion CRDs that are no list", []string{csvWith(`,"spec":{` + all + `,"webhookdefinitions":[{"type":"ConversionWebhook","conversionCRDs":"a.example.com"}]}`)}, undecodable(`"spec.webhookdefinitions[].conversionCRDs" must be a list of strings, found a string`)},
		{"a rule's API group that is no string", []string{csvWith(`,"spec":{` + all + `,"webhookdefinitions":[{"type":"ValidatingAdmissionWebhook","rules":[{"apiGroups":[1]}]}]}`)}, undecodable(`"spec.webhookdefinitions[].rules[].apiGroups[]" must be a string, found a number`)},
		{"a CSV name that is no string", []string{`{"kind":"ClusterServiceVersion","metadata":{"name":["c"]},"spec":{` + all + `}}`},
			[]string{`manifest "" (ClusterServiceVersion) does not decode: "metadata.name" must be a string, found a list`}},
		{"a CRD spec that is no object", []string{csvWith(`,"spec":{` + all + `}`), `{"kind":"CustomResourceDefinition","metadata":{"name":"a.example.com"},"spec":"s"}`},
			[]string{`manifest "a.example.com" (CustomResourceDefinition) does not decode: "spec" must be an object, found a string`}},
		{"preserveUnknownFields that is no boolean", []string{csvWith(`,"spec":{` + all + `}`), `{"kind":"CustomResourceDefinition","metadata":{"name":"a.example.com"},"spec":{"preserveUnknownFields":"no"}}`},
			[]string{`manifest "a.example.com" (CustomResourceDefinition) does not decode: "spec.preserveUnknownFields" must be a boolean, found a string`}},
		{"another object's spec may hold anything", []string{csvWith(`,"spec":{` + all + `}`), `{"kind":"Service","metadata":{"name":"s"},"spec":{"install":"anything","installModes":7}}`}, nil},
		{"manifests that are no objects", []string{csvWith(`,"spec":{` + all + `}`), `[1,2]`, "- a list\n", `"text"`, `7`},
			[]string{"a manifest does not decode: it is not an object", "a manifest does not decode: it is not an object", "a manifest does not decode: it is not an object", "a manifest does not decode: it is not an object"}},
		{"empty and null manifests are nothing", []string{csvWith(`,"spec":{` + all + `}`), ``, "  \n", `null`, "---\n"}, nil},
		{"a manifest without a kind", []string{csvWith(`,"spec":{` + all + `}`), `{"apiVersion":"v1","metadata":{"name":"cm"}}`, `{"kind":null}`},
			[]string{`manifest "cm" has no kind`, "a manifest has no kind"}},
		{"a kind that is no string", []string{csvWith(`,"spec":{` + all + `}`), `{"kind":7,"metadata":{"name":"x"}}`},
			[]string{`manifest "x" does not decode: "kind" must be a string, found a number`}},
		{"every YAML document counts", []string{csvWith(`,"spec":{` + all + `}`), "kind: ConfigMap\nmetadata:\n  name: cm\n---\nkind: Deployment\nmetadata:\n  name: ctrl\n"},
			[]string{`unsupported resource "ctrl" with kind "Deployment"`}},
		{"every JSON value of a stream counts", []string{csvWith(`,"spec":{`+all+`}`) + "\n" + `{"kind":"Deployment","metadata":{"name":"ctrl"}}`},
			[]string{`unsupported resource "ctrl" with kind "Deployment"`}},
		{"JSON that does not parse", []string{csvWith(`,"spec":{` + all + `}`), `{"kind":`}, []string{"a manifest does not decode: unexpected end of JSON input"}},
		{"the last CSV counts", []string{csvWith(`,"spec":{` + all + `}`), csvWith(`,"spec":{"installModes":[]}`)}, noAll},
		{"an unreadable CSV after a good one", []string{csvWith(`,"spec":{` + all + `}`), csvWith(`,"spec":[]`)}, undecodable(`"spec" must be an object, found a list`)},
	} {
		in := Check(bundleWith("op", tc.manifests...), Config{})
		want := NotInstallable
		if len(tc.want) == 0 {
			want = Installable
		}
		if !slices.Equal(in.Reasons, tc.want) || in.Status != want {
			t.Errorf("%s: %s\n  %s\nwant %s\n  %s", tc.name, in.Status, strings.Join(in.Reasons, "\n  "), want, strings.Join(tc.want, "\n  "))
		}
	}
	// A bundle said to carry objects whose manifests cannot be had.
	if in := Check(&Bundle{Name: "b", Package: "p", objects: true}, Config{}); in.Status != NotInstallable || !slices.Equal(in.Reasons, []string{"the bundle's manifests could not be read"}) {
		t.Errorf("no manifest: %+v", in)
	}
}

// TestManifestReadBack: a bundle collected with a way to read its blob
// again reads its manifests only when its installability is first asked
// for, once; one without objects never reads; a blob that changed in the
// meantime is said to.
func TestManifestReadBack(t *testing.T) {
	blob := func(name string, manifests ...string) []byte {
		b := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: name, Package: "op", Properties: []property.Property{pkgProp("op", "1.0.0")}}
		for _, m := range manifests {
			v, _ := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(m))})
			b.Properties = append(b.Properties, property.Property{Type: property.TypeBundleObject, Value: v})
		}
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	own := blob("op.v1.0.0", csv{modes: []string{OwnNamespace}}.manifest())
	plain := blob("op.v0.9.0")
	reads := map[string]int{}
	c := NewCollector()
	for _, b := range []struct {
		name string
		js   []byte
		back []byte // what reading the blob again gives
	}{{"op.v1.0.0", own, own}, {"op.v0.9.0", plain, plain}, {"op.v0.8.0", blob("op.v0.8.0", csv{}.manifest()), own}} {
		c.AddBlobAt(&declcfg.Blob{Meta: declcfg.Meta{Schema: declcfg.SchemaBundle, Package: "op", Name: b.name, JSON: b.js}}, func() ([]byte, error) {
			reads[b.name]++
			return b.back, nil
		})
	}
	cat := c.Catalog("c", 0, nil)
	if len(reads) != 0 {
		t.Fatalf("manifests read while collecting: %v", reads)
	}
	for range 2 {
		in := Check(cat.Bundle("op", "op.v1.0.0"), Config{})
		if in.Status != NotInstallable || in.Checked != "bundle objects" || !slices.Contains(in.Reasons, "unsupported bundle: bundle does not support AllNamespaces install mode") {
			t.Errorf("op.v1.0.0: %+v", in)
		}
		if in := Check(cat.Bundle("op", "op.v0.9.0"), Config{}); in.Status != Unknown || in.Checked != "properties only" {
			t.Errorf("op.v0.9.0: %+v", in)
		}
	}
	if in := Check(cat.Bundle("op", "op.v0.8.0"), Config{}); in.Status != NotInstallable || !slices.Equal(in.Reasons, []string{"the bundle's blob cannot be read again: the catalog changed while it was read"}) {
		t.Errorf("op.v0.8.0, changed: %+v", in)
	}
	if reads["op.v1.0.0"] != 1 || reads["op.v0.9.0"] != 0 || reads["op.v0.8.0"] != 1 {
		t.Errorf("reads %v, want op.v1.0.0 and op.v0.8.0 once", reads)
	}
}

// TestValidatorsInOrder: the validators are registryv1.BundleValidator's
// thirteen, in its order (Test_BundleValidatorCallsAllValidationFnsInOrder).
func TestValidatorsInOrder(t *testing.T) {
	want := []string{"CheckDeploymentSpecUniqueness", "CheckDeploymentNameIsDNS1123SubDomain", "CheckCRDResourceUniqueness",
		"CheckOwnedCRDExistence", "CheckPackageNameNotEmpty", "CheckConversionWebhookSupport", "CheckWebhookDeploymentReferentialIntegrity",
		"CheckWebhookNameUniqueness", "CheckWebhookNameIsDNS1123SubDomain", "CheckConversionWebhookCRDReferenceUniqueness",
		"CheckConversionWebhooksReferenceOwnedCRDs", "CheckWebhookRules", "CheckObjectSupport"}
	var got []string
	for _, v := range validators {
		got = append(got, v.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("validators %v, want %v", got, want)
	}
}

// TestValidators restates, in other names, the cases of every validator
// of operator-controller v1.11.0's
// rukpak/render/registryv1/validators/validator_test.go: each validator
// alone on a bundle, with its words and its order.
func TestValidators(t *testing.T) {
	const (
		vwh = "ValidatingAdmissionWebhook"
		mwh = "MutatingAdmissionWebhook"
		cwh = webhookConversion
	)
	wh := func(typ, name string) Webhook { return Webhook{Type: typ, GenerateName: name} }
	whFor := func(typ, name, deployment string) Webhook {
		return Webhook{Type: typ, GenerateName: name, DeploymentName: deployment}
	}
	convFor := func(name string, crds ...string) Webhook {
		return Webhook{Type: cwh, GenerateName: name, ConversionCRDs: crds}
	}
	ruled := func(typ, name string, groups, resources []string) Webhook {
		return Webhook{Type: typ, GenerateName: name, Rules: []WebhookRule{{APIGroups: groups, Resources: resources}}}
	}
	modes := func(ms ...string) []InstallMode {
		var out []InstallMode
		for _, m := range ms {
			out = append(out, InstallMode{Type: m, Supported: true})
		}
		return out
	}
	crds := func(names ...string) []CRD {
		var out []CRD
		for _, n := range names {
			out = append(out, CRD{Name: n})
		}
		return out
	}
	// Names too long for a DNS-1123 subdomain (253 characters), one
	// ending in a dash as well.
	longBad := "m-" + strings.Repeat("x", 260) + "-"
	longOnly := "n-" + strings.Repeat("x", 260)
	const tooLong = "must be no more than 253 characters"
	type tc struct {
		name     string
		pkg      string
		manifest Manifest
		want     []string
	}
	cases := map[string][]tc{
		"CheckDeploymentSpecUniqueness": {
			{name: "distinct deployment names pass", manifest: Manifest{Deployments: []string{"alpha-ctrl", "beta-ctrl"}}},
			{name: "a name given twice", manifest: Manifest{Deployments: []string{"alpha-ctrl", "beta-ctrl", "alpha-ctrl"}},
				want: []string{"cluster service version contains duplicate strategy deployment spec 'alpha-ctrl'"}},
			{name: "repeated names, reported in name order", manifest: Manifest{Deployments: []string{"d-zeta", "d-alpha", "d-mid", "d-zeta", "d-alpha"}},
				want: []string{"cluster service version contains duplicate strategy deployment spec 'd-alpha'",
					"cluster service version contains duplicate strategy deployment spec 'd-zeta'"}},
		},
		"CheckDeploymentNameIsDNS1123SubDomain": {
			{name: "subdomain names pass", manifest: Manifest{Deployments: []string{"alpha-ctrl", "beta.ctrl"}}},
			{name: "bad and long names, in name order", manifest: Manifest{Deployments: []string{longOnly, "-leading-dash", longBad}},
				want: []string{"invalid cluster service version strategy deployment name '-leading-dash': " + dns1123,
					"invalid cluster service version strategy deployment name '" + longBad + "': " + dns1123 + ", " + tooLong,
					"invalid cluster service version strategy deployment name '" + longOnly + "': " + tooLong}},
		},
		"CheckCRDResourceUniqueness": {
			{name: "distinct CRDs pass", manifest: Manifest{CRDs: crds("gadgets.example.com", "widgets.example.com")}},
			{name: "a CRD twice", manifest: Manifest{CRDs: crds("gadgets.example.com", "gadgets.example.com")},
				want: []string{"bundle contains duplicate custom resource definition 'gadgets.example.com'"}},
			{name: "repeated CRDs, in name order", manifest: Manifest{CRDs: crds("widgets.example.com", "widgets.example.com", "gadgets.example.com", "gadgets.example.com")},
				want: []string{"bundle contains duplicate custom resource definition 'gadgets.example.com'",
					"bundle contains duplicate custom resource definition 'widgets.example.com'"}},
		},
		"CheckOwnedCRDExistence": {
			{name: "owned CRDs the bundle has pass", manifest: Manifest{CRDs: crds("gadgets.example.com", "widgets.example.com"), OwnedCRDs: []string{"gadgets.example.com", "widgets.example.com"}}},
			{name: "an owned CRD missing", manifest: Manifest{OwnedCRDs: []string{"gadgets.example.com"}},
				want: []string{"cluster service definition references owned custom resource definition 'gadgets.example.com' not found in bundle"}},
			{name: "owned CRDs missing, in name order", manifest: Manifest{OwnedCRDs: []string{"a.example.com", "c.example.com", "b.example.com"}},
				want: []string{"cluster service definition references owned custom resource definition 'a.example.com' not found in bundle",
					"cluster service definition references owned custom resource definition 'b.example.com' not found in bundle",
					"cluster service definition references owned custom resource definition 'c.example.com' not found in bundle"}},
		},
		"CheckPackageNameNotEmpty": {
			{name: "a package name passes", pkg: "widgets"},
			{name: "no package name", want: []string{"package name is empty"}},
		},
		"CheckConversionWebhookSupport": {
			{name: "a conversion webhook with AllNamespaces alone passes", manifest: Manifest{InstallMode: modes(AllNamespaces), Webhooks: []Webhook{wh(cwh, "")}}},
			{name: "a validating webhook with more modes passes", manifest: Manifest{InstallMode: modes(AllNamespaces, SingleNamespace), Webhooks: []Webhook{wh(vwh, "")}}},
			{name: "a mutating webhook with more modes passes", manifest: Manifest{InstallMode: modes(AllNamespaces, SingleNamespace), Webhooks: []Webhook{wh(mwh, "")}}},
			{name: "conversion webhooks with more modes, in the CSV's order", manifest: Manifest{InstallMode: modes(SingleNamespace, AllNamespaces), Webhooks: []Webhook{wh(cwh, "conv-y"), wh(cwh, "conv-x")}},
				want: []string{`bundle contains conversion webhook "conv-y" and supports install modes [AllNamespaces SingleNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode`,
					`bundle contains conversion webhook "conv-x" and supports install modes [AllNamespaces SingleNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode`}},
		},
		"CheckWebhookRules": {
			{name: "webhooks without rules pass", manifest: Manifest{Webhooks: []Webhook{wh(vwh, ""), wh(mwh, "")}}},
			{name: "rules on other groups pass", manifest: Manifest{Webhooks: []Webhook{
				ruled(vwh, "", []string{"apps"}, []string{"deployments", "daemonsets"}), ruled(mwh, "", []string{""}, []string{"configmaps"})}}},
			{name: "every API group", manifest: Manifest{Webhooks: []Webhook{ruled(vwh, "guard-2", []string{"*"}, nil), ruled(mwh, "guard-1", []string{"*"}, nil)}},
				want: []string{`webhook "guard-2" contains forbidden rule: admission webhook rules cannot reference API group "*"`,
					`webhook "guard-1" contains forbidden rule: admission webhook rules cannot reference API group "*"`}},
			{name: "OLM v1's API group", manifest: Manifest{Webhooks: []Webhook{ruled(vwh, "guard-2", []string{"olm.operatorframework.io"}, nil), ruled(mwh, "guard-1", []string{"olm.operatorframework.io"}, nil)}},
				want: []string{`webhook "guard-2" contains forbidden rule: admission webhook rules cannot reference API group "olm.operatorframework.io"`,
					`webhook "guard-1" contains forbidden rule: admission webhook rules cannot reference API group "olm.operatorframework.io"`}},
			{name: "a conversion webhook's rules are not read", manifest: Manifest{Webhooks: []Webhook{ruled(cwh, "conv", []string{"*"}, nil)}}},
		},
		"CheckWebhookDeploymentReferentialIntegrity": {
			{name: "a webhook of an existing deployment passes", manifest: Manifest{Deployments: []string{"ctrl-one", "ctrl-two"}, Webhooks: []Webhook{whFor(mwh, "hook", "ctrl-one")}}},
			{name: "a webhook of a missing deployment", manifest: Manifest{Deployments: []string{"ctrl-one"}, Webhooks: []Webhook{whFor(vwh, "hook", "ctrl-two")}},
				want: []string{"webhook of type 'ValidatingAdmissionWebhook' with name 'hook' references non-existent deployment 'ctrl-two'"}},
			{name: "in the order of deployment, type and name", manifest: Manifest{Deployments: []string{"ctrl-one"}, Webhooks: []Webhook{
				whFor(vwh, "v-3", "gone-c"), whFor(mwh, "m-1", "gone-a"), whFor(cwh, "c-2", "gone-b"), whFor(mwh, "m-3", "gone-c"), whFor(cwh, "c-3-y", "gone-c"), whFor(cwh, "c-3-x", "gone-c")}},
				want: []string{"webhook of type 'MutatingAdmissionWebhook' with name 'm-1' references non-existent deployment 'gone-a'",
					"webhook of type 'ConversionWebhook' with name 'c-2' references non-existent deployment 'gone-b'",
					"webhook of type 'ConversionWebhook' with name 'c-3-x' references non-existent deployment 'gone-c'",
					"webhook of type 'ConversionWebhook' with name 'c-3-y' references non-existent deployment 'gone-c'",
					"webhook of type 'MutatingAdmissionWebhook' with name 'm-3' references non-existent deployment 'gone-c'",
					"webhook of type 'ValidatingAdmissionWebhook' with name 'v-3' references non-existent deployment 'gone-c'"}},
		},
		"CheckWebhookNameUniqueness": {
			{name: "no webhooks pass"},
			{name: "distinct names pass", manifest: Manifest{Webhooks: []Webhook{wh(mwh, "h1"), wh(vwh, "h2"), wh(cwh, "h3"), wh(mwh, "h4"), wh(vwh, "h5"), wh(cwh, "h6")}}},
			{name: "one name for three types passes", manifest: Manifest{Webhooks: []Webhook{wh(mwh, "hook"), wh(vwh, "hook"), wh(cwh, "hook")}}},
			{name: "two validating webhooks of one name", manifest: Manifest{Webhooks: []Webhook{wh(vwh, "hook"), wh(vwh, "hook")}},
				want: []string{"duplicate webhook 'hook' of type 'ValidatingAdmissionWebhook'"}},
			{name: "two mutating webhooks of one name", manifest: Manifest{Webhooks: []Webhook{wh(mwh, "hook"), wh(mwh, "hook")}},
				want: []string{"duplicate webhook 'hook' of type 'MutatingAdmissionWebhook'"}},
			{name: "two conversion webhooks of one name", manifest: Manifest{Webhooks: []Webhook{wh(cwh, "hook"), wh(cwh, "hook")}},
				want: []string{"duplicate webhook 'hook' of type 'ConversionWebhook'"}},
			{name: "in the order of type and name", manifest: Manifest{Webhooks: []Webhook{
				wh(vwh, "v-b"), wh(vwh, "v-a"), wh(vwh, "v-a"), wh(vwh, "v-b"), wh(cwh, "c-b"), wh(cwh, "c-a"),
				wh(cwh, "c-a"), wh(cwh, "c-b"), wh(mwh, "m-b"), wh(mwh, "m-a"), wh(mwh, "m-a"), wh(mwh, "m-b")}},
				want: []string{"duplicate webhook 'c-a' of type 'ConversionWebhook'", "duplicate webhook 'c-b' of type 'ConversionWebhook'",
					"duplicate webhook 'm-a' of type 'MutatingAdmissionWebhook'", "duplicate webhook 'm-b' of type 'MutatingAdmissionWebhook'",
					"duplicate webhook 'v-a' of type 'ValidatingAdmissionWebhook'", "duplicate webhook 'v-b' of type 'ValidatingAdmissionWebhook'"}},
		},
		"CheckConversionWebhooksReferenceOwnedCRDs": {
			{name: "no webhooks pass"},
			{name: "admission webhooks pass", manifest: Manifest{Webhooks: []Webhook{wh(vwh, "v"), wh(mwh, "m")}}},
			{name: "owned CRDs pass", manifest: Manifest{OwnedCRDs: []string{"gadgets.example.com", "widgets.example.com"}, Webhooks: []Webhook{convFor("conv", "gadgets.example.com", "widgets.example.com")}}},
			{name: "a CRD not owned", manifest: Manifest{OwnedCRDs: []string{"gadgets.example.com"}, Webhooks: []Webhook{convFor("conv", "gadgets.example.com", "widgets.example.com")}},
				want: []string{"conversion webhook 'conv' references custom resource definition 'widgets.example.com' not owned bundle"}},
			{name: "in the order of webhook and CRD", manifest: Manifest{OwnedCRDs: []string{"b.example.com"},
				Webhooks: []Webhook{convFor("conv-b", "b.example.com"), convFor("conv-a", "c.example.com", "a.example.com"), convFor("conv-c", "a.example.com", "d.example.com")}},
				want: []string{"conversion webhook 'conv-a' references custom resource definition 'a.example.com' not owned bundle",
					"conversion webhook 'conv-a' references custom resource definition 'c.example.com' not owned bundle",
					"conversion webhook 'conv-c' references custom resource definition 'a.example.com' not owned bundle",
					"conversion webhook 'conv-c' references custom resource definition 'd.example.com' not owned bundle"}},
		},
		"CheckConversionWebhookCRDReferenceUniqueness": {
			{name: "no webhooks pass"},
			{name: "admission webhooks pass", manifest: Manifest{Webhooks: []Webhook{wh(vwh, "v"), wh(mwh, "m")}}},
			{name: "one CRD each passes", manifest: Manifest{OwnedCRDs: []string{"gadgets.example.com", "widgets.example.com"},
				Webhooks: []Webhook{convFor("conv-1", "gadgets.example.com"), convFor("conv-2", "widgets.example.com")}}},
			{name: "two webhooks for one CRD", manifest: Manifest{OwnedCRDs: []string{"gadgets.example.com"},
				Webhooks: []Webhook{convFor("conv-1", "gadgets.example.com"), convFor("conv-2", "gadgets.example.com")}},
				want: []string{"conversion webhooks [conv-1,conv-2] reference same custom resource definition 'gadgets.example.com'"}},
			{name: "in the order of CRD, the webhooks sorted", manifest: Manifest{OwnedCRDs: []string{"b.example.com"}, Webhooks: []Webhook{
				convFor("conv-b", "b.example.com", "a.example.com"), convFor("conv-a", "d.example.com", "a.example.com", "b.example.com"), convFor("conv-c", "b.example.com", "d.example.com")}},
				want: []string{"conversion webhooks [conv-a,conv-b] reference same custom resource definition 'a.example.com'",
					"conversion webhooks [conv-a,conv-b,conv-c] reference same custom resource definition 'b.example.com'",
					"conversion webhooks [conv-a,conv-c] reference same custom resource definition 'd.example.com'"}},
		},
		"CheckWebhookNameIsDNS1123SubDomain": {
			{name: "no webhooks pass"},
			{name: "in the order of type and name, errors joined without a space", manifest: Manifest{Webhooks: []Webhook{
				wh(vwh, longBad), wh(vwh, longOnly), wh(vwh, "-leading-dash"), wh(cwh, "y-trailing-"), wh(mwh, longBad), wh(mwh, "x-trailing-"), wh(cwh, "x-trailing-")}},
				want: []string{"webhook of type 'ConversionWebhook' has invalid name 'x-trailing-': " + dns1123,
					"webhook of type 'ConversionWebhook' has invalid name 'y-trailing-': " + dns1123,
					"webhook of type 'MutatingAdmissionWebhook' has invalid name '" + longBad + "': " + dns1123 + "," + tooLong,
					"webhook of type 'MutatingAdmissionWebhook' has invalid name 'x-trailing-': " + dns1123,
					"webhook of type 'ValidatingAdmissionWebhook' has invalid name '-leading-dash': " + dns1123,
					"webhook of type 'ValidatingAdmissionWebhook' has invalid name '" + longBad + "': " + dns1123 + "," + tooLong,
					"webhook of type 'ValidatingAdmissionWebhook' has invalid name '" + longOnly + "': " + tooLong}},
		},
		"CheckObjectSupport": {
			{name: "no other objects pass"},
			{name: "every kind registry+v1 allows passes", manifest: Manifest{Others: []Object{
				{"Secret", "s"}, {"ConfigMap", "cm"}, {"ServiceAccount", "sa"}, {"Service", "svc"}, {"ClusterRole", "cr"}, {"ClusterRoleBinding", "crb"},
				{"Role", "r"}, {"RoleBinding", "rb"}, {"PrometheusRule", "pr"}, {"ServiceMonitor", "sm"}, {"PodMonitor", "pm"},
				{"PodDisruptionBudget", "pdb"}, {"PriorityClass", "pc"}, {"VerticalPodAutoscaler", "vpa"}, {"NetworkPolicy", "np"},
				{"ConsoleYAMLSample", "cys"}, {"ConsoleQuickStart", "cqs"}, {"ConsoleCLIDownload", "ccd"}, {"ConsoleLink", "cl"}, {"ConsolePlugin", "cp"}}}},
			{name: "a Deployment", manifest: Manifest{Others: []Object{{"Deployment", "ctrl"}}},
				want: []string{`unsupported resource "ctrl" with kind "Deployment"`}},
			{name: "each unsupported object, in the bundle's order", manifest: Manifest{Others: []Object{{"StatefulSet", "db"}, {"Deployment", "ctrl"}}},
				want: []string{`unsupported resource "db" with kind "StatefulSet"`, `unsupported resource "ctrl" with kind "Deployment"`}},
			{name: "supported and unsupported together", manifest: Manifest{Others: []Object{{"Secret", "s"}, {"CronJob", "nightly"}, {"ConfigMap", "cm"}}},
				want: []string{`unsupported resource "nightly" with kind "CronJob"`}},
			{name: "kinds are matched exactly", manifest: Manifest{Others: []Object{{"configmap", "cm"}}},
				want: []string{`unsupported resource "cm" with kind "configmap"`}},
		},
	}
	// Each resource of admissionregistration.k8s.io that names webhook
	// configurations, in any case, or all of them.
	for _, res := range []string{"*", "MutatingWebhookConfiguration", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations",
		"ValidatingWebhookConfiguration", "validatingwebhookconfiguration", "validatingwebhookconfigurations"} {
		cases["CheckWebhookRules"] = append(cases["CheckWebhookRules"], tc{name: "admissionregistration.k8s.io " + res,
			manifest: Manifest{Webhooks: []Webhook{ruled(vwh, "guard", []string{"admissionregistration.k8s.io"}, []string{"pods", res})}},
			want:     []string{fmt.Sprintf(`webhook "guard" contains forbidden rule: admission webhook rules cannot reference resource %q for API group "admissionregistration.k8s.io"`, res)}})
	}
	for _, v := range validators {
		if len(cases[v.name]) == 0 {
			t.Errorf("%s: no cases", v.name)
		}
		for _, c := range cases[v.name] {
			if got := v.check(c.pkg, &c.manifest); !slices.Equal(got, c.want) {
				t.Errorf("%s: %s:\n  %s\nwant:\n  %s", v.name, c.name, strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		}
	}
}

func modeSet(ms ...string) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		out[m] = true
	}
	return out
}

// TestTargetNamespaces restates render_test.go's cases of the render
// options' target namespaces (Test_BundleRenderer_ValidatesRenderOptions)
// and of the default ones (Test_BundleRenderer_DefaultTargetNamespaces:
// every namespace when AllNamespaces is supported, none otherwise).
func TestTargetNamespaces(t *testing.T) {
	const inst = "ops"
	for _, tc := range []struct {
		name    string
		modes   []string
		targets []string
		want    string
	}{
		{"every namespace without AllNamespaces", []string{SingleNamespace}, []string{""},
			"invalid option(s): invalid target namespaces []: supported install modes [SingleNamespace] do not support targeting all namespaces"},
		{"the install namespace with AllNamespaces only", []string{AllNamespaces}, []string{inst},
			"invalid option(s): invalid target namespaces [ops]: supported install modes [AllNamespaces] do not support targeting own namespace"},
		{"another namespace with OwnNamespace only", []string{OwnNamespace}, []string{"elsewhere"},
			"invalid option(s): invalid target namespaces [elsewhere]: supported install modes [OwnNamespace] do not support target namespaces [elsewhere]"},
		{"several namespaces without MultiNamespace", []string{AllNamespaces}, []string{"t1", "t2", "t3"},
			"invalid option(s): invalid target namespaces [t1 t2 t3]: supported install modes [AllNamespaces] do not support target namespaces [t1 t2 t3]"},
		{"a namespace with no install mode", nil, []string{"elsewhere"},
			"invalid option(s): invalid target namespaces [elsewhere]: supported install modes [] do not support target namespaces [elsewhere]"},
		{"every namespace with AllNamespaces", []string{AllNamespaces}, []string{""}, ""},
		{"another namespace with SingleNamespace", []string{SingleNamespace}, []string{"elsewhere"}, ""},
		{"the install namespace with OwnNamespace", []string{OwnNamespace}, []string{inst}, ""},
		{"several namespaces with MultiNamespace", []string{MultiNamespace}, []string{"t1", "t2", "t3"}, ""},
		{"several namespaces and the install namespace without OwnNamespace", []string{MultiNamespace}, []string{"t1", "t2", "t3", inst},
			"invalid option(s): invalid target namespaces [t1 t2 t3 ops]: supported install modes [MultiNamespace] do not support targeting own namespace"},
		{"none with MultiNamespace", []string{MultiNamespace}, nil, "invalid option(s): invalid target namespaces []: at least one target namespace must be specified"},
		{"none with SingleNamespace", []string{SingleNamespace}, nil, "invalid option(s): invalid target namespaces []: exactly one target namespace must be specified"},
	} {
		if got := targetNamespacesError(modeSet(tc.modes...), inst, tc.targets); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The defaults, without a watchNamespace.
	for _, ms := range [][]string{
		{AllNamespaces}, {AllNamespaces, OwnNamespace}, {AllNamespaces, SingleNamespace}, {AllNamespaces, MultiNamespace},
		{AllNamespaces, OwnNamespace, SingleNamespace}, {AllNamespaces, OwnNamespace, MultiNamespace}, {AllNamespaces, SingleNamespace, MultiNamespace},
		{AllNamespaces, SingleNamespace, OwnNamespace, MultiNamespace},
		{SingleNamespace}, {OwnNamespace}, {MultiNamespace}, {SingleNamespace, OwnNamespace}, {SingleNamespace, MultiNamespace},
		{OwnNamespace, MultiNamespace}, {SingleNamespace, OwnNamespace, MultiNamespace},
	} {
		var want []string
		if ms[0] == AllNamespaces {
			want = []string{""}
		}
		if got, err := configTargets(modeSet(ms...), Config{InstallNamespace: inst}); !slices.Equal(got, want) || err != "" {
			t.Errorf("default for %v: %q (%s), want %q", ms, got, err, want)
		}
	}
}

// TestWatchNamespaceConfig restates config_test.go's cases of the
// watchNamespace a registry+v1 bundle's configuration schema takes
// (Test_UnmarshalConfig, Test_ErrorFormatting_SchemaLibraryVersion), with
// the SingleOwnNamespaceInstallSupport gate: a ClusterExtension without
// configuration, or with watchNamespace null, is one without a
// watchNamespace here.
func TestWatchNamespaceConfig(t *testing.T) {
	const required = `required field "watchNamespace" is missing`
	const unknown = `unknown field "watchNamespace"`
	ownWords := func(ns, inst string) string {
		return fmt.Sprintf(`invalid format for field "watchNamespace": '%[1]s' is not valid ownNamespaceInstallMode: invalid value %[1]q: must be %[2]q (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`, ns, inst)
	}
	singleWords := func(ns string) string {
		return fmt.Sprintf(`invalid format for field "watchNamespace": '%[1]s' is not valid singleNamespaceInstallMode: invalid value %[1]q: must be different from %[1]q (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace`, ns)
	}
	anyOf := func(errs ...string) string {
		return "multiple errors found:\n  - " + strings.Join(append([]string{`invalid value for field "watchNamespace"`, `invalid type for field "watchNamespace": got string, want null`}, errs...), "\n  - ")
	}
	const pattern = `field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`
	longName := "---BBBB-CCCC-a-namespace-name-that-runs-on-far-past-the-sixty-three-characters-a-label-may-have"
	for _, tc := range []struct {
		modes       []string
		watch, inst string
		targets     []string
		want        string
	}{
		{[]string{AllNamespaces}, "", "", []string{""}, ""},
		{[]string{OwnNamespace}, "", "", nil, required},
		{[]string{SingleNamespace}, "", "", nil, required},
		{[]string{SingleNamespace}, "team-b", "ops", []string{"team-b"}, ""},
		{[]string{AllNamespaces}, "team-b", "ops", nil, unknown},
		{[]string{MultiNamespace}, "team-b", "ops", nil, unknown},
		{[]string{AllNamespaces, MultiNamespace}, "team-b", "ops", nil, unknown},
		{[]string{MultiNamespace, OwnNamespace}, "", "ops", nil, required},
		{[]string{AllNamespaces, SingleNamespace}, "team-b", "ops", []string{"team-b"}, ""},
		{[]string{MultiNamespace, SingleNamespace}, "team-b", "ops", []string{"team-b"}, ""},
		{[]string{OwnNamespace, SingleNamespace}, "team-b", "elsewhere", []string{"team-b"}, ""},
		{[]string{SingleNamespace}, "team-b", "team-b", nil, singleWords("team-b")},
		{[]string{AllNamespaces, SingleNamespace}, "team-b", "team-b", nil, anyOf(singleWords("team-b"))},
		{[]string{MultiNamespace, SingleNamespace}, "team-b", "team-b", nil, singleWords("team-b")},
		{[]string{AllNamespaces, OwnNamespace}, "team-b", "team-b", []string{"team-b"}, ""},
		{[]string{OwnNamespace, SingleNamespace}, "team-b", "team-b", []string{"team-b"}, ""},
		{[]string{AllNamespaces, OwnNamespace}, "team-b", "ops", nil, anyOf(ownWords("team-b", "ops"))},
		{[]string{SingleNamespace, OwnNamespace}, "", "ops", nil, required},
		{[]string{SingleNamespace, MultiNamespace}, "", "ops", nil, required},
		{[]string{SingleNamespace, OwnNamespace, MultiNamespace}, "", "ops", nil, required},
		{[]string{AllNamespaces, OwnNamespace}, "", "ops", []string{""}, ""},
		{[]string{AllNamespaces, OwnNamespace, MultiNamespace}, "", "ops", []string{""}, ""},
		// Without an install namespace the format is not checked.
		{[]string{OwnNamespace}, "team-b", "", []string{"team-b"}, ""},
		// The error formatting cases.
		{[]string{OwnNamespace}, "team-x", "team-y", nil, ownWords("team-x", "team-y")},
		{[]string{SingleNamespace}, "ops", "ops", nil, singleWords("ops")},
		{[]string{SingleNamespace}, longName, "ops", nil, "multiple errors found:\n  - " + fmt.Sprintf(`field "watchNamespace" must have maximum length of 63 (len=%d)`, len(longName)) + "\n  - " + pattern},
		{[]string{SingleNamespace, OwnNamespace}, strings.Repeat("B", 63) + `"`, "ops", nil,
			"multiple errors found:\n  - " + `field "watchNamespace" must have maximum length of 63 (len=64)` + "\n  - " + pattern},
		{[]string{SingleNamespace, OwnNamespace}, "Team-B", "ops", nil, pattern},
		// The schema's length is in characters, and its messages quote as
		// the validator does.
		{[]string{SingleNamespace}, strings.Repeat("é", 40), "ops", nil, pattern},
		{[]string{SingleNamespace}, strings.Repeat("é", 64), "ops", nil, "multiple errors found:\n  - " + `field "watchNamespace" must have maximum length of 63 (len=64)` + "\n  - " + pattern},
		{[]string{OwnNamespace}, `it's "b"` + "\n", "ops", nil, `invalid format for field "watchNamespace": 'it\'s "b"\n' is not valid ownNamespaceInstallMode: invalid value "it's \"b\"\n": must be "ops" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`},
	} {
		targets, err := configTargets(modeSet(tc.modes...), Config{SingleOwnNamespace: true, WatchNamespace: tc.watch, InstallNamespace: tc.inst})
		if err != tc.want || !slices.Equal(targets, tc.targets) {
			t.Errorf("%v, watchNamespace %q, install namespace %q: %q %q, want %q %q", tc.modes, tc.watch, tc.inst, targets, err, tc.targets, tc.want)
		}
	}
}
