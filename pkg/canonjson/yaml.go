package canonjson

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v2"
)

// jsonSniffLen is how far upstream looks for a leading '{' to decide that a
// file is a JSON stream rather than YAML (apimachinery's
// NewYAMLOrJSONDecoder buffer size in opm).
const jsonSniffLen = 4096

// IsJSONStream reports whether upstream opm would read src as a stream of
// JSON values: the first non-space character within the first 4096 bytes
// is '{'.
func IsJSONStream(src []byte) bool {
	head := src[:min(len(src), jsonSniffLen)]
	head = bytes.TrimLeftFunc(head, unicode.IsSpace)
	return len(head) > 0 && head[0] == '{'
}

// YAMLDoc is one document of a YAML stream.
type YAMLDoc struct {
	Data   []byte // the document's text, without its separator line
	Line   int    // 1-based line number of the document's first line
	Offset int    // byte offset of the document in the stream
}

// ErrBadSeparator is wrapped by SplitYAML's error for a line that starts
// with "---" but has more than a comment after it.
var ErrBadSeparator = fmt.Errorf("invalid YAML document separator")

// SplitYAML splits a YAML stream into documents the way upstream opm does
// (apimachinery's YAMLReader): a line starting with "---" and followed by
// nothing but spaces or a comment separates documents. A separator that
// follows another one (or the start of the stream) with nothing between
// them opens a document; if the next separator or the end of the stream
// comes before any other line, that document is empty (Data is empty,
// Line is the separator's). Like documents of only blank lines or
// comments, upstream rejects it later, as an object without a schema.
func SplitYAML(src []byte, fn func(YAMLDoc) error) error {
	docStart, docLine := 0, 1
	// opened: the current document began with a separator line. The
	// reader upstream uses keeps a separator that meets an empty buffer as
	// the first line of the next document, so "---" followed by another
	// "---" (or by the end of the file) is an empty document, which upstream
	// decodes into an object without a schema; data is left without it.
	opened, openLine := false, 0
	emit := func(end int) error {
		doc := YAMLDoc{Data: src[docStart:end], Line: docLine, Offset: docStart}
		if len(doc.Data) == 0 {
			doc.Line = openLine // the separator's line, where the empty document is
		}
		return fn(doc)
	}
	line := 1
	for pos := 0; pos < len(src); line++ {
		nl := bytes.IndexByte(src[pos:], '\n')
		next := len(src)
		if nl >= 0 {
			next = pos + nl + 1
		}
		text := src[pos:next]
		if bytes.HasPrefix(text, []byte("---")) {
			rest := strings.TrimSpace(string(text[3:]))
			if rest != "" && rest[0] != '#' {
				return &LineError{Line: line, Err: fmt.Errorf("%w: %q", ErrBadSeparator, string(bytes.TrimRight(text, "\r\n")))}
			}
			if pos > docStart || opened {
				if err := emit(pos); err != nil {
					return err
				}
				opened = false
			} else {
				opened, openLine = true, line
			}
			docStart, docLine = next, line+1
		}
		pos = next
	}
	if len(src) > docStart || opened {
		return emit(len(src))
	}
	return nil
}

// LineError is an error at a 1-based line of the input.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// FromYAML appends the canonical JSON of the YAML document doc: the bytes
// upstream opm holds for it after sigs.k8s.io/yaml's YAMLToJSON (YAML 1.1
// scalars as go-yaml v2 resolves them, map keys turned into strings) and
// its own decode and re-encode.
//
// Upstream reads YAML line by line (apimachinery's LineReader, over
// bufio.Reader.ReadLine) and ends every line it hands on with "\n", the
// last line of a file too: "\r\n" line ends become "\n", and a document
// that ends the file without a line break gets one. The difference shows in
// a block scalar (|, |+, >, >+) on the last line, which keeps that "\n".
func FromYAML(dst, doc []byte) ([]byte, error) {
	if bytes.IndexByte(doc, '\r') >= 0 {
		doc = bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
	}
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		doc = append(doc[:len(doc):len(doc)], '\n')
	}
	if out, err := appendFastYAML(dst, doc); err == nil {
		return out, nil
	}
	return appendSlowYAML(dst, doc)
}

// appendSlowYAML converts doc with go-yaml, for everything the fast path
// leaves alone.
func appendSlowYAML(dst, doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return dst, err
	}
	return AppendGo(dst, v)
}

// AppendGo appends the canonical JSON of a value decoded by go-yaml v2 or
// encoding/json into any.
func AppendGo(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case string:
		return AppendQuoted(dst, t), nil
	case int:
		return AppendFloat(dst, float64(t)), nil
	case int64:
		return AppendFloat(dst, float64(t)), nil
	case uint64:
		return AppendFloat(dst, float64(t)), nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return dst, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(t, 'g', -1, 64))
		}
		return AppendFloat(dst, t), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendGo(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, err := yamlKey(k)
			if err != nil {
				return dst, err
			}
			if prev, dup := m[ks]; dup {
				// Two YAML keys named the same string (for example 1 and
				// "1"): upstream keeps whichever its map iteration visits
				// last. Keep the string-typed key's value, deterministically.
				if _, isStr := k.(string); !isStr {
					e = prev
				}
			}
			m[ks] = e
		}
		return appendMap(dst, m)
	case map[string]any:
		return appendMap(dst, t)
	default:
		return dst, fmt.Errorf("json: unsupported type: %s", reflect.TypeOf(v))
	}
}

func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendQuoted(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = AppendGo(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// yamlKey turns a YAML map key into the JSON object key sigs.k8s.io/yaml
// gives it.
func yamlKey(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		s := strconv.FormatFloat(t, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		if t {
			return "true", nil
		}
		return "false", nil
	default:
		return "", fmt.Errorf("unsupported map key of type: %s, key: %+#v", reflect.TypeOf(k), k)
	}
}
