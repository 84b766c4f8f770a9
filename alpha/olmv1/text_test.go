package olmv1

import (
	"strings"
	"testing"
)

// TestWriteTable: every reason of a row is written, the first on the row
// and each further one on a line of its own in the WHY NOT column; the
// summary groups them by kind, names left out.
func TestWriteTable(t *testing.T) {
	rep := &Report{Catalog: "c", Rows: []*Row{
		{Package: "a", Channel: "stable", Bundle: "a.v1.0.0", Status: string(Installable)},
		{Package: "b", Channel: "stable", Bundle: "b.v1.0.0", Status: string(NotInstallable), Reasons: []string{
			`webhook "x" contains forbidden rule: admission webhook rules cannot reference API group "*"`,
			`webhook "y" contains forbidden rule: admission webhook rules cannot reference API group "*"`,
			"unsupported bundle: apiServiceDefintions are not supported",
		}},
		{Package: "c", Channel: "fast", Status: StatusNoResolution, Reasons: []string{`no bundles found for package "c" in channels [fast]`}},
		// Unknown: no reason, but the WHY NOT column says why it is
		// unknown and how to know (issue 27: it was empty).
		{Package: "d", Channel: "stable", Bundle: "d.v1.0.0", Status: string(Unknown), Checked: "olm.csv.metadata only",
			Notes: []string{"unknown: the catalog carries no bundle objects (pull the bundle image to check them)"}},
		{Package: "e", Channel: "stable", Bundle: "e.v1.0.0", Status: string(Unknown), Checked: "properties only",
			Notes: []string{"the bundle image x.io/e:1 could not be read: not found"}},
	}}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	col := strings.Index(lines[0], "WHY NOT")
	want := []struct{ prefix, why string }{
		{"a ", ""},
		{"b ", `webhook "x" contains forbidden rule: admission webhook rules cannot reference API group "*"`},
		{"", `webhook "y" contains forbidden rule: admission webhook rules cannot reference API group "*"`},
		{"", "unsupported bundle: apiServiceDefintions are not supported"},
		{"c ", `no bundles found for package "c" in channels [fast]`},
		{"d ", "the catalog carries no bundle objects (checked: olm.csv.metadata only); --pull-bundles pulls the bundle image to check it"},
		{"e ", "the bundle image x.io/e:1 could not be read: not found"},
	}
	for i, w := range want {
		l := lines[i+1]
		if !strings.HasPrefix(l, w.prefix) || len(l) < col || strings.TrimRight(l[col:], " ") != w.why {
			t.Errorf("line %d %q, want %q with %q at column %d", i+1, l, w.prefix, w.why, col)
		}
		if w.prefix == "" && strings.TrimSpace(l[:col]) != "" {
			t.Errorf("line %d %q: a further reason alone on its line", i+1, l)
		}
	}
	for _, s := range []string{
		"5 channels: 1 installable, 1 not installable, 2 unknown (no bundle objects), 1 do not resolve",
		"     1  webhook … contains forbidden rule: admission webhook rules cannot reference API group …\n",
		"     1  unsupported bundle: apiServiceDefintions are not supported\n",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}
