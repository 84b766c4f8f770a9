package updates_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
)

// catalog builds a valid model from a compact description: one line per
// channel entry, "channel name@version [r=replaces] [s=skip,skip]
// [range=...]" (range words joined by '_'), plus "default channel",
// "deprecate bundle" (an olm.deprecations entry) and "olm-deprecated
// bundle" (the bundle's olm.deprecated property) lines.
func catalog(t *testing.T, spec string) model.Model {
	t.Helper()
	var b strings.Builder
	def := ""
	channels := map[string][]string{}
	var order []string
	bundles := map[string]string{}
	var deprecated []string
	olmDeprecated := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case "default":
			def = f[1]
			continue
		case "deprecate":
			deprecated = append(deprecated, f[1])
			continue
		case "olm-deprecated":
			olmDeprecated[f[1]] = true
			continue
		}
		name, version, _ := strings.Cut(f[1], "@")
		e := fmt.Sprintf("  - name: %s\n", name)
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "r":
				e += fmt.Sprintf("    replaces: %s\n", v)
			case "s":
				e += fmt.Sprintf("    skips: [%s]\n", v)
			case "range":
				e += fmt.Sprintf("    skipRange: %q\n", strings.ReplaceAll(v, "_", " "))
			}
		}
		if _, ok := channels[f[0]]; !ok {
			order = append(order, f[0])
		}
		channels[f[0]] = append(channels[f[0]], e)
		bundles[name] = version
	}
	if def == "" {
		def = order[0]
	}
	fmt.Fprintf(&b, "---\nschema: olm.package\nname: p\ndefaultChannel: %s\n", def)
	for _, ch := range order {
		fmt.Fprintf(&b, "---\nschema: olm.channel\npackage: p\nname: %s\nentries:\n%s", ch, strings.Join(channels[ch], ""))
	}
	for name, v := range bundles {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: p\nname: %s\nimage: example.com/p:%s\nproperties:\n- type: olm.package\n  value: {packageName: p, version: %s}\n", name, v, v)
		if olmDeprecated[name] {
			b.WriteString("- type: olm.deprecated\n  value: {}\n")
		}
	}
	if len(deprecated) > 0 {
		b.WriteString("---\nschema: olm.deprecations\npackage: p\nentries:\n")
		for _, d := range deprecated {
			fmt.Fprintf(&b, "- reference: {schema: olm.bundle, name: %s}\n  message: do not use %s\n", d, d)
		}
	}
	res, err := action.Validate{FS: fstest.MapFS{"c.yaml": {Data: []byte(b.String())}}, SkipSchema: true}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("invalid test catalog: %v\n%s", err, b.String())
	}
	return res.Model
}

func violations(vs []updates.Violation) string {
	var out []string
	for _, v := range vs {
		s := v.Rule + ":" + v.Channel + "/" + v.Bundle
		if v.Warning {
			s += "(warning)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestCheck(t *testing.T) {
	base := `
stable a@1.0.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b`
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"new head replaces", base, base + "\nstable d@1.3.0 r=c", ""},
		{"new head's skipRange covers all", base, base + "\nstable d@1.3.0 r=c range=>=1.0.0_<1.3.0", ""},
		{"head removed without replacement", base, `
stable a@1.0.0
stable b@1.1.0 r=a`, "head-downgrade:stable/b stranded:stable/c"},
		{"bundle dropped from the middle", base, `
stable a@1.0.0
stable c@1.2.0 r=a`, "stranded:stable/b"},
		{"bundle dropped, skipRange covers it", base, `
stable a@1.0.0
stable c@1.2.0 r=a range=>=1.1.0_<1.2.0`, ""},
		{"bundle dropped, skipped by name", base, `
stable a@1.0.0
stable c@1.2.0 r=a s=b`, ""},
		{"stranded in old already: a warning", `
stable a@1.0.0
stable b@1.1.0 s=a
stable c@1.2.0 r=b s=b`, `
stable a@1.0.0
stable b@1.1.0 s=a
stable c@1.2.0 r=b s=b
stable d@1.3.0 r=c`, "stranded:stable/a(warning)"},
		{"channel removed", base + "\nfast c@1.2.0", base, "channel-removed:fast/"},
		{"default channel changes", base + "\nfast c@1.2.0", base + "\nfast c@1.2.0\ndefault fast", "default-channel:/(warning)"},
		{"z-stream: the only way forward is skipped", `
stable a@1.0.0
stable b@1.1.0 r=a`, `
stable a@1.0.0
stable b@1.1.0 r=a
stable q@1.1.0-1
stable x1@1.1.1 r=b s=q
stable y1@1.1.2 r=b s=x1
stable c@1.2.0 r=y1`, "skipped-only-way:stable/q"},
		// The edge shapes, where OLM's own resolver decides (see
		// TestOLMResolverCases).
		{"a head covering its own version strands nobody", base, `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, ""},
		{"a head covering its own version, with itself", `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, ""},
		{"a backward skipRange strands the head", base, `
stable a@1.0.0 range=>=1.2.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b`, "stranded:stable/a stranded:stable/b stranded:stable/c"},
		{"olm.deprecated on the head takes it back", base, base + "\nolm-deprecated c", "head-downgrade:stable/b"},
		{"olm.deprecated inside the chain strands the bundle below", base, base + "\nolm-deprecated b", "stranded:stable/a"},
		{"olm.deprecated on every entry", base, base + "\nolm-deprecated a\nolm-deprecated b\nolm-deprecated c", "no-installable-entry:stable/"},
		{"z-stream: the only way forward has olm.deprecated", `
stable a@1.0.0
stable b@1.1.0 r=a`, `
stable a@1.0.0
stable b@1.1.0 r=a
stable q@1.1.0-1
stable x1@1.1.1 r=b s=q
stable c@1.2.0 r=x1 range=>=1.1.0_<1.2.0
olm-deprecated x1`, "skipped-only-way:stable/q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := violations(updates.Check(catalog(t, tc.old), catalog(t, tc.new)))
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	old := catalog(t, `
stable a@1.0.0
stable b@1.1.0 r=a
fast b@1.1.0`)
	new := catalog(t, `
stable a@1.0.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b range=<1.2.0
beta c@1.2.0
deprecate a
default beta`)
	var got []string
	for _, c := range updates.Diff(old, new) {
		got = append(got, fmt.Sprintf("%s %s/%s %s→%s", c.Kind, c.Channel, c.Bundle, c.Old, c.New))
	}
	want := []string{
		"default-channel / stable→beta",
		"channel-added beta/ →c",
		"channel-removed fast/ b→",
		"head stable/ b→c",
		"deprecation-added stable/a →do not use a",
		"bundle-added stable/c →1.2.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDiffOLMDeprecated: the olm.deprecated property is a change, and the
// head a diff reports is the bundle a new subscription gets.
func TestDiffOLMDeprecated(t *testing.T) {
	base := `
stable a@1.0.0
stable b@1.1.0 r=a`
	var got []string
	for _, c := range updates.Diff(catalog(t, base), catalog(t, base+"\nolm-deprecated b")) {
		got = append(got, fmt.Sprintf("%s %s/%s %s→%s", c.Kind, c.Channel, c.Bundle, c.Old, c.New))
	}
	want := "head stable/ b→a\nolm-deprecated-added stable/b →"
	if strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
