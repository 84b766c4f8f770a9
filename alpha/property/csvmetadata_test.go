package property

import (
	"encoding/json"
	"testing"

	"github.com/fastopm/fastopm/pkg/csv"
)

func TestBuildCSVMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		csv  string // JSON of a ClusterServiceVersion
		want string
	}{
		{
			name: "empty CSV: the struct fields are always written",
			csv:  `{}`,
			want: `{"apiServiceDefinitions":{},"crdDescriptions":{},"provider":{}}`,
		},
		{
			name: "every field, in upstream's order",
			csv: `{"metadata":{"name":"a","labels":{"z":"1","a":"2"},"annotations":{"x":"<b> & c"}},
			"spec":{"provider":{"url":"https://p","name":"P"},"nativeAPIs":[{"kind":"Pod","version":"v1","group":""}],
			"minKubeVersion":"1.25.0","maturity":"stable","maintainers":[{"email":"m@x","name":"M"}],
			"links":[{"url":"https://l","name":"L"}],"keywords":["k"],"installModes":[{"supported":false,"type":"MultiNamespace"}],
			"displayName":"A","description":"D > E",
			"customresourcedefinitions":{"required":[{"kind":"R","version":"v1","name":"rs.x.io"}],
				"owned":[{"actionDescriptors":[{"path":"a"}],"specDescriptors":[{"value":{"b":1,"a":2},"x-descriptors":["u"],"description":"d","displayName":"n","path":"s"}],
				"statusDescriptors":[{"path":"t"}],"resources":[{"version":"v1","kind":"Deployment","name":""}],
				"description":"cd","displayName":"cn","kind":"A","version":"v1","name":"as.x.io"}]},
			"apiservicedefinitions":{"owned":[{"containerPort":443,"deploymentName":"d","kind":"K","version":"v1","group":"g.io","name":"ks","displayName":"KS"}]},
			"version":"1.0.0","install":{"strategy":"deployment"},"relatedImages":[{"image":"i"}],"icon":[{"base64data":"","mediatype":""}]}}`,
			want: `{"annotations":{"x":"<b> & c"},` +
				`"apiServiceDefinitions":{"owned":[{"name":"ks","group":"g.io","version":"v1","kind":"K","deploymentName":"d","containerPort":443,"displayName":"KS"}]},` +
				`"crdDescriptions":{"owned":[{"name":"as.x.io","version":"v1","kind":"A","displayName":"cn","description":"cd",` +
				`"resources":[{"name":"","kind":"Deployment","version":"v1"}],"statusDescriptors":[{"path":"t"}],` +
				`"specDescriptors":[{"path":"s","displayName":"n","description":"d","x-descriptors":["u"],"value":{"b":1,"a":2}}],` +
				`"actionDescriptors":[{"path":"a"}]}],"required":[{"name":"rs.x.io","version":"v1","kind":"R"}]},` +
				`"description":"D > E","displayName":"A","installModes":[{"type":"MultiNamespace","supported":false}],"keywords":["k"],` +
				`"labels":{"a":"2","z":"1"},"links":[{"name":"L","url":"https://l"}],"maintainers":[{"name":"M","email":"m@x"}],` +
				`"maturity":"stable","minKubeVersion":"1.25.0","nativeAPIs":[{"group":"","version":"v1","kind":"Pod"}],` +
				`"provider":{"name":"P","url":"https://p"}}`,
		},
		{
			name: "empty maps and lists are dropped; a null descriptor value is kept",
			csv:  `{"metadata":{"annotations":{},"labels":{}},"spec":{"keywords":[],"customresourcedefinitions":{"owned":[]},"apiservicedefinitions":{"owned":[{"name":"n","group":"g","version":"v","kind":"k","statusDescriptors":[{"path":"p","value":null}]}]}}}`,
			want: `{"apiServiceDefinitions":{"owned":[{"name":"n","group":"g","version":"v","kind":"k","statusDescriptors":[{"path":"p","value":null}]}]},"crdDescriptions":{},"provider":{}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := csv.Parse([]byte(tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			p, err := BuildCSVMetadata(c)
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != TypeCSVMetadata {
				t.Errorf("type %q", p.Type)
			}
			if string(p.Value) != tc.want {
				t.Errorf("value\n%s\nwant\n%s", p.Value, tc.want)
			}
			var m CSVMetadata
			if err := json.Unmarshal(p.Value, &m); err != nil {
				t.Fatal(err)
			}
			again, err := m.MarshalValue()
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != tc.want {
				t.Errorf("round trip\n%s\nwant\n%s", again, tc.want)
			}
		})
	}
}
