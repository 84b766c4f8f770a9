package property

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// bundleObjectCases are olm.bundle.object values, canonical as the loader
// hands them over.
var bundleObjectCases = []string{
	`null`, `{}`, `{"data":null}`, `{"data":"eyJraW5kIjoiQSJ9"}`, `{"Data":"eyJraW5kIjoiQSJ9"}`,
	`{"data":"YQ==","dATA":"Yg=="}`, `{"data":"Yg==","ref":"x"}`, `{"data":"YQ==","data":null}`,
	`{"data":"not base64!"}`, `{"data":"Y\nQ=="}`, `{"data":1}`, `{"data":["YQ=="]}`, `"x"`, `[1]`, `1`, `true`,
	`{"data":"YQ\u003d\u003d"}`,
	// encoding/json decodes a later list into the slice an earlier "data"
	// left: null elements keep its bytes.
	`{"DATA":"AQID","data":[null]}`, `{"DATA":[5,6],"data":[null,null]}`, `{"DATA":"AQIDBA==","Data":[9],"data":[null,null,null]}`,
	`{"DATA":[1,2,3],"Data":null,"data":[null]}`, `{"DATA":[],"data":[null]}`, `{"DATA":"!","data":[7]}`,
}

// TestBundleObjectData: the manifest and the errors are what
// encoding/json gives when it decodes the value into a BundleObject, as
// upstream does.
func TestBundleObjectData(t *testing.T) {
	for _, c := range bundleObjectCases {
		var want BundleObject
		wantErr := json.Unmarshal([]byte(c), &want)
		got, err := BundleObjectData([]byte("prefix"), []byte(c))
		if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%s: error %v, encoding/json's %v", c, err, wantErr)
			continue
		}
		if err == nil && (!bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[6:], want.Data)) {
			t.Errorf("%s: %q, encoding/json's %q", c, got, want.Data)
		}
	}
}

func FuzzBundleObjectData(f *testing.F) {
	for _, c := range bundleObjectCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		canon, err := canonjson.Canonicalize(value)
		if err != nil {
			return // the loader hands over canonical values only
		}
		// Upstream decodes properties from the blob as it encoded it again:
		// canonical, keys sorted.
		var want BundleObject
		wantErr := json.Unmarshal(canon, &want)
		got, err := BundleObjectData(nil, canon)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, encoding/json's %v", value, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want.Data) {
			t.Fatalf("%s: %q, encoding/json's %q", value, got, want.Data)
		}
	})
}

func TestManifestJSON(t *testing.T) {
	for in, want := range map[string]string{
		"kind: A\nspec: {replicas: 1}\n": `{"kind":"A","spec":{"replicas":1}}`,
		"  {\"b\": 1, \"a\" : 2}":        "  {\"b\": 1, \"a\" : 2}", // JSON is kept as it is
		"":                               `null`,
	} {
		got, err := ManifestJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("ManifestJSON(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ManifestJSON([]byte("a: [")); err == nil {
		t.Error("bad YAML: no error")
	}
}

func TestIsCSV(t *testing.T) {
	for in, want := range map[string]bool{
		`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion"}`: true,
		` {"kind" : "ClusterServiceVersion", "spec": {}} ` + "\n":                       true,
		`{"kind":"CustomResourceDefinition","spec":{"kind":"ClusterServiceVersion"}}`:   false,
		`{"Kind":"ClusterServiceVersion"}`:                                              false,
		`{"kind":"Deployment","kind":"ClusterServiceVersion"}`:                          true,
		`{"kind":"ClusterServiceVersion","kind":"Deployment"}`:                          false,
		`{"kind":"ClusterServiceVersion"} {}`:                                           false,
		`{"kind":"ClusterServiceVersion"`:                                               false,
		`["ClusterServiceVersion"]`:                                                     false,
		`null`:                                                                          false,
	} {
		if got := IsCSV([]byte(in), nil); got != want {
			t.Errorf("IsCSV(%s) = %v, want %v", in, got, want)
		}
	}
}
