package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fastopm/fastopm/internal/testutil"
)

// oracle is upstream's definition of canonical: decode into any, encode with
// HTML escaping off.
func oracle(src []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	return testutil.CanonicalJSON(v)
}

func TestCanonicalizeMatchesEncodingJSON(t *testing.T) {
	cases := []struct {
		name string
		in   string
		same bool // already canonical: returned without copying
	}{
		{"empty object", `{}`, true},
		{"sorted", `{"a":1,"b":[true,false,null],"c":"x"}`, true},
		{"unsorted keys", `{"b":1,"a":2}`, false},
		{"whitespace", "{ \"a\" : [ 1 , 2 ] }\n", false},
		{"duplicate keys last wins", `{"a":1,"a":2,"b":3}`, false},
		{"escaped slash", `{"a":"x\/y"}`, false},
		{"unicode escape of letter", `{"a":"\u0041"}`, false},
		{"canonical control escape", `{"a":"\u001f\n\t\"\\"}`, true},
		{"uppercase hex control", `{"a":"\u001F"}`, false},
		{"backspace as u escape", `{"a":"\u0008"}`, false},
		{"html chars", `{"a":"<b>&amp;</b>"}`, true},
		{"html escaped", `{"a":"\u003cb\u003e"}`, false},
		{"line separator raw", "{\"a\":\"x\u2028y\"}", false},
		{"line separator escaped", `{"a":"x\u2028y"}`, true},
		{"non-ascii raw", `{"a":"héllo 日本"}`, true},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, false},
		{"lone surrogate", `{"a":"\ud83d x"}`, false},
		{"invalid utf8", "{\"a\":\"\xff\xfe\"}", false},
		{"float", `{"a":1.5}`, true},
		{"float trailing zero", `{"a":1.0}`, false},
		{"exponent", `{"a":1e3}`, false},
		{"big exponent", `{"a":1e21}`, false},
		{"canonical exponent", `{"a":1e+21}`, true},
		{"small", `{"a":0.000001}`, true},
		{"smaller", `{"a":1e-7}`, true},
		{"negative zero", `{"a":-0}`, true},
		{"big int", `{"a":12345678901234567890}`, false},
		{"15 digits", `{"a":123456789012345}`, true},
		{"16 digits exact", `{"a":1234567890123456}`, true},
		{"17 digits", `{"a":12345678901234567}`, false},
		{"nested unsorted", `{"z":{"b":1,"a":{"d":[{"y":1,"x":2}],"c":2}},"a":0}`, false},
		{"key with escape", `{"a\"b":1,"a":2}`, false},
		{"array top", `[1,"x",{"b":1,"a":2}]`, false},
		{"string top", `"x"`, true},
		{"escaped key order", `{"\u0062":1,"a":2}`, false},
		{"key order by bytes", `{"B":1,"_":3,"a":2}`, true},
		{"non-ascii keys", `{"é":1,"z":2}`, false},
		{"nul escape", `{"a":"\u0000"}`, true},
		{"del raw", "{\"a\":\"\x7f\"}", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := oracle([]byte(tc.in))
			if err != nil {
				t.Fatalf("oracle: %v", err)
			}
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			_, ok, err := check([]byte(tc.in), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.same {
				t.Fatalf("canonical = %v, want %v", ok, tc.same)
			}
		})
	}
}

