package csv

import (
	"encoding/json"
	"testing"
)

func TestViewRelease(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
		fails      bool
	}{
		{spec: `{}`, want: ""},
		{spec: `{"release":null}`, want: ""},
		{spec: `{"release":"2"}`, want: "2"},
		{spec: `{"release":"alpha.1"}`, want: "alpha.1"},
		{spec: `{"release":""}`, want: ""},
		{spec: `{"release":2}`, want: "2"},
		{spec: `{"release":2.0}`, want: "2"},
		{spec: `{"release":1.5}`, want: "1.5"},
		{spec: `{"release":1e21}`, want: "1e+21"},
		{spec: `{"Release":"2"}`, want: ""}, // an exact key, as upstream's map lookup
		{spec: `{"release":true}`, fails: true},
		{spec: `{"release":["1"]}`, fails: true},
	} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(`{"spec":`+tc.spec+`}`), &obj); err != nil {
			t.Fatal(err)
		}
		v, err := NewView(obj)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		got, err := v.Release()
		switch {
		case tc.fails && err == nil:
			t.Errorf("%s: got %q, want an error", tc.spec, got)
		case tc.fails:
			if err.Error() != "release field must be a string or number" {
				t.Errorf("%s: error %q", tc.spec, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.spec, err)
		case got != tc.want:
			t.Errorf("%s: got %q, want %q", tc.spec, got, tc.want)
		}
	}
}
