package property

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode"

	yaml "go.yaml.in/yaml/v2"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// The one reader of olm.bundle.object values, for the model (which checks
// them as upstream's loader reads them), the serve index (which serves
// them) and render --migrate (which rebuilds a bundle's CSV from them).

// CSVKind is the kind of a ClusterServiceVersion manifest.
const CSVKind = "ClusterServiceVersion"

// BundleObjectData appends to dst the manifest that the olm.bundle.object
// value holds inline, and returns it: the value's "data" (the key matched
// as encoding/json matches it, the last one winning) decoded from base64.
// A null value, or one without data, gives an empty manifest. Errors have
// encoding/json's words, as upstream's loader reports them when it decodes
// the value into a property.BundleObject.
func BundleObjectData(dst, value []byte) ([]byte, error) {
	r := canonjson.NewReader(value)
	switch r.Peek() {
	case '{':
	case 'n':
		return dst, nil
	default:
		return dst, fmt.Errorf("json: cannot unmarshal %s into Go value of type property.BundleObject", canonjson.TypeName(value))
	}
	var datas [][]byte // the values of the keys that match "data", in order
	if r.Object() {
		for {
			k, ok := r.Key()
			if !ok {
				break
			}
			if v := r.Skip(); canonjson.KeyFold(k, "data") {
				datas = append(datas, v)
			}
		}
	}
	if len(datas) == 1 && canonjson.Kind(datas[0]) == '"' {
		// The usual case: decode straight into dst.
		raw, _ := canonjson.RawString(datas[0])
		start := len(dst)
		dst = append(dst, make([]byte, base64.StdEncoding.DecodedLen(len(raw)))...)
		n, err := base64.StdEncoding.Decode(dst[start:], raw)
		if err != nil {
			return dst[:start], err
		}
		return dst[:start+n], nil
	}
	// Like encoding/json, every "data" is decoded in turn into the same
	// []byte, the last one is the value, and the first error is the error.
	var (
		cur      []byte
		firstErr error
	)
	for _, v := range datas {
		var err error
		switch canonjson.Kind(v) {
		case '"':
			raw, _ := canonjson.RawString(v)
			b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
			var n int
			if n, err = base64.StdEncoding.Decode(b, raw); err == nil {
				cur = b[:n]
			}
		case 'n':
			cur = nil
		case '[':
			// encoding/json reads a list of numbers into []byte too,
			// reusing the slice it holds.
			cur, err = decodeByteList(cur, v)
		default:
			err = fmt.Errorf("json: cannot unmarshal %s into Go struct field BundleObject.data of type []uint8", canonjson.TypeName(v))
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return dst, firstErr
	}
	return append(dst, cur...), nil
}

// decodeByteList decodes a JSON list of numbers into cur as encoding/json
// decodes it into a []byte that holds cur: elements are written over
// cur's, growing it as append would (within its capacity, the bytes there
// show again), null leaves an element as it was, and anything but an
// integer from 0 to 255 is an error (the first one).
func decodeByteList(cur, v []byte) ([]byte, error) {
	var firstErr error
	i := 0
	canonjson.ForEachElement(v, func(e []byte) bool {
		if i >= cap(cur) {
			cur = append(cur[:len(cur):len(cur)], 0)[:len(cur)]
		}
		if i >= len(cur) {
			cur = cur[:i+1]
		}
		var err error
		switch canonjson.Kind(e) {
		case 'n':
		case '0':
			n, perr := strconv.ParseUint(string(e), 10, 8)
			if perr != nil {
				err = fmt.Errorf("json: cannot unmarshal number %s into Go struct field BundleObject.data of type uint8", e)
			} else {
				cur[i] = byte(n)
			}
		default:
			err = fmt.Errorf("json: cannot unmarshal %s into Go struct field BundleObject.data of type uint8", canonjson.TypeName(e))
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		i++
		return true
	})
	if i < len(cur) {
		cur = cur[:i]
	}
	if cur == nil {
		cur = []byte{}
	}
	return cur, firstErr
}

// ManifestJSON converts a bundle object's manifest to the JSON text
// upstream serves for it (apimachinery's yaml.ToJSON): text that starts
// with '{' is JSON and kept as it is, anything else is read as YAML and
// written as JSON.
func ManifestJSON(data []byte) ([]byte, error) {
	if t := bytes.TrimLeftFunc(data, unicode.IsSpace); len(t) > 0 && t[0] == '{' {
		return data, nil
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return canonjson.AppendGo(nil, v)
}

// IsCSV reports whether a manifest, as ManifestJSON returns it, is a
// ClusterServiceVersion, as upstream picks a bundle's csvJson among its
// objects: the text is one valid JSON value, an object whose top-level
// "kind" (exactly so spelled; the last one when the key repeats) is
// "ClusterServiceVersion". c is scratch space, reused across calls (nil
// allocates one).
func IsCSV(js []byte, c *canonjson.Canonicalizer) bool {
	if !bytes.Contains(js, []byte(CSVKind)) {
		return false
	}
	if c == nil {
		c = new(canonjson.Canonicalizer)
	}
	canon, _, end, err := c.Value(js, 0)
	if err != nil || canon == nil || len(bytes.TrimLeft(js[end:], " \t\r\n")) != 0 {
		return false
	}
	found := false
	canonjson.ForEachMember(canon, func(k, v []byte) bool {
		if string(k) < "kind" {
			return true
		}
		if string(k) == "kind" {
			s, ok := canonjson.String(v)
			found = ok && s == CSVKind
		}
		return false // keys are sorted: "kind" is behind us
	})
	return found
}