func TestCanonicalizeErrors(t *testing.T) {
	cases := []struct {
		in      string
		offset  int
		message string
	}{
		{`{"a":}`, 5, "invalid character '}' looking for beginning of value"},
		{`{"a" 1}`, 5, "invalid character '1' after object key"},
		{`{"a":1 "b":2}`, 7, "invalid character '\"' after object key:value pair"},
		{`{a:1}`, 1, "invalid character 'a' looking for beginning of object key string"},
		{`{"a":"x`, 7, "unexpected end of JSON input"},
		{"{\"a\":\"x\ny\"}", 7, `invalid character '\n' in string literal`},
		{`{"a":"\q"}`, 7, `invalid character 'q' in string escape code`},
		{`{"a":"\u12g4"}`, 10, `invalid character 'g' in \u hexadecimal character escape`},
		{`{"a":tru}`, 8, "invalid character '}' in literal true (expecting 'e')"},
		{`{"a":01}`, 6, "invalid character '1' after object key:value pair"},
		{`{"a":1.}`, 7, "invalid character '}' after decimal point in numeric literal"},
		{`{"a":1e999}`, 5, "json: cannot unmarshal number 1e999 into Go value of type float64"},
		{`{"a":[1,2}`, 9, "invalid character '}' after array element"},
		{`{"a":1} x`, 8, "invalid character 'x' after top-level value"},
		{``, 0, "unexpected end of JSON input"},
		{`{"a":-}`, 6, "invalid character '}' in numeric literal"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Canonicalize([]byte(tc.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *SyntaxError", err)
			}
			if se.Offset != tc.offset || se.Msg != tc.message {
				t.Fatalf("got offset %d %q, want offset %d %q", se.Offset, se.Msg, tc.offset, tc.message)
			}
			if _, oerr := oracle([]byte(tc.in)); oerr == nil {
				t.Fatalf("encoding/json accepts %q", tc.in)
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Canonicalize([]byte(deep)); err == nil {
		t.Fatal("accepted nesting beyond MaxDepth")
	}
	ok := strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500)
	got, err := Canonicalize([]byte(ok))
	if err != nil || string(got) != ok {
		t.Fatalf("got %v", err)
	}
}

func TestValueStream(t *testing.T) {
	src := []byte("{\"b\":1,\"a\":2}\n  {\"a\":1}\n\n")
	var c Canonicalizer
	var got []string
	pos := 0
	for {
		canon, _, end, err := c.Value(src, pos)
		if err != nil {
			t.Fatal(err)
		}
		if canon == nil {
			break
		}
		got = append(got, string(canon))
		pos = end
	}
	want := []string{`{"a":2,"b":1}`, `{"a":1}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "\x00\x01\x1f\b\f\n\r\t", "<>&", "\u2028\u2029", "\xff", "a\xc3", "日本語", "\x7f"} {
		want, _ := json.Marshal(s)
		// json.Marshal escapes HTML; undo that the way upstream's re-encode does.
		var back string
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(back)
		wantCanon := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendQuoted(nil, s); !bytes.Equal(got, wantCanon) {
			t.Errorf("AppendQuoted(%q) = %s, want %s", s, got, wantCanon)
		}
	}
}

func TestReaders(t *testing.T) {
	obj := []byte(`{"a":"x\"}y","b":{"c":[1,{"d":"]"}]},"c":-1.5e-7,"d":[],"e":"\\"}`)
	var keys []string
	var vals []string
	ForEachMember(obj, func(k, v []byte) bool {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return true
	})
	if strings.Join(keys, ",") != "a,b,c,d,e" {
		t.Fatalf("keys %q", keys)
	}
	if vals[0] != `"x\"}y"` || vals[1] != `{"c":[1,{"d":"]"}]}` || vals[2] != "-1.5e-7" || vals[3] != "[]" || vals[4] != `"\\"` {
		t.Fatalf("vals %q", vals)
	}
	s, ok := String([]byte(vals[0]))
	if !ok || s != `x"}y` {
		t.Fatalf("String = %q %v", s, ok)
	}
	var elems []string
	ForEachElement([]byte(`[1,"a",{"b":[2]},[]]`), func(v []byte) bool { elems = append(elems, string(v)); return true })
	if strings.Join(elems, "|") != `1|"a"|{"b":[2]}|[]` {
		t.Fatalf("elems %q", elems)
	}
	if !KeyFold([]byte("Schema"), "schema") || KeyFold([]byte("schemas"), "schema") || !KeyFold([]byte("ſchema"), "schema") {
		t.Fatal("KeyFold")
	}
}

func TestAppendIndentMatchesEncoder(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[],"c":{},"d":[1,{"e":"x,y:z"}],"f":{"g":null}}`,
		`[]`, `{}`, `"s"`, `[[[]],{}]`, `{"a":"\"}"}`,
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "    ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(json.RawMessage(in)); err != nil {
			t.Fatal(err)
		}
		got := AppendIndent(nil, []byte(in), "    ", 0)
		got = append(got, '\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("AppendIndent(%s)\n got %s\nwant %s", in, got, want.Bytes())
		}
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{}`, `{"b":1,"a":[1.0,"\u0041",null]}`, `{"a":"\ud800"}`, "[1e400]", `{"a":{"a":{"b":1}}}`, "\"\xff\"", `{"a":0.1e-6}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, oerr := oracle(in)
		got, err := Canonicalize(in)
		if (err != nil) != (oerr != nil) {
			t.Fatalf("Canonicalize err=%v, encoding/json err=%v, input %q", err, oerr, in)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("input %q\n got %s\nwant %s", in, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("invalid UTF-8 output for %q", in)
		}
		// Canonical output is a fixed point and recognised without copying.
		if _, ok, err := check(got, 0, 0); err != nil || !ok {
			t.Fatalf("output %q not recognised as canonical (err %v)", got, err)
		}
		// The readers and indenter accept canonical input.
		_ = AppendIndent(nil, got, "  ", 0)
		ForEachMember(got, func(k, v []byte) bool { return true })
	})
}
