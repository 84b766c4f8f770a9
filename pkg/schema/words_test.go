package schema

import (
	"strings"
	"testing"
)

// Explain says, at the field, what is wrong and what is expected.
func TestExplain(t *testing.T) {
	c := sharedChecker(t)
	for _, tc := range []struct {
		schema, blob string
		want         []string // "path | words"
	}{
		{"olm.package", `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","icon":{"base64data":null,"type":"image/png"}}`,
			// Every problem of the icon, not only CUE's first; the missing
			// mediatype is said by the suggestion of the misspelt field.
			[]string{"icon.base64data | icon.base64data is null; expected a base64 string (or leave the icon out)",
				"icon.type | icon.type is not a field of an icon; its fields are base64data and mediatype (did you mean mediatype?)"}},
		{"olm.package", `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","icon":{"base64data":"","type":"image/png"}}`,
			[]string{"icon.type | icon.type is not a field of an icon; its fields are base64data and mediatype (did you mean mediatype?)"}},
		// A constraint with nothing to meet, beside an unknown field and a
		// related image without its image, all in one run.
		{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"x","extra":true,"properties":[{"type":"olm.constraint","value":{"failureMessage":"x"}}],"relatedImages":[{"name":"x"}]}`,
			[]string{"extra | extra is not a field of an olm.bundle blob; its fields are image, name, package, properties, relatedImages and schema",
				"properties[0].value | properties[0].value is incomplete; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage)",
				"relatedImages[0].image | relatedImages[0].image is missing; expected an image pull spec"}},
		{"olm.package", `{"schema":"olm.package","name":"etcd","defaultchannel":"stable"}`,
			[]string{"defaultchannel | defaultchannel is not a field of an olm.package blob; its fields are defaultChannel, description, icon, name, package, properties and schema (did you mean defaultChannel?)"}},
		{"olm.package", `{"schema":"olm.package"}`,
			[]string{"defaultChannel | defaultChannel is missing; expected the name of one of the package's channels", "name | name is missing; expected the package's name"}},
		{"olm.channel", `{"schema":"olm.channel","package":"etcd","name":"stable","entries":[{"name":"b","replaces":""},{"name":"e","replace":"d"},{"name":"f","skipRange":7}]}`,
			[]string{
				"entries[0].replaces | entries[0].replaces is empty; expected the name of the bundle this one replaces (or leave replaces out)",
				"entries[1].replace | entries[1].replace is not a field of a channel entry; its fields are name, replaces, skipRange and skips (did you mean replaces?)",
				"entries[2].skipRange | entries[2].skipRange is a number (7); expected a semver range such as <1.2.0 (or leave skipRange out)",
			}},
		{"olm.bundle", `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[
			{"type":"olm.package","value":{"packageName":"etcd","version":1.5}},
			{"type":"olm.gvk","value":"g/v1/K"},
			{"type":"olm.bundle.object","value":{"data":"eA==","ref":"x"}},
			{"type":"x","value":null},
			{"type":"olm.csv.metadata","value":{"installModes":[{"type":"EveryNamespace","supported":true}],"annotations":{"n":3}}}],
			"relatedImages":[{"image":"a","revision":"r"},{"image":""}]}`,
			[]string{
				"properties[0].value.version | properties[0].value.version is a number (1.5); expected the bundle's semver version, such as 1.2.3",
				"properties[1].value | properties[1].value is a string (\"g/v1/K\"); expected an object",
				"properties[2].value | properties[2].value is not an olm.bundle.object value; expected an object with exactly one of data (a base64-encoded manifest) and ref",
				"properties[3].value | properties[3].value is null; expected a value other than null",
				"properties[4].value.annotations.n | properties[4].value.annotations.n is a number (3); expected a string",
				"properties[4].value.installModes[0].type | properties[4].value.installModes[0].type is a string (\"EveryNamespace\"); expected one of \"AllNamespaces\", \"MultiNamespace\", \"OwnNamespace\" or \"SingleNamespace\"",
				// A related image may hold fields OLM does not read
				// (revision); an empty image is reported.
				"relatedImages[1].image | relatedImages[1].image is empty; expected an image pull spec",
			}},
		{"olm.deprecations", `{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.package","name":"etcd"},"message":"m"},{"reference":{"schema":"olm.image","name":"b"},"message":"m"}]}`,
			[]string{
				"entries[0].reference.name | entries[0].reference.name is a string (\"etcd\"); expected none: leave it out",
				"entries[1].reference.schema | entries[1].reference.schema is a string (\"olm.image\"); expected one of \"olm.bundle\", \"olm.channel\" or \"olm.package\"",
			}},
		{"x", `{"schema":"x","properties":{"type":"a"}}`, []string{"properties | properties is an object; expected a list"}},
	} {
		blob, _, err := canonical([]byte(tc.blob))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range c.Explain(tc.schema, blob, c.Check(tc.schema, blob)) {
			if formatSteps(f.Steps) != f.Path {
				t.Errorf("steps %v do not spell %q", f.Steps, f.Path)
			}
			got = append(got, f.Path+" | "+f.Words)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.blob, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// TestExplainListNotAllowed: a list that is not a field is reported with
// its elements (entries and entries[0] of a channel checked as a bundle);
// an element is no field to suggest a name for, and the list's fields
// are indexes. Explain panicked on both.
func TestExplainListNotAllowed(t *testing.T) {
	c := sharedChecker(t)
	blob := []byte(`{"entries":[{"name":"a"}],"name":"stable","package":"p","schema":"olm.channel"}`)
	vs := c.Check("olm.bundle", blob)
	var got []string
	for _, f := range c.Explain("olm.bundle", blob, vs) {
		got = append(got, f.Words)
	}
	want := []string{
		"entries is not a field of an olm.bundle blob; its fields are image, name, package, properties, relatedImages and schema",
		"entries[0]: field not allowed",
		"image is missing; expected the bundle image's pull spec",
		`schema is a string ("olm.channel"); expected "olm.bundle"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParsePath(t *testing.T) {
	for _, p := range []string{"", "a", "a.b", "a[0]", "a[0].b[12].c", `a."x-descriptors"[1]`, `"a b".c`} {
		steps, ok := parsePath(p)
		if !ok || formatSteps(steps) != p {
			t.Errorf("%q: %v %v -> %q", p, steps, ok, formatSteps(steps))
		}
	}
	if steps, _ := parsePath(`a."x-descriptors"`); len(steps) != 2 || steps[1].Key != "x-descriptors" {
		t.Errorf("quoted label: %v", steps)
	}
}
