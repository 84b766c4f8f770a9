package canonjson

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errUnsupported makes FromYAML fall back to go-yaml: the document uses
// YAML the fast path does not handle (or is not valid YAML at all).
var errUnsupported = errors.New("yaml fast path: unsupported construct")

// The fast path reads the block-style YAML that catalogs are written in
// (what opm itself and most tools emit): block mappings and sequences,
// single-line plain and quoted scalars, literal block scalars, empty flow
// collections, comments. Anything else (flow collections, anchors, tags,
// multi-line plain or quoted scalars, folded scalars, unusual keys, tabs)
// returns errUnsupported and go-yaml does the work. Scalars resolve as
// go-yaml v2 resolves them. fast_test.go checks the two agree on every
// real catalog and under fuzzing, and that the fast path never accepts
// what go-yaml rejects.

type yline struct {
	start, end int // the line's bytes, without its newline
	indent     int // leading spaces
}

type fastYAML struct {
	src   []byte
	lines []yline
	i     int // next line to consume
	out   []byte
	keys  []byte
	mem   [][]ymember
	depth int
}

type ymember struct {
	keyOff, keyLen int // decoded key in keys
	valOff, valEnd int // canonical value in out
}

// appendFastYAML appends the canonical JSON of doc, or returns
// errUnsupported.
func appendFastYAML(dst, doc []byte) ([]byte, error) {
	if !plainText(doc) {
		return dst, errUnsupported
	}
	p := fastYAML{src: doc, out: dst}
	if !p.splitLines() {
		return dst, errUnsupported
	}
	p.skipBlank()
	if p.i >= len(p.lines) || p.lines[p.i].indent != 0 || p.isSeqItem(p.lines[p.i]) {
		return dst, errUnsupported
	}
	if err := p.mapping(0); err != nil {
		return dst, err
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return dst, errUnsupported
	}
	return p.out, nil
}

// plainText reports whether doc holds only characters go-yaml reads
// without complaint: printable text, tabs and newlines; no BOM, no lone CR.
func plainText(doc []byte) bool {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		// NEL, LS and PS are line breaks to go-yaml: leave them to it.
		if !(r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) || r == 0xFEFF || r == 0x2028 || r == 0x2029 {
			return false
		}
		i += size
	}
	return true
}

func (p *fastYAML) splitLines() bool {
	src := p.src
	for pos := 0; pos < len(src); {
		nl := bytes.IndexByte(src[pos:], '\n')
		end := len(src)
		next := len(src)
		if nl >= 0 {
			end = pos + nl
			next = end + 1
		}
		ind := 0
		for pos+ind < end && src[pos+ind] == ' ' {
			ind++
		}
		if pos+ind < end && src[pos+ind] == '\t' {
			return false // a tab where indentation could be
		}
		if pos+ind+1 < end && src[pos+ind] == '-' && src[pos+ind+1] == '\t' {
			return false // a sequence entry separated by a tab
		}
		if ind == 0 && end-pos >= 3 && (string(src[pos:pos+3]) == "---" || string(src[pos:pos+3]) == "...") &&
			(end-pos == 3 || src[pos+3] == ' ' || src[pos+3] == '\t') {
			return false // a document marker
		}
		p.lines = append(p.lines, yline{start: pos, end: end, indent: ind})
		pos = next
	}
	return true
}

// content is the line after its indentation.
func (p *fastYAML) content(l yline) []byte { return p.src[l.start+l.indent : l.end] }

func (p *fastYAML) blank(l yline) bool {
	c := bytes.TrimRight(p.content(l), " \t")
	return len(c) == 0 || c[0] == '#'
}

func (p *fastYAML) skipBlank() {
	for p.i < len(p.lines) && p.blank(p.lines[p.i]) {
		p.i++
	}
}

func (p *fastYAML) isSeqItem(l yline) bool {
	c := p.content(l)
	return len(c) > 0 && c[0] == '-' && (len(c) == 1 || c[1] == ' ')
}

