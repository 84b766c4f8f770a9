package install

import (
	"context"
	"encoding/json"
	"testing"
)

// TestCELAsOLM evaluates CEL rules over five property sets and compares
// with what OLM's own CEL environment answers: operator-framework/api's
// constraints package (NewCelEnvironment, Validate, Evaluate) as OLM
// v0.46.0 vendors it, on github.com/google/cel-go v0.29.2, through the
// evaluation of its celPredicate. The first cases are the api's own
// (cel_test.go, TestCelLibrary); the expected answers were recorded from
// OLM's code by a harness built from its sources (docs/install.md).
func TestCELAsOLM(t *testing.T) {
	props := [][]Property{
		{{"olm.test", json.RawMessage("\"1.0.0\"")}},
		{{"olm.package", json.RawMessage("{\"packageName\":\"etcd\",\"version\":\"0.9.2\"}")}, {"olm.gvk", json.RawMessage("{\"group\":\"g\",\"version\":\"v\",\"kind\":\"k\"}")}, {"certified", json.RawMessage("true")}, {"olm.maxOpenShiftVersion", json.RawMessage("\"4.15\"")}, {"count", json.RawMessage("3")}},
		{{"olm.package", json.RawMessage("{\"packageName\":\"etcd\",\"version\":\"v1.2\"}")}, {"olm.gvk", json.RawMessage("{\"group\":\"g2\",\"version\":\"v\",\"kind\":\"k\"}")}, {"olm.label", json.RawMessage("{\"label\":\"lts\"}")}},
		{},
		{{"olm.package", json.RawMessage("{\"packageName\":\"x\",\"version\":\"not-a-version\"}")}},
	}
	for _, tc := range []struct {
		rule string
		// want is "compile error", or T or F for each property set.
		want string
	}{
		{"properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') == 0))", "TFFFF"},
		{"properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.1') == 0))", "FFFFF"},
		{"properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') < 0))", "FFFFF"},
		{"properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') > 0))", "FFFFF"},
		{"properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))", "compile error"},
		{"1", "compile error"},
		{"properties", "compile error"},
		{"properties[0].value", "compile error"},
		{"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'version': 'v', 'kind': 'k'})", "FTFFF"},
		{"properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'etcd' && semver_compare(p.value.version, '0.9.2') == 0)", "FTFFF"},
		{"properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.version, '1.0.0') >= 0)", "FFTFF"},
		{"properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.version, 'v1.2') == 0)", "FFTFF"},
		{"properties.exists(p, p.type == \"certified\")", "FTFFF"},
		{"properties.exists(p, p.type == \"certified\") && properties.exists(p, p.type == \"stable\")", "FFFFF"},
		{"properties.exists(p, p.type == 'count' && p.value == 3)", "FTFFF"},
		{"properties.exists(p, p.type == 'count' && p.value > 2.5)", "FTFFF"},
		{"properties.exists(p, p.type == 'olm.maxOpenShiftVersion' && semver_compare(p.value, '4.14') > 0)", "FTFFF"},
		{"properties.size() > 2", "FTTFF"},
		{"properties.all(p, p.type.startsWith('olm.'))", "TFTTT"},
		{"properties.exists(p, has(p.value.label) && p.value.label == 'lts')", "FFTFF"},
		{"properties.exists(p, p.value.label == 'lts')", "FFTFF"},
		{"properties.filter(p, p.type == 'olm.gvk').map(p, p.value.group).exists(g, g == 'g2')", "FFTFF"},
		{"properties.exists(p, p.type == 'olm.package' && p.value.version.matches('^v'))", "FFTFF"},
		{"true", "TTTTT"},
		{"false || properties.exists(p, semver_compare(p.value, 'x') == 0)", "FFFFF"},
		{"properties.exists(p, p.type == 'olm.package' && semver_compare(p.value, '1.0.0') == 0)", "FFFFF"},
		{"semver_compare('1.0', 'v1.0.0') == 0", "TTTTT"},
		{"properties.exists(p, p.type ==", "compile error"},
		{"properties.exists(p, p.type == 'olm.gvk' && p.value.kind in ['k', 'K'])", "FTTFF"},
		{"size(properties) == 0", "FFFTF"},
	} {
		prog, err := compileCEL(tc.rule, CELCostLimit)
		if tc.want == "compile error" {
			if err == nil {
				t.Errorf("%s: compiles; OLM refuses it", tc.rule)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v; OLM compiles it", tc.rule, err)
			continue
		}
		got := ""
		for _, ps := range props {
			ok, err := evalCEL(context.Background(), prog, celProperties(ps))
			if err != nil {
				t.Fatalf("%s: %v", tc.rule, err)
			}
			if ok {
				got += "T"
			} else {
				got += "F"
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s, OLM: %s", tc.rule, got, tc.want)
		}
	}
}
