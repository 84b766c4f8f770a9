package property

import (
	"errors"
	"testing"
)

// TestExplain: encoding/json's type errors, said in words.
func TestExplain(t *testing.T) {
	var c Checker
	for _, tc := range []struct{ typ, value, want string }{
		{TypePackage, `{"packageName":"p","version":1}`, `"version" must be a string, found a number`},
		{TypeGVK, `"g/v/k"`, `the value must be an object, found a string`},
		{TypeCSVMetadata, `{"keywords":"a"}`, `"keywords" must be a list of strings, found a string`},
		{TypeCSVMetadata, `{"installModes":[{"type":"OwnNamespace","supported":"yes"}]}`, `"installModes.supported" must be a boolean, found a string`},
		{TypeCSVMetadata, `{"apiServiceDefinitions":{"owned":[{"containerPort":1.5}]}}`, `"apiServiceDefinitions.owned.containerPort" must be an integer, found the number 1.5`},
		{TypeCSVMetadata, `{"labels":["a"]}`, `"labels" must be an object, found a list`},
		{TypePackageRequired, `{"packageName":{},"versionRange":">1"}`, `"packageName" must be a string, found an object`},
	} {
		err := c.Check(tc.typ, []byte(tc.value))
		if err == nil {
			t.Errorf("%s %s: no error", tc.typ, tc.value)
			continue
		}
		pe := ParseError{Idx: 2, Typ: tc.typ, Err: err}
		if got := pe.Explain(); got != tc.want {
			t.Errorf("%s %s: %q, want %q (%v)", tc.typ, tc.value, got, tc.want, err)
		}
	}
	if got := (ParseError{Err: errors.New("other")}).Explain(); got != "" {
		t.Errorf("an error that is no type error explained as %q", got)
	}
}
