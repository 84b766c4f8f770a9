package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// sniffLen is how many leading bytes upstream inspects to tell JSON from
// YAML (registry.decodeFileFS uses yaml.NewYAMLOrJSONDecoder(r, 30)).
const sniffLen = 30

// errNoDocument is returned for a file that holds no YAML document at all.
var errNoDocument = errors.New("no document in file")

// looksLikeJSON reports whether data starts (after white space, within the
// first sniffLen bytes) with '{', as apimachinery's GuessJSONStream does.
func looksLikeJSON(data []byte) bool {
	head := data
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	head = bytes.TrimLeftFunc(head, unicode.IsSpace)
	return len(head) > 0 && head[0] == '{'
}

// readYAMLDoc reads one YAML document from data the way apimachinery's
// YAMLReader does and returns it with the unread rest. Lines are split on
// "\n" ("\r\n" counts as one line end) and each gets a "\n" back. A line
// starting with "---" ends a non-empty document; it may only be followed by
// spaces or a comment. A separator met while nothing has been read yet is
// kept as the first line of the document (so "---\n---\n" yields the
// document "---\n", which decodes to null). At the end of data a non-empty
// buffer is the last document; an empty one is errNoDocument.
func readYAMLDoc(data []byte) (doc, rest []byte, err error) {
	var buf bytes.Buffer
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else {
			line, data = data, nil
		}
		if bytes.HasPrefix(line, []byte("---")) {
			after := strings.TrimSpace(string(line[3:]))
			if after != "" && after[0] != '#' {
				return nil, nil, fmt.Errorf("invalid YAML document separator: %s", after)
			}
			if buf.Len() != 0 {
				return buf.Bytes(), data, nil
			}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if buf.Len() == 0 {
		return nil, nil, errNoDocument
	}
	return buf.Bytes(), nil, nil
}

// decodeFirst decodes the first document of a YAML or JSON file into v with
// upstream's rules: a file whose first bytes look like JSON is read with
// encoding/json's Decoder (extra content after the first value is ignored);
// anything else is read as a YAML stream whose first document is converted
// to JSON by sigs.k8s.io/yaml and then decoded. It reports whether a second
// document follows.
func decodeFirst(data []byte, v any) (more bool, err error) {
	if looksLikeJSON(data) {
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(v); err != nil {
			return false, err
		}
		var next json.RawMessage
		return dec.Decode(&next) == nil, nil
	}
	doc, rest, err := readYAMLDoc(data)
	if err != nil {
		return false, err
	}
	if err := yaml.Unmarshal(doc, v); err != nil {
		return false, err
	}
	next, _, err := readYAMLDoc(rest)
	return err == nil && len(next) > 0, nil
}

// object is a Kubernetes manifest decoded the way apimachinery's
// unstructured.Unstructured decodes it: a JSON object whose integers that fit
// in an int64 are int64 and whose other numbers are float64. It must have a
// string kind.
type object struct {
	m map[string]any
}

// UnmarshalJSON decodes data into o and checks it has a kind.
func (o *object) UnmarshalJSON(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return err
	}
	o.m = m
	if o.kind() == "" {
		return errors.New("object has no kind")
	}
	return nil
}

// kind returns the object's kind, "" when missing or not a string.
func (o *object) kind() string {
	s, _ := o.m["kind"].(string)
	return s
}

// apiVersion returns the object's apiVersion, "" when missing or not a
// string.
func (o *object) apiVersion() string {
	s, _ := o.m["apiVersion"].(string)
	return s
}

// groupVersionKind parses apiVersion like schema.ParseGroupVersion. An
// apiVersion with more than one slash yields the empty result, kind
// included, as Unstructured.GroupVersionKind does.
func (o *object) groupVersionKind() (group, version, kind string) {
	av := o.apiVersion()
	switch strings.Count(av, "/") {
	case 0:
		version = av
	case 1:
		if av != "/" {
			i := strings.IndexByte(av, '/')
			group, version = av[:i], av[i+1:]
		}
	default:
		return "", "", ""
	}
	return group, version, o.kind()
}

// decodeObject decodes a JSON object, keeping integers as int64 when they
// fit and using float64 otherwise (sigs.k8s.io/json's PreserveInts rule).
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("cannot decode %s into an object", canonjson.DescribeValue(v))
	}
	if err := convertNumbers(m); err != nil {
		return nil, err
	}
	return m, nil
}

// convertNumbers replaces every json.Number in v (in place) with an int64
// or a float64.
func convertNumbers(v any) error {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if n, ok := e.(json.Number); ok {
				c, err := convertNumber(n)
				if err != nil {
					return err
				}
				t[k] = c
				continue
			}
			if err := convertNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if n, ok := e.(json.Number); ok {
				c, err := convertNumber(n)
				if err != nil {
					return err
				}
				t[i] = c
				continue
			}
			if err := convertNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func convertNumber(n json.Number) (any, error) {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s does not fit in a float64", s)
	}
	return f, nil
}
