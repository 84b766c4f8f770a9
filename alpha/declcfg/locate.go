package declcfg

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// PathStep is one step of a path into a blob: an object key, or a list
// index when IsIndex is set.
type PathStep struct {
	Key     string
	Index   int
	IsIndex bool
}

// Locate returns the position in the file of the value at path in the
// blob: the line and column of its key for an object member, of the
// element for a list index. When the text does not hold the whole path (a
// field that is missing), it returns the position of the deepest part it
// holds, the object where the field belongs. It reads the blob's text
// again, so it is for reporting a problem, not for every blob. The Blob
// must still be valid (inside the WalkFunc).
func (b *Blob) Locate(path []PathStep) (line, col int) {
	if len(path) == 0 || len(b.Text) == 0 {
		return b.Line, b.Col
	}
	if !b.fromYAML {
		if off, ok := locateJSON(b.Text, path); ok {
			return b.textPos(off)
		}
		return b.Line, b.Col
	}
	// Only the top-level field the path starts in is parsed, when the
	// document is in block style (a bundle's other fields may be
	// megabytes of base64); the whole document otherwise.
	text, first := b.Text, b.Line
	if off, end, ok := topLevelField(b.Text, path[0].Key); ok {
		text, first = b.Text[off:end], b.Line+bytes.Count(b.Text[:off], []byte{'\n'})
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		if len(text) == len(b.Text) || yaml.Unmarshal(b.Text, &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			return b.Line, b.Col
		}
		first = b.Line
	}
	n := doc.Content[0]
	line, col = b.Line, b.Col
	for depth, step := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next, at *yaml.Node
		switch {
		case step.IsIndex && n.Kind == yaml.SequenceNode:
			if step.Index < len(n.Content) {
				next, at = n.Content[step.Index], n.Content[step.Index]
			}
		case !step.IsIndex && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if keyMatches(n.Content[i].Value, step.Key, depth) {
					next, at = n.Content[i+1], n.Content[i]
				}
			}
		}
		if next == nil {
			break
		}
		line, col = first+at.Line-1, at.Column
		n = next
	}
	return line, col
}

// topLevelField returns the lines of a block-style YAML document that hold
// its top-level field key: from the line that starts with the key to the
// next line that starts, at the left margin, with another key. ok is false
// when no line starts with the key (flow style, a quoted key, another
// case).
func topLevelField(doc []byte, key string) (off, end int, ok bool) {
	off = -1
	for pos := 0; pos < len(doc); {
		next := len(doc)
		if nl := bytes.IndexByte(doc[pos:], '\n'); nl >= 0 {
			next = pos + nl + 1
		}
		line := doc[pos:next]
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '-' && line[0] != '\n' && line[0] != '\r' {
			if off >= 0 {
				return off, pos, true
			}
			if rest, found := bytes.CutPrefix(line, []byte(key)); found && len(rest) > 0 && rest[0] == ':' {
				off = pos
			}
		}
		pos = next
	}
	return off, len(doc), off >= 0
}

// textPos turns an offset in b.Text into a position in the file.
func (b *Blob) textPos(off int) (line, col int) {
	before := b.Text[:off]
	nl := bytes.LastIndexByte(before, '\n')
	if nl < 0 {
		return b.Line, b.Col + utf8.RuneCount(before)
	}
	return b.Line + bytes.Count(before, []byte{'\n'}), utf8.RuneCount(before[nl+1:]) + 1
}

// keyMatches reports whether a key of the blob's text is the path's key.
// The blob's schema, package and name keys match in any case at the top
// level, as upstream reads them (NormalizeMetaKeys).
func keyMatches(key, want string, depth int) bool {
	if key == want {
		return true
	}
	return depth == 0 && (want == "schema" || want == "package" || want == "name") && strings.EqualFold(key, want)
}

// locateJSON returns the offset in the JSON text of the member key or list
// element at the end of path, or of the deepest part of the path the text
// holds; ok is false when the text is not JSON as far as it was read.
func locateJSON(text []byte, path []PathStep) (off int, ok bool) {
	i := jsonSpace(text, 0)
	off = i
	for depth, step := range path {
		if i >= len(text) {
			return off, false
		}
		found := -1
		switch {
		case step.IsIndex && text[i] == '[':
			i = jsonSpace(text, i+1)
			for n := 0; i < len(text) && text[i] != ']'; n++ {
				if n == step.Index {
					found = i
					break
				}
				var good bool
				if i, good = skipJSON(text, i); !good {
					return off, false
				}
				i = jsonSpace(text, i)
				if i < len(text) && text[i] == ',' {
					i = jsonSpace(text, i+1)
				}
			}
			if found >= 0 {
				off = found
			}
		case !step.IsIndex && text[i] == '{':
			i = jsonSpace(text, i+1)
			for i < len(text) && text[i] == '"' {
				keyStart := i
				end, good := skipJSON(text, i)
				if !good {
					return off, false
				}
				var key string
				if json.Unmarshal(text[i:end], &key) != nil {
					return off, false
				}
				i = jsonSpace(text, end)
				if i >= len(text) || text[i] != ':' {
					return off, false
				}
				i = jsonSpace(text, i+1)
				if keyMatches(key, step.Key, depth) {
					found, off = i, keyStart
					break
				}
				if i, good = skipJSON(text, i); !good {
					return off, false
				}
				i = jsonSpace(text, i)
				if i < len(text) && text[i] == ',' {
					i = jsonSpace(text, i+1)
				}
			}
		}
		if found < 0 {
			return off, true
		}
		i = found
	}
	return off, true
}

func jsonSpace(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// skipJSON returns the offset just past the JSON value at text[i].
func skipJSON(text []byte, i int) (int, bool) {
	if i >= len(text) {
		return i, false
	}
	switch text[i] {
	case '"':
		for j := i + 1; j < len(text); j++ {
			switch text[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return len(text), false
	case '{', '[':
		depth := 0
		for j := i; j < len(text); j++ {
			switch text[j] {
			case '"':
				end, ok := skipJSON(text, j)
				if !ok {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(text), false
	}
	j := i
	for j < len(text) && !strings.ContainsRune(",]} \t\r\n", rune(text[j])) {
		j++
	}
	return j, j > i
}