// mapping parses the block mapping whose keys are at column indent; the
// current line is its first key. The first key may start mid-line (after a
// sequence dash): col is where it starts.
func (p *fastYAML) mapping(indent int) error {
	return p.mappingAt(indent, -1)
}

func (p *fastYAML) mappingAt(indent, firstCol int) error {
	if p.depth > 200 {
		return errUnsupported
	}
	p.depth++
	defer func() { p.depth-- }()
	for len(p.mem) <= p.depth {
		p.mem = append(p.mem, nil)
	}
	ms := p.mem[p.depth][:0]
	objStart, keysStart := len(p.out), len(p.keys)
	first := true
	for {
		if !first || firstCol < 0 {
			p.skipBlank()
			if p.i >= len(p.lines) {
				break
			}
			l := p.lines[p.i]
			if l.indent < indent {
				break
			}
			if l.indent > indent || p.isSeqItem(l) {
				return errUnsupported // bad indentation, or a sequence where a key belongs
			}
		}
		l := p.lines[p.i]
		col := l.start + l.indent
		if first && firstCol >= 0 {
			col = firstCol
		}
		first = false
		keyOff := len(p.keys)
		rest, err := p.key(col, l.end)
		if err != nil {
			return err
		}
		valOff := len(p.out)
		if err := p.value(indent, rest, l.end, false); err != nil {
			return err
		}
		ms = append(ms, ymember{keyOff: keyOff, keyLen: len(p.keys) - keyOff, valOff: valOff, valEnd: len(p.out)})
	}
	key := func(m ymember) []byte { return p.keys[m.keyOff : m.keyOff+m.keyLen] }
	slices.SortStableFunc(ms, func(a, b ymember) int { return bytes.Compare(key(a), key(b)) })
	var obj []byte
	obj = append(obj, '{')
	n := 0
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(key(m), key(ms[k+1])) {
			continue // the last duplicate wins, as in go-yaml
		}
		if n > 0 {
			obj = append(obj, ',')
		}
		n++
		obj = AppendString(obj, key(m))
		obj = append(obj, ':')
		obj = append(obj, p.out[m.valOff:m.valEnd]...)
	}
	obj = append(obj, '}')
	p.out = append(p.out[:objStart], obj...)
	p.keys = p.keys[:keysStart]
	p.mem[p.depth] = ms[:0]
	return nil
}

// key reads a mapping key at src[col:] up to its ':' and returns where the
// value starts. The key's string goes to p.keys.
func (p *fastYAML) key(col, end int) (int, error) {
	src := p.src
	if col >= end {
		return 0, errUnsupported
	}
	switch src[col] {
	case '"', '\'':
		s, line, next, err := p.quoted(p.i, col, 1<<30)
		if err != nil || line != p.i {
			return 0, errUnsupported
		}
		for next < end && src[next] == ' ' {
			next++
		}
		if next >= end || src[next] != ':' || (next+1 < end && src[next+1] != ' ') || next-col > 1000 {
			return 0, errUnsupported // not a key, or longer than go-yaml allows
		}
		p.keys = append(p.keys, s...)
		return next + 1, nil
	}
	if !plainStart(src[col:end]) {
		return 0, errUnsupported
	}
	// The key ends at the first ": " or at a ':' ending the line.
	i := col
	for {
		j := bytes.IndexByte(src[i:end], ':')
		if j < 0 {
			return 0, errUnsupported // not a key: a scalar where a key belongs
		}
		i += j
		if i+1 == end || src[i+1] == ' ' {
			break
		}
		i++
	}
	k := bytes.TrimRight(src[col:i], " ")
	if bytes.Contains(k, []byte(" #")) || len(k) == 0 {
		return 0, errUnsupported
	}
	if _, kind := resolvePlain(k); kind != plainString || i-col > 1000 || bytes.IndexByte(k, '\t') >= 0 {
		return 0, errUnsupported // a key that is not a plain string (true, 1, ~, <<...)
	}
	p.keys = append(p.keys, k...)
	return i + 1, nil
}

