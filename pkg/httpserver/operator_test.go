package httpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/markdown"
)

// opAnswer is the operator details of a package's or bundle's answer.
type opAnswer struct {
	Bundle, DisplayName, Provider, ProviderURL, Capabilities string
	Description, DescriptionHTML                             string
	DescriptionTruncated                                     bool
	Keywords, Categories, InstallModes, ValidSubscription    []string
	Maintainers                                              []struct{ Name, Email string }
	Links                                                    []struct{ Name, URL string }
	NativeAPIs                                               []struct{ Group, Version, Kind string }
	OwnedCRDs, RequiredCRDs                                  []struct {
		Name, Kind string
		Examples   []string
	}
	Examples        []string
	ExamplesProblem string
}

// operatorCatalog serves one package per entry of csvs, named by its key,
// with one bundle whose CSV is the value: a string is the bundle object's
// text (JSON or YAML, not checked when the catalog loads), a
// map[string]any with the key "olm.csv.metadata" that property's value
// (checked), else the CSV object as JSON. descs are the packages' own
// descriptions.
func operatorCatalog(t *testing.T, csvs map[string]any, descs map[string]string) *httptest.Server {
	t.Helper()
	var blobs []any
	type m = map[string]any
	for _, pkg := range slices.Sorted(func(yield func(string) bool) {
		for k := range csvs {
			if !yield(k) {
				return
			}
		}
	}) {
		var prop m
		switch v := csvs[pkg].(type) {
		case string:
			prop = m{"type": "olm.bundle.object", "value": m{"data": base64.StdEncoding.EncodeToString([]byte(v))}}
		case m:
			if meta, ok := v["olm.csv.metadata"]; ok {
				prop = m{"type": "olm.csv.metadata", "value": meta}
				break
			}
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			prop = m{"type": "olm.bundle.object", "value": m{"data": base64.StdEncoding.EncodeToString(data)}}
		default:
			t.Fatalf("%s: %T", pkg, v)
		}
		blobs = append(blobs,
			m{"schema": "olm.package", "name": pkg, "defaultChannel": "stable", "description": descs[pkg]},
			m{"schema": "olm.channel", "package": pkg, "name": "stable", "entries": []m{{"name": pkg + ".v1.0.0"}}},
			m{"schema": "olm.bundle", "package": pkg, "name": pkg + ".v1.0.0", "image": "example.com/" + pkg + ":v1",
				"properties": []m{{"type": "olm.package", "value": m{"packageName": pkg, "version": "1.0.0"}}, prop}})
	}
	hs, err := httpserver.New(snapshotDir(t, testutil.WriteFBC(t, blobs...)), httpserver.Options{CatalogName: "operators"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// csvObject is a ClusterServiceVersion with these metadata and spec.
func csvObject(metadata, spec any) map[string]any {
	return map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": metadata, "spec": spec}
}

// TestOperatorMalformed: CSVs of wrong types, JSON that is not what it
// should be, nulls everywhere: the list, the package and the bundle answer
// 200 with what can be read, and leave out the rest.
func TestOperatorMalformed(t *testing.T) {
	type m = map[string]any
	good := m{"name": "widgets.example.com", "version": "v1", "kind": "Widget"}
	cases := map[string]struct {
		csv   any
		check func(t *testing.T, op *opAnswer)
	}{
		"spec-a-string": {csvObject(m{"annotations": m{"capabilities": "Basic Install"}}, "spec"), func(t *testing.T, op *opAnswer) {
			if op == nil || op.Capabilities != "Basic Install" || op.DisplayName != "" {
				t.Errorf("%+v", op)
			}
		}},
		"metadata-a-list": {csvObject([]any{"x"}, m{"displayName": "Listed"}), func(t *testing.T, op *opAnswer) {
			if op == nil || op.DisplayName != "Listed" {
				t.Errorf("%+v", op)
			}
		}},
		"annotations-of-other-types": {csvObject(m{"annotations": m{"alm-examples": 5, "categories": []string{"x"}, "capabilities": "Auto Pilot",
			"operators.openshift.io/valid-subscription": `["A", 5, "", " ", null, "B"]`}}, m{}), func(t *testing.T, op *opAnswer) {
			if op == nil || op.Capabilities != "Auto Pilot" || len(op.Categories) != 0 || op.ExamplesProblem != "" ||
				fmt.Sprint(op.ValidSubscription) != "[A B]" {
				t.Errorf("%+v", op)
			}
		}},
		"lists-that-are-not": {csvObject(m{}, m{"displayName": "Not lists", "keywords": "k", "links": m{"name": "x", "url": "https://x.example"},
			"maintainers": "me", "installModes": "AllNamespaces", "nativeAPIs": m{"kind": "Pod"},
			"customresourcedefinitions": []any{good}, "apiservicedefinitions": "x"}), func(t *testing.T, op *opAnswer) {
			if op == nil || op.DisplayName != "Not lists" || op.Keywords != nil || op.Links != nil || op.Maintainers != nil ||
				op.InstallModes != nil || op.NativeAPIs != nil || op.OwnedCRDs != nil {
				t.Errorf("%+v", op)
			}
		}},
		"items-of-other-types": {csvObject(m{}, m{"keywords": []any{1, "k", nil, " "}, "links": []any{"x", 5, nil, m{"url": 5}, m{"name": "Docs", "url": "https://docs.example"}},
			"maintainers": []any{m{"name": []string{"x"}}, m{"email": "a@example.com"}}, "nativeAPIs": []any{5, m{"kind": "Pod", "version": "v1"}},
			"customresourcedefinitions": m{"owned": []any{5, "x", nil, m{"name": 1}, good}, "required": m{"name": "x"}}}), func(t *testing.T, op *opAnswer) {
			if op == nil || fmt.Sprint(op.Keywords, op.Links, op.Maintainers, op.NativeAPIs) != "[k] [{Docs https://docs.example}] [{ a@example.com}] [{ v1 Pod}]" ||
				len(op.OwnedCRDs) != 1 || op.OwnedCRDs[0].Kind != "Widget" || op.RequiredCRDs != nil {
				t.Errorf("%+v", op)
			}
		}},
		"a-string-for-a-struct": {csvObject(m{}, m{"provider": "Corp", "displayName": m{"x": 1}, "description": 5}), func(t *testing.T, op *opAnswer) {
			if op == nil || op.Provider != "" || op.DisplayName != "" || op.Description != "" {
				t.Errorf("%+v", op)
			}
		}},
		"nulls": {csvObject(nil, nil), func(t *testing.T, op *opAnswer) {
			if op == nil || op.Bundle != "nulls.v1.0.0" {
				t.Errorf("%+v", op)
			}
		}},
		"yaml-of-other-types": {"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  annotations:\n    alm-examples: |-\n      {\"kind\": \"Widget\"}\nspec:\n  displayName: [a, b]\n  provider: {name: YAML Corp}\n  links: {a: b}\n",
			func(t *testing.T, op *opAnswer) {
				if op == nil || op.Provider != "YAML Corp" || op.DisplayName != "" ||
					op.ExamplesProblem != "the alm-examples annotation is a JSON object, not a JSON list of custom resources" {
					t.Errorf("%+v", op)
				}
			}},
		"not-a-csv": {"kind: [ClusterServiceVersion]\n", func(t *testing.T, op *opAnswer) {
			if op != nil {
				t.Errorf("%+v", op)
			}
		}},
		"metadata-nulls": {m{"olm.csv.metadata": m{"annotations": nil, "apiServiceDefinitions": nil, "crdDescriptions": m{"owned": []any{nil}, "required": nil},
			"description": nil, "displayName": nil, "installModes": []any{nil}, "keywords": []any{nil}, "labels": nil, "links": []any{nil},
			"maintainers": []any{nil}, "maturity": nil, "minKubeVersion": nil, "nativeAPIs": []any{nil}, "provider": nil}},
			func(t *testing.T, op *opAnswer) {
				if op == nil || op.Keywords != nil || op.Links != nil || op.Maintainers != nil || op.NativeAPIs != nil || op.OwnedCRDs != nil || op.InstallModes != nil {
					t.Errorf("%+v", op)
				}
			}},
	}
	for _, alm := range []struct{ value, problem string }{
		{`null`, ""},
		{`[]`, ""},
		{`"a string"`, "the alm-examples annotation is a JSON string, not a JSON list of custom resources"},
		{`5`, "the alm-examples annotation is a JSON number, not a JSON list of custom resources"},
		{`true`, "the alm-examples annotation is a JSON true or false, not a JSON list of custom resources"},
		{`not JSON`, "the alm-examples annotation is not valid JSON: invalid character 'o' in literal null (expecting 'u')"},
		{`[{"kind": "Widget"}] trailing`, "the alm-examples annotation is not valid JSON: invalid character 't' after top-level value"},
		{`[[1], null, {"apiVersion": 5, "kind": "Widget"}]`, "2 of the 3 items of the alm-examples annotation are not objects (custom resources): left out"},
		// (A problem ending in ": " is the start of encoding/json's words.)
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "the alm-examples annotation is not valid JSON: "},
	} {
		cases[fmt.Sprintf("alm-examples-%d", len(cases))] = struct {
			csv   any
			check func(t *testing.T, op *opAnswer)
		}{csvObject(m{"annotations": m{"alm-examples": alm.value}}, m{"customresourcedefinitions": m{"owned": []any{good}}}), func(t *testing.T, op *opAnswer) {
			if op == nil || op.ExamplesProblem != alm.problem && !(strings.HasSuffix(alm.problem, ": ") && strings.HasPrefix(op.ExamplesProblem, alm.problem)) {
				t.Errorf("alm-examples %.40q: problem %q, want %q", alm.value, op.ExamplesProblem, alm.problem)
			}
		}}
	}
	csvs := map[string]any{}
	for name, c := range cases {
		csvs[name] = c.csv
	}
	ts := operatorCatalog(t, csvs, nil)
	resp, body := get(t, ts.URL+"/api/v1/packages?limit=all")
	var list struct{ Total int }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil || list.Total != len(cases) {
		t.Fatalf("the list: %d, %d packages: %.300s", resp.StatusCode, list.Total, body)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/packages/" + name, "/api/v1/packages/" + name + "/bundles/" + name + ".v1.0.0"} {
				resp, body := get(t, ts.URL+path)
				var a struct{ Operator *opAnswer }
				if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &a) != nil {
					t.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
				}
				c.check(t, a.Operator)
			}
		})
	}
}

