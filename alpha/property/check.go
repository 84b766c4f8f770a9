package property

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// fieldNames holds, lower-cased, the JSON names of every struct field
// reachable from the typed property values: the only keys whose spelling
// can change how encoding/json decodes a value.
var fieldNames = func() map[string]bool {
	names := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			names[strings.ToLower(name)] = true
			walk(f.Type)
		}
	}
	for _, v := range []any{Package{}, PackageRequired{}, GVK{}, GVKRequired{}, Channel{}, CSVMetadata{}} {
		walk(reflect.TypeOf(v))
	}
	return names
}()

// knownField reports whether a raw key might name a struct field: any key
// with non-ASCII text or escapes is kept, since Unicode case folding could
// make it match one.
func knownField(key []byte) bool {
	var lower [64]byte
	if len(key) > len(lower) {
		return true // longer than any field name; keep it, to be safe
	}
	for i, c := range key {
		switch {
		case c >= utf8.RuneSelf || c == '\\':
			return true
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return fieldNames[string(lower[:len(key)])]
}

// Checker checks property values the way Parse decodes them, and remembers
// each verdict by the value's type shape (canonjson.AppendTypeShape): the
// typed property values hold no content-sensitive strings, so two values
// of one shape decode alike. A catalog has few shapes and many values, so
// most checks are a map lookup. Checker is safe for concurrent use; its
// zero value is ready.
type Checker struct {
	memo sync.Map // type + "\x00" + shape → error (nil when it decodes)
	pool sync.Pool
}

// Check reports whether value decodes as a property of type typ, with the
// error Parse would return (without its ParseError wrapping). Types with no
// Go type of their own only need to be JSON, which canonical values are.
func (c *Checker) Check(typ string, value json.RawMessage) error {
	var target func() any
	switch typ {
	case TypePackage:
		target = func() any { return &Package{} }
	case TypePackageRequired:
		target = func() any { return &PackageRequired{} }
	case TypeGVK:
		target = func() any { return &GVK{} }
	case TypeGVKRequired:
		target = func() any { return &GVKRequired{} }
	case TypeChannel:
		target = func() any { return &Channel{} }
	case TypeCSVMetadata:
		target = func() any { return &CSVMetadata{} }
	default:
		if len(value) == 0 {
			return json.Unmarshal(value, &json.RawMessage{})
		}
		return nil
	}
	if len(value) == 0 {
		return json.Unmarshal(value, target())
	}
	buf, _ := c.pool.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	key := append((*buf)[:0], typ...)
	key = append(key, 0)
	key = canonjson.AppendTypeShape(key, value, knownField)
	*buf = key
	if v, ok := c.memo.Load(string(key)); ok {
		c.pool.Put(buf)
		if v == nil {
			return nil
		}
		return v.(error)
	}
	err := json.Unmarshal(value, target())
	if err == nil {
		c.memo.Store(string(key), nil)
	} else {
		c.memo.Store(string(key), err)
	}
	c.pool.Put(buf)
	return err
}