// plainStart reports whether s may start a plain scalar this fast path
// handles.
func plainStart(s []byte) bool {
	switch s[0] {
	case '-', '?', ':':
		return len(s) > 1 && s[1] != ' ' && s[1] != '\t' && s[0] == '-'
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return false
	}
	return true
}

// value parses the value that starts at src[pos:] on the current line (the
// rest of the line after "key:" or "- "), belonging to a node at column
// indent, and consumes the lines it spans. seqItem says the value is a
// sequence item, whose nested blocks must be more indented than indent.
func (p *fastYAML) value(indent, pos, end int, seqItem bool) error {
	src := p.src
	for pos < end && src[pos] == ' ' {
		pos++
	}
	if pos < end && src[pos] == '\t' {
		return errUnsupported
	}
	if pos >= end || src[pos] == '#' {
		if pos < end && pos > 0 && src[pos-1] != ' ' {
			return errUnsupported
		}
		// The value is on the following lines, or null.
		p.i++
		p.skipBlank()
		if p.i < len(p.lines) {
			l := p.lines[p.i]
			switch {
			case l.indent > indent:
				if p.isSeqItem(l) {
					return p.sequence(l.indent)
				}
				return p.mapping(l.indent)
			case l.indent == indent && !seqItem && p.isSeqItem(l):
				return p.sequence(indent)
			}
		}
		p.out = append(p.out, "null"...)
		return nil
	}
	switch c := src[pos]; c {
	case '"', '\'':
		s, line, next, err := p.quoted(p.i, pos, indent)
		if err != nil {
			return err
		}
		if !p.restIsComment(next, p.lines[line].end) {
			return errUnsupported
		}
		p.out = AppendString(p.out, s)
		p.i = line + 1
		return p.noContinuation(indent)
	case '|':
		return p.literal(indent, pos, end)
	case '[', '{':
		t := bytes.TrimRight(src[pos:end], " ")
		if len(t) == 2 && (string(t) == "[]" || string(t) == "{}") {
			p.out = append(p.out, t...)
			p.i++
			return p.noContinuation(indent)
		}
		return errUnsupported
	case '-':
		if pos+1 >= end || src[pos+1] == ' ' || src[pos+1] == '\t' {
			return errUnsupported // a sequence on the key's line, or "- - x"
		}
	}
	if !plainStart(src[pos:end]) {
		return errUnsupported
	}
	// A single-line plain scalar, up to a comment.
	text := src[pos:end]
	commented := false
	if k := bytes.Index(text, []byte(" #")); k >= 0 {
		text, commented = text[:k], true
	}
	text = bytes.TrimRight(text, " \t")
	if !plainLineOK(text) {
		return errUnsupported
	}
	p.i++
	if commented {
		// A comment ends the scalar; a more indented line after it is
		// an error.
		if err := p.appendPlain(text); err != nil {
			return err
		}
		return p.noContinuation(indent)
	}
	// Lines indented more than the node continue the scalar; they fold
	// into one string (a line break is a space, n empty lines are n
	// newlines).
	var folded []byte
	breaks := 0
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		c := bytes.TrimRight(p.content(l), " \t")
		if len(c) == 0 {
			breaks++
			continue
		}
		if l.indent <= indent || c[0] == '#' {
			break
		}
		if !plainLineOK(c) || bytes.Contains(c, []byte(" #")) {
			return errUnsupported
		}
		if folded == nil {
			folded = append(folded, text...)
		}
		if breaks == 0 {
			folded = append(folded, ' ')
		}
		for ; breaks > 0; breaks-- {
			folded = append(folded, '\n')
		}
		folded = append(folded, c...)
		p.i = j + 1
	}
	if folded != nil {
		p.out = AppendString(p.out, folded)
		return p.noContinuation(indent)
	}
	if err := p.appendPlain(text); err != nil {
		return err
	}
	return p.noContinuation(indent)
}