// TestOperatorLinks: what a CSV gives as a URL reaches the answer only when
// a page may link to it (an http or https URL with a host, or mailto):
// javascript:, data:, relative URLs and text are left out, the link's
// name kept.
func TestOperatorLinks(t *testing.T) {
	type m = map[string]any
	bad := []string{"javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:alert(1)", "jav&#x09;ascript:alert(1)", "vbscript:x",
		"data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd", "//evil.example/", "https:evil.example", "/api/v1/all", "#pkg=x", "docs", ""}
	var links []m
	for i, u := range bad {
		links = append(links, m{"name": fmt.Sprintf("bad%d", i), "url": u})
	}
	links = append(links, m{"url": "javascript:alert(2)"}, m{"name": "Docs", "url": " https://docs.example/x "}, m{"name": "Mail", "url": "mailto:a@example.com"})
	csvs := map[string]any{
		"links": m{"olm.csv.metadata": m{"links": links, "provider": m{"name": "Corp", "url": "javascript:alert(3)"},
			"maintainers": []m{{"name": "M", "email": `"><script>alert(4)</script>`}}}},
		"provider": csvObject(m{}, m{"provider": m{"name": "Corp", "url": "https://corp.example"}}),
	}
	ts := operatorCatalog(t, csvs, nil)
	var a struct{ Operator opAnswer }
	getJSONInto(t, ts.URL+"/api/v1/packages/links", &a)
	op := a.Operator
	if len(op.Links) != len(bad)+2 {
		t.Errorf("%d links, want %d: %v", len(op.Links), len(bad)+2, op.Links)
	}
	for _, l := range op.Links {
		if l.URL != "" && !markdown.LinkURL(l.URL) {
			t.Errorf("link %q to %q", l.Name, l.URL)
		}
		if strings.HasPrefix(l.Name, "bad") && l.URL != "" {
			t.Errorf("link %q keeps its URL %q", l.Name, l.URL)
		}
	}
	if got := fmt.Sprint(op.Links[len(op.Links)-2:]); got != "[{Docs https://docs.example/x} {Mail mailto:a@example.com}]" {
		t.Errorf("the good links: %s", got)
	}
	if op.ProviderURL != "" || op.Provider != "Corp" {
		t.Errorf("provider %q, URL %q", op.Provider, op.ProviderURL)
	}
	// An address is text: the page makes it a mailto: link.
	if len(op.Maintainers) != 1 || op.Maintainers[0].Email != `"><script>alert(4)</script>` {
		t.Errorf("maintainers %v", op.Maintainers)
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/provider", &a)
	if a.Operator.ProviderURL != "https://corp.example" {
		t.Errorf("provider URL %q", a.Operator.ProviderURL)
	}
}

// TestDescriptionBounded: a description longer than markdown.MaxSize
// comes as the part rendered, in Markdown and in HTML, said to be cut;
// the whole is in the catalog (/api/v1/metas).
func TestDescriptionBounded(t *testing.T) {
	type m = map[string]any
	line := "Some **text** with a [link](https://example.com/docs).\n\n"
	long := strings.Repeat(line, 3<<20/len(line))
	ts := operatorCatalog(t, map[string]any{"long": m{"olm.csv.metadata": m{"displayName": "Long", "description": long}}}, map[string]string{"long": long})
	var a struct {
		Description, DescriptionHTML string
		DescriptionTruncated         bool
		Operator                     opAnswer
	}
	resp, body := get(t, ts.URL+"/api/v1/packages/long")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d", resp.StatusCode)
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	op := a.Operator
	want, _ := markdown.Cut(long)
	if !a.DescriptionTruncated || a.Description != want || a.DescriptionHTML != op.DescriptionHTML {
		t.Errorf("the package's description: %d bytes, truncated %v", len(a.Description), a.DescriptionTruncated)
	}
	if !op.DescriptionTruncated || op.Description != want || !strings.HasSuffix(op.Description, "\n") {
		t.Errorf("description of %d bytes, truncated %v; want the %d bytes Cut keeps", len(op.Description), op.DescriptionTruncated, len(want))
	}
	if n, w := strings.Count(op.DescriptionHTML, `href="https://example.com/docs"`), strings.Count(want, "[link]"); n != w {
		t.Errorf("%d links in the HTML, want %d", n, w)
	}
	if len(body) > 2*(2*markdown.MaxSize+len(op.DescriptionHTML))+64<<10 {
		t.Errorf("the answer is %d bytes", len(body))
	}
	var b struct{ Operator opAnswer }
	getJSONInto(t, ts.URL+"/api/v1/packages/long/bundles/long.v1.0.0", &b)
	if b.Operator.Description != op.Description || b.Operator.DescriptionHTML != op.DescriptionHTML || !b.Operator.DescriptionTruncated {
		t.Error("the bundle's answer differs from the package's")
	}
	// The whole text is in the catalog.
	_, metas := get(t, ts.URL+"/api/v1/metas?schema=olm.bundle&package=long")
	var blob struct {
		Properties []struct {
			Type  string
			Value struct{ Description string }
		}
	}
	if err := json.Unmarshal(metas, &blob); err != nil || len(blob.Properties) < 2 || blob.Properties[1].Value.Description != long {
		t.Errorf("metas: %v", err)
	}
}
