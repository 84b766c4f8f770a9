package httpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/pkg/markdown"
)

// FuzzCSVMetadata: whatever a bundle's CSV holds, as a bundle object
// (JSON or YAML, not checked when the catalog loads) or as an
// olm.csv.metadata value (any JSON here, though the loader checks its
// types), reading it and making the page's details neither panics nor
// fails to encode, and what the details give as links can be linked to.
func FuzzCSVMetadata(f *testing.F) {
	for _, s := range []string{
		`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"alm-examples":"[{\"kind\":\"K\"}]"}},"spec":{"displayName":"D","links":[{"name":"n","url":"javascript:x"}]}}`,
		`{"kind":"ClusterServiceVersion","metadata":[1],"spec":{"provider":"P","maintainers":"m","installModes":[{"type":1}],"customresourcedefinitions":{"owned":[5,{"kind":"K"}]}}}`,
		`{"kind":"ClusterServiceVersion","metadata":{"annotations":{"operators.openshift.io/valid-subscription":"[\"a\",5]","operators.openshift.io/infrastructure-features":"[\"fips\",null]"}},"spec":null}`,
		"kind: ClusterServiceVersion\nspec:\n  description: \"# t\\n[x](javascript:y)\"\n  links: {a: b}\n  nativeAPIs: [1, {kind: Pod}]\n",
		`{"annotations":null,"crdDescriptions":{"owned":[null]},"links":[null],"maintainers":[null],"provider":null,"description":"> > > x"}`,
		`null`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, csv []byte) {
		obj, err := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString(csv)})
		if err != nil {
			t.Fatal(err)
		}
		lines := [][]byte{[]byte(`{"image":"i","name":"b","package":"p","properties":[{"type":"olm.bundle.object","value":` + string(obj) + `}],"schema":"olm.bundle"}`)}
		var compact bytes.Buffer
		if json.Compact(&compact, csv) == nil {
			lines = append(lines, []byte(`{"image":"i","name":"b","package":"p","properties":[{"type":"olm.csv.metadata","value":`+compact.String()+`}],"schema":"olm.bundle"}`))
		}
		for _, line := range lines {
			_, m, _ := readCSVMetadata(line)
			if m == nil {
				continue
			}
			d := detail("b", m)
			if _, err := json.Marshal(d); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if d.ProviderURL != "" && !markdown.LinkURL(d.ProviderURL) {
				t.Errorf("provider URL %q", d.ProviderURL)
			}
			for _, l := range d.Links {
				if l.URL != "" && !markdown.LinkURL(l.URL) || l.URL == "" && strings.TrimSpace(l.Name) == "" {
					t.Errorf("link %+v", l)
				}
			}
			for _, x := range d.Maintainers {
				if strings.TrimSpace(x.Name) == "" && strings.TrimSpace(x.Email) == "" {
					t.Errorf("an empty maintainer")
				}
			}
			for _, x := range d.ValidSubscription {
				if strings.TrimSpace(x) == "" {
					t.Errorf("an empty valid subscription")
				}
			}
			_ = summarize(m)
		}
	})
}