// plainLineOK reports whether a line of a plain scalar is plain text: no
// ": " (a mapping inside a scalar is invalid) and no comment after a tab.
func plainLineOK(text []byte) bool {
	return !bytes.Contains(text, []byte(": ")) && !bytes.Contains(text, []byte(":\t")) && !bytes.HasSuffix(text, []byte(":")) && !bytes.Contains(text, []byte("\t#"))
}

// noContinuation fails when the next content line continues the scalar just
// read (it is more indented than the node): that is a multi-line scalar,
// or invalid.
func (p *fastYAML) noContinuation(indent int) error {
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		if len(bytes.TrimRight(p.content(l), " \t")) == 0 {
			continue // an empty line
		}
		if l.indent > indent {
			return errUnsupported // continuation, or a comment inside it
		}
		return nil
	}
	return nil
}

func (p *fastYAML) restIsComment(pos, end int) bool {
	for pos < end && src(p, pos) == ' ' {
		pos++
	}
	return pos == end || (src(p, pos) == '#' && src(p, pos-1) == ' ')
}

func src(p *fastYAML, i int) byte { return p.src[i] }

// sequence parses the block sequence whose dashes are at column indent;
// the current line is its first item.
func (p *fastYAML) sequence(indent int) error {
	if p.depth > 200 {
		return errUnsupported
	}
	p.depth++
	defer func() { p.depth-- }()
	p.out = append(p.out, '[')
	n := 0
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.indent < indent || (l.indent == indent && !p.isSeqItem(l)) {
			break
		}
		if l.indent > indent || !p.isSeqItem(l) {
			return errUnsupported
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		n++
		dash := l.start + l.indent
		pos := dash + 1
		for pos < l.end && p.src[pos] == ' ' {
			pos++
		}
		// "- key: value" starts a mapping at the key's column.
		if pos < l.end && p.looksLikeKey(pos, l.end) {
			if err := p.mappingAt(pos-l.start, pos); err != nil {
				return err
			}
			continue
		}
		if err := p.value(indent, dash+1, l.end, true); err != nil {
			return err
		}
	}
	p.out = append(p.out, ']')
	return nil
}

// looksLikeKey reports whether src[pos:end] starts with a mapping key.
func (p *fastYAML) looksLikeKey(pos, end int) bool {
	s := p.src[pos:end]
	switch s[0] {
	case '"', '\'':
		q := s[0]
		k := bytes.IndexByte(s[1:], q)
		if k < 0 {
			return false
		}
		rest := bytes.TrimLeft(s[k+2:], " ")
		return len(rest) > 0 && rest[0] == ':' && (len(rest) == 1 || rest[1] == ' ')
	case '#', '|', '>', '[', '{', '&', '*', '!', '-':
		return false
	}
	c := bytes.Index(s, []byte(": "))
	if c < 0 && s[len(s)-1] == ':' {
		c = len(s) - 1
	}
	if c < 0 {
		return false
	}
	// A comment before the colon means it is not a key.
	return !bytes.Contains(s[:c], []byte(" #"))
}

