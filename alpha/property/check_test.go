package property

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestCheckerMatchesDecoding(t *testing.T) {
	values := map[string][]string{
		TypeGVK:             {`{"group":"a","kind":"b","version":"c"}`, `{"group":"x","kind":"y","version":"z"}`, `{"group":1}`, `{"group":2}`, `"s"`, `null`, `{"Group":"a","extra":[1,2]}`},
		TypePackageRequired: {`{"packageName":"p","versionRange":">1"}`, `{"packageName":["p"]}`},
		TypeChannel:         {`{"channelName":"c","priority":1}`, `{"channelName":"c","priority":1.5}`, `{"channelName":"c","priority":1e2}`, `{"channelName":"c","priority":"1"}`},
		TypeCSVMetadata: {
			`{"displayName":"a","keywords":["x","y"],"installModes":[{"supported":true,"type":"OwnNamespace"}]}`,
			`{"displayName":"b","keywords":["z"],"installModes":[{"supported":false,"type":"AllNamespaces"},{"supported":true,"type":"OwnNamespace"}]}`,
			`{"keywords":"x"}`,
			`{"apiServiceDefinitions":{"owned":[{"containerPort":443,"name":"a"}]}}`,
			`{"apiServiceDefinitions":{"owned":[{"containerPort":4.5,"name":"a"}]}}`,
			`{"apiServiceDefinitions":{"owned":[{"containerPort":99999999999,"name":"a"}]}}`,
			`{"crdDescriptions":{"owned":[{"name":"a","specDescriptors":[{"path":"p","value":{"any":["thing"]}}]}]}}`,
			`{"labels":{"a":"b"},"annotations":{"c":1}}`,
		},
		"example.com/other": {`{"anything":[1,"x"]}`, ``},
	}
	var c Checker
	for round := 0; round < 2; round++ { // the second round answers from the memo
		for typ, vals := range values {
			for _, v := range vals {
				got := c.Check(typ, json.RawMessage(v))
				_, want := Parse([]Property{{Type: typ, Value: json.RawMessage(v)}})
				var pe ParseError
				wantText := "<nil>"
				if want != nil {
					if !asParseError(want, &pe) {
						t.Fatalf("Parse error %T", want)
					}
					wantText = errText(pe.Err)
				}
				if errText(got) != wantText {
					t.Errorf("round %d %s %s: Check %q, Parse %q", round, typ, v, errText(got), wantText)
				}
			}
		}
	}
}

func asParseError(err error, pe *ParseError) bool {
	p, ok := err.(ParseError)
	if ok {
		*pe = p
	}
	return ok
}

func TestAppendTypeShape(t *testing.T) {
	cases := map[string]string{
		`{"a":"long string","b":[1,2,"x","y",{"c":"d"},{"c":"e"}],"n":null}`:      `{"~":"","~":[1,2,"",{"~":""}],"~":null}`,
		`{"annotations":{"x":"1","y":"2","z":3},"keywords":["a","b"],"kind":"X"}`: `{"annotations":{"~":"","~":3},"keywords":[""],"kind":""}`,
		`[]`:      `[]`,
		`"x"`:     `""`,
		`[[],[]]`: `[[]]`,
	}
	for in, want := range cases {
		if got := string(canonjson.AppendTypeShape(nil, []byte(in), knownField)); got != want {
			t.Errorf("shape(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzChecker(f *testing.F) {
	f.Add(TypeCSVMetadata, `{"keywords":["a"],"installModes":[{"type":"x","supported":true}]}`)
	f.Add(TypeChannel, `{"priority":3}`)
	f.Fuzz(func(t *testing.T, typ, value string) {
		canon, err := canonjson.Canonicalize([]byte(value))
		if err != nil {
			return
		}
		var c Checker
		for i := 0; i < 2; i++ {
			got := c.Check(typ, canon)
			_, want := Parse([]Property{{Type: typ, Value: canon}})
			wantText := "<nil>"
			if want != nil {
				wantText = want.(ParseError).Err.Error()
			}
			if errText(got) != wantText {
				t.Fatalf("%s %s: Check %q, Parse %q", typ, canon, errText(got), wantText)
			}
		}
		_ = fmt.Sprint()
	})
}
