package csv

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		check   func(t *testing.T, c *ClusterServiceVersion)
		wantErr string
	}{
		{
			name: "typical",
			in: `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion",
				"metadata":{"name":"a.v1.2.3","creationTimestamp":null,"annotations":{"k":"v"},"labels":{"l":"x"}},
				"spec":{"version":"1.2.3","displayName":"A","provider":{"name":"P"},
				"customresourcedefinitions":{"owned":[{"name":"as.x.io","version":"v1","kind":"A",
					"specDescriptors":[{"path":"size","x-descriptors":["urn:a"],"value":3}]}]},
				"install":{"strategy":"deployment","spec":{"deployments":[{"name":"d","spec":{"replicas":1}}]}},
				"installModes":[{"type":"OwnNamespace","supported":true}]}}`,
			check: func(t *testing.T, c *ClusterServiceVersion) {
				if c.Name != "a.v1.2.3" || c.Kind != Kind || c.APIVersion != APIVersion || c.Annotations["k"] != "v" || c.Labels["l"] != "x" {
					t.Errorf("meta = %+v %+v", c.TypeMeta, c.ObjectMeta)
				}
				if c.Spec.Version.String() != "1.2.3" || c.Spec.DisplayName != "A" || c.Spec.Provider.Name != "P" {
					t.Errorf("spec = %+v", c.Spec)
				}
				d := c.Spec.CustomResourceDefinitions.Owned[0].SpecDescriptors[0]
				if d.Path != "size" || string(d.Value) != "3" || d.XDescriptors[0] != "urn:a" {
					t.Errorf("descriptor = %+v", d)
				}
				if string(c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec) != `{"replicas":1}` {
					t.Errorf("deployment spec = %s", c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec)
				}
			},
		},
		{
			name: "keys match case-insensitively, as encoding/json does",
			in:   `{"Metadata":{"NAME":"x"},"spec":{"DisplayName":"D"}}`,
			check: func(t *testing.T, c *ClusterServiceVersion) {
				if c.Name != "x" || c.Spec.DisplayName != "D" {
					t.Errorf("got %q %q", c.Name, c.Spec.DisplayName)
				}
			},
		},
		{
			name: "tolerant version",
			in:   `{"spec":{"version":" v1.2 "}}`,
			check: func(t *testing.T, c *ClusterServiceVersion) {
				if c.Spec.Version.String() != "1.2.0" {
					t.Errorf("version %s", c.Spec.Version)
				}
			},
		},
		{
			name: "creation timestamp",
			in:   `{"metadata":{"creationTimestamp":"2024-01-02T03:04:05Z"}}`,
			check: func(t *testing.T, c *ClusterServiceVersion) {
				if !c.CreationTimestamp.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
					t.Errorf("time %v", c.CreationTimestamp)
				}
			},
		},
		{name: "version not semver", in: `{"spec":{"version":"one"}}`, wantErr: `spec.version "one"`},
		{name: "short version with pre-release", in: `{"spec":{"version":"1.2-beta"}}`, wantErr: "short version"},
		{name: "leading zero", in: `{"spec":{"version":"01.2.3"}}`, wantErr: "spec.version"},
		{name: "version not a string", in: `{"spec":{"version":1}}`, wantErr: "cannot unmarshal number"},
		{name: "display name not a string", in: `{"spec":{"displayName":1}}`, wantErr: "cannot unmarshal number"},
		{name: "annotation not a string", in: `{"metadata":{"annotations":{"a":1}}}`, wantErr: "cannot unmarshal number"},
		{name: "bad timestamp", in: `{"metadata":{"creationTimestamp":"yesterday"}}`, wantErr: "decode ClusterServiceVersion"},
		{name: "not an object", in: `[]`, wantErr: "cannot unmarshal array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestParseTolerant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{"1.2.3", "1.2.3", nil},
		{"v1.2.3-rc.1+b", "1.2.3-rc.1+b", nil},
		{"1", "1.0.0", nil},
		{"1.2", "1.2.0", nil},
		{"1.2+b", "", ErrShortVersion},
		{"", "", errors.New("any")},
	}
	for _, tc := range tests {
		v, err := ParseTolerant(tc.in)
		if (err != nil) != (tc.err != nil) {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if errors.Is(tc.err, ErrShortVersion) && !errors.Is(err, ErrShortVersion) {
			t.Errorf("%q: error %v, want ErrShortVersion", tc.in, err)
		}
		if err == nil && v.String() != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, v, tc.want)
		}
	}
}

// TestMarshalSynthetic checks the encoding of a CSV built the way upstream
// synthesizes one from olm.csv.metadata: field order, omitempty and the
// always-written structs (install.spec, cleanup, status.cleanup).
func TestMarshalSynthetic(t *testing.T) {
	t.Parallel()
	c := ClusterServiceVersion{
		TypeMeta:   TypeMeta{Kind: Kind, APIVersion: APIVersion},
		ObjectMeta: ObjectMeta{Name: "a.v1.0.0", Annotations: map[string]string{"b": "<2>", "a": "1"}},
		Spec: Spec{
			InstallStrategy: NamedInstallStrategy{StrategyName: InstallStrategyNameDeployment},
			Version:         OperatorVersion{semver.MustParse("1.0.0")},
			CustomResourceDefinitions: CustomResourceDefinitions{Owned: []CRDDescription{{
				Name: "as.x.io", Version: "v1", Kind: "A", DisplayName: "A",
				SpecDescriptors: []SpecDescriptor{{Path: "p", Value: json.RawMessage(`true`)}},
			}}},
			DisplayName:   "A",
			InstallModes:  []InstallMode{{Type: "AllNamespaces", Supported: true}},
			Icon:          []Icon{{Data: "aWNvbg==", MediaType: "image/png"}},
			RelatedImages: []RelatedImage{{Image: "quay.io/a:1"}},
		},
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1",` +
		`"metadata":{"name":"a.v1.0.0","annotations":{"a":"1","b":"\u003c2\u003e"}},` +
		`"spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"1.0.0",` +
		`"customresourcedefinitions":{"owned":[{"name":"as.x.io","version":"v1","kind":"A","displayName":"A","specDescriptors":[{"path":"p","value":true}]}]},` +
		`"apiservicedefinitions":{},"displayName":"A","provider":{},"icon":[{"base64data":"aWNvbg==","mediatype":"image/png"}],` +
		`"installModes":[{"type":"AllNamespaces","supported":true}],"cleanup":{"enabled":false},"relatedImages":[{"name":"","image":"quay.io/a:1"}]},` +
		`"status":{"cleanup":{}}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A set creation timestamp is written in UTC; zero is omitted (above).
	c.CreationTimestamp = Time{time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))}
	got, err = json.Marshal(c.ObjectMeta)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"creationTimestamp":"2024-01-02T02:04:05Z"`) {
		t.Errorf("metadata %s", got)
	}
}

func TestTimeJSON(t *testing.T) {
	t.Parallel()
	var tm Time
	if err := json.Unmarshal([]byte(`null`), &tm); err != nil || !tm.IsZero() {
		t.Fatalf("null: %v %v", tm, err)
	}
	if b, _ := json.Marshal(tm); string(b) != "null" {
		t.Errorf("zero marshals as %s", b)
	}
	if err := json.Unmarshal([]byte(`5`), &tm); err == nil {
		t.Error("number accepted")
	}
	var p struct {
		T *Time `json:"t,omitempty"`
	}
	if b, _ := json.Marshal(p); string(b) != `{}` {
		t.Errorf("nil pointer marshals as %s", b)
	}
}