// quoted reads the single- or double-quoted scalar that starts at src[pos]
// on line li, folding it across lines as YAML does (a line break is a
// space, n empty lines are n newlines, an escaped line break is nothing).
// Continuation lines must be indented more than nodeIndent. It returns the
// string and the line and offset just after the closing quote.
func (p *fastYAML) quoted(li, pos, nodeIndent int) (s []byte, endLine, endPos int, err error) {
	src := p.src
	q := src[pos]
	i := pos + 1
	var spaces []byte // blanks inside the current line, kept if text follows
	for line := li; ; {
		end := p.lines[line].end
		escapedBreak := false
	scan:
		for i < end {
			c := src[i]
			switch {
			case c == ' ' || c == '\t':
				spaces = append(spaces, c)
				i++
				continue
			case c == q && q == '\'' && i+1 < end && src[i+1] == '\'':
				s = append(s, spaces...)
				s = append(s, '\'')
				i += 2
			case c == q:
				s = append(s, spaces...)
				return s, line, i + 1, nil
			case c == '\\' && q == '"':
				s = append(s, spaces...)
				if i+1 >= end {
					escapedBreak = true
					break scan
				}
				e := src[i+1]
				i += 2
				switch e {
				case '\\', '"', '\'':
					s = append(s, e)
				case 'N':
					s = utf8.AppendRune(s, 0x85)
				case '_':
					s = utf8.AppendRune(s, 0xA0)
				case 'L':
					s = utf8.AppendRune(s, 0x2028)
				case 'P':
					s = utf8.AppendRune(s, 0x2029)
				case 'n':
					s = append(s, '\n')
				case 't', '\t':
					s = append(s, '\t')
				case 'r':
					s = append(s, '\r')
				case 'b':
					s = append(s, '\b')
				case 'f':
					s = append(s, '\f')
				case '0':
					s = append(s, 0)
				case 'a':
					s = append(s, 7)
				case 'v':
					s = append(s, 11)
				case 'e':
					s = append(s, 0x1b)
				case ' ':
					s = append(s, ' ')
				case 'x', 'u', 'U':
					n := 2
					if e == 'u' {
						n = 4
					} else if e == 'U' {
						n = 8
					}
					if i+n > end {
						return nil, 0, 0, errUnsupported
					}
					v, err := strconv.ParseUint(string(src[i:i+n]), 16, 32)
					if err != nil || v >= 0xD800 && v <= 0xDFFF || v > utf8.MaxRune {
						return nil, 0, 0, errUnsupported
					}
					s = utf8.AppendRune(s, rune(v))
					i += n
				default:
					return nil, 0, 0, errUnsupported
				}
			default:
				s = append(s, spaces...)
				s = append(s, c)
				i++
			}
			spaces = spaces[:0]
		}
		// The line ends inside the scalar: fold it into the next one.
		spaces = spaces[:0]
		breaks := 0
		line++
		for line < len(p.lines) && len(bytes.TrimSpace(src[p.lines[line].start:p.lines[line].end])) == 0 {
			breaks++
			line++
		}
		if line >= len(p.lines) || p.lines[line].indent <= nodeIndent {
			return nil, 0, 0, errUnsupported
		}
		switch {
		case escapedBreak:
		case breaks == 0:
			s = append(s, ' ')
		}
		for ; breaks > 0; breaks-- {
			s = append(s, '\n')
		}
		i = p.lines[line].start + p.lines[line].indent
		for i < p.lines[line].end && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
}

// literal reads a literal block scalar ("|", "|-", "|+") whose header is at
// src[pos:end], for a node at column indent.
func (p *fastYAML) literal(indent, pos, end int) error {
	src := p.src
	chomp := byte(0)
	i := pos + 1
	if i < end && (src[i] == '-' || src[i] == '+') {
		chomp = src[i]
		i++
	}
	if i < end && src[i] != ' ' || !p.restIsComment(i, end) {
		return errUnsupported // an indentation indicator, or text after the header
	}
	p.i++
	allSpaces := func(l yline) bool { return l.indent == l.end-l.start }
	// The content's indentation is that of its first non-empty line.
	contentIndent := -1
	for j := p.i; j < len(p.lines); j++ {
		if l := p.lines[j]; !allSpaces(l) {
			if l.indent > indent {
				contentIndent = l.indent
			}
			break
		}
	}
	if contentIndent < 0 {
		if chomp == '+' {
			return errUnsupported
		}
		p.out = append(p.out, `""`...)
		return nil
	}
	// The block's lines: nil for an empty line, the text after the
	// indentation otherwise (spaces, for an all-space line that has more of
	// them than the indentation). broken[k] says the line ends with a line
	// break (the last line of the input may not).
	var (
		parts  [][]byte
		broken []bool
	)
	seenContent := false
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		empty := allSpaces(l)
		if !empty && l.indent < contentIndent {
			break
		}
		if empty && l.indent <= contentIndent {
			parts = append(parts, nil)
			broken = append(broken, l.end < len(src))
			continue
		}
		if empty && !seenContent {
			return errUnsupported // a leading line with too many spaces
		}
		if bytes.IndexByte(src[l.start:l.start+contentIndent], '\t') >= 0 {
			return errUnsupported
		}
		seenContent = true
		parts = append(parts, src[l.start+contentIndent:l.end])
		broken = append(broken, l.end < len(src))
	}
	last := -1
	for k, part := range parts {
		if part != nil {
			last = k
		}
	}
	var s []byte
	for k := 0; k <= last; k++ {
		if k > 0 {
			s = append(s, '\n')
		}
		s = append(s, parts[k]...)
	}
	switch chomp {
	case '-':
	case '+':
		for k := last; k < len(parts); k++ {
			if broken[k] {
				s = append(s, '\n')
			}
		}
	default:
		if broken[last] {
			s = append(s, '\n')
		}
	}
	p.out = AppendString(p.out, s)
	return nil
}

var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// Kinds of plain scalar.
const (
	plainString = iota
	plainValue
	plainUnsupported
)

// appendPlain resolves a plain scalar as go-yaml v2 does and appends its
// canonical JSON. It fails for values JSON cannot hold.
func (p *fastYAML) appendPlain(text []byte) error {
	v, kind := resolvePlain(text)
	switch kind {
	case plainString:
		p.out = AppendString(p.out, text)
	case plainUnsupported:
		return errUnsupported
	default:
		switch t := v.(type) {
		case nil:
			p.out = append(p.out, "null"...)
		case bool:
			p.out = strconv.AppendBool(p.out, t)
		case float64:
			p.out = AppendFloat(p.out, t)
		}
	}
	return nil
}

// resolvePlain resolves a plain scalar with go-yaml v2's rules: null, bool,
// int or float (as a float64, which is what upstream's JSON round trip
// makes of both), or string. NaN, infinities and the merge key "<<" are
// left to go-yaml.
func resolvePlain(text []byte) (any, int) {
	if len(text) == 0 {
		return nil, plainValue
	}
	switch c := text[0]; {
	case c == '~' || c == 'n' || c == 'N' || c == 'y' || c == 'Y' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' || c == 'O':
		switch string(text) {
		case "~", "null", "Null", "NULL":
			return nil, plainValue
		case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE":
			return true, plainValue
		case "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE":
			return false, plainValue
		}
		return nil, plainString
	case c == '<':
		if string(text) == "<<" {
			return nil, plainUnsupported
		}
		return nil, plainString
	case c == '.':
		switch string(text) {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return nil, plainUnsupported
		}
		if f, err := strconv.ParseFloat(string(text), 64); err == nil {
			return f, plainValue
		}
		return nil, plainString
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		switch string(text) {
		case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
			return nil, plainUnsupported
		}
		plain := strings.ReplaceAll(string(text), "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return float64(i), plainValue
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return float64(u), plainValue
		}
		if yamlStyleFloat.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return f, plainValue
			}
		}
		if strings.HasPrefix(plain, "0b") {
			if i, err := strconv.ParseInt(plain[2:], 2, 64); err == nil {
				return float64(i), plainValue
			}
			if u, err := strconv.ParseUint(plain[2:], 2, 64); err == nil {
				return float64(u), plainValue
			}
		} else if strings.HasPrefix(plain, "-0b") {
			if i, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
				return float64(i), plainValue
			}
		}
		return nil, plainString
	}
	return nil, plainString
}
