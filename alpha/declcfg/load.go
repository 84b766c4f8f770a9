package declcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// Blob is one object of a catalog file, as the loader hands it to a
// WalkFunc.
type Blob struct {
	Meta

	// Path is the file's slash-separated path relative to the catalog root.
	Path string
	// File is the index of the file in walk order and Index the position of
	// the blob in its file: together they give upstream's sequential order.
	File, Index int
	// Line and Col locate the blob's first byte in the file (1-based).
	Line, Col int
	// Offset is the byte offset of the blob in the file. When Verbatim is
	// true, JSON is exactly the file's bytes [Offset, Offset+len(JSON)),
	// so a consumer may drop it and read it back from the file later.
	Offset   int
	Verbatim bool
	// Text is the blob as the file writes it: the JSON value's bytes, or
	// the YAML document's (without its separator line). It starts at Line
	// and Col; Locate finds a field's position in it.
	Text []byte
	// fromYAML: Text is a YAML document.
	fromYAML bool
}

// Pos formats the blob's position as path:line:col.
func (b *Blob) Pos() string { return fmt.Sprintf("%s:%d:%d", b.Path, b.Line, b.Col) }

// WalkFunc receives each blob of a catalog. It is called from several
// goroutines at once; the Blob and its bytes are only valid during the call.
// Returning an error stops the walk.
type WalkFunc func(b *Blob) error

// Error is a problem with a catalog file or blob, located by file, line and
// column (0 when unknown).
type Error struct {
	Path      string
	Line, Col int
	Err       error

	// hint adds the advice to list the file in an .indexignore: the
	// file may not be catalog data at all (a README, a binary). It is
	// dropped for a file with catalog blobs.
	hint bool
}

func (e *Error) Error() string {
	hint := ""
	if e.hint {
		hint = notCatalogHint
	}
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %v%s", e.Path, e.Line, e.Col, e.Err, hint)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %v%s", e.Path, e.Line, e.Err, hint)
	default:
		return fmt.Sprintf("%s: %v%s", e.Path, e.Err, hint)
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem a walk found, in file order.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap gives errors.Is and errors.As access to every problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// ErrNotCatalog marks files that are not JSON or YAML catalog text at all.
var ErrNotCatalog = errors.New("not a catalog file")

const notCatalogHint = "; if this file is not part of the catalog, list it in an .indexignore file"

// Walk reads every catalog file under root (honouring .indexignore files),
// in parallel, and calls fn for each blob. Files are read once; blob bytes
// are canonical JSON, aliasing the file's bytes when they already are.
//
// Walk does not stop at the first bad file: it returns every file and blob
// problem it found as Errors (in file order), after fn has seen every good
// blob. An error returned by fn, or a cancelled context, stops the walk and
// is returned as is.
func Walk(ctx context.Context, root fs.FS, fn WalkFunc, opts ...WalkOption) error {
	if root == nil {
		return errors.New("no declarative config filesystem provided")
	}
	o := newWalkOptions(opts)
	listed, errs := ListFiles(root, opts...)
	files := listed.Catalog

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu      sync.Mutex
		next    int
		wg      sync.WaitGroup
		perErr  = make([]Errors, len(files))
		perWarn = make([]Errors, len(files))
		todo    = make([]int, 0, len(files)) // the files to parse
	)
	for i, f := range files {
		if o.parsed != nil {
			if problems, warnings, ok := o.parsed(f, i); ok {
				perErr[i], perWarn[i] = problems, warnings
				continue
			}
		}
		todo = append(todo, i)
	}
	for w := 0; w < min(o.concurrency, max(len(todo), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := parser{maxSize: o.maxFileSize}
			// A cancelled walk stops between blobs, not only between files.
			each := func(b *Blob) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return fn(b)
			}
			for {
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= len(todo) || ctx.Err() != nil {
					return
				}
				i := todo[t]
				fileErrs, err := p.parseFile(root, files[i].Path, i, each)
				if err != nil {
					cancel(err)
					return
				}
				perErr[i], perWarn[i] = fileErrs, p.warnings
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if o.warn != nil {
		for _, ws := range perWarn {
			for _, w := range ws {
				o.warn(w)
			}
		}
	}
	for _, fe := range perErr {
		errs = append(errs, fe...)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
		return errs
	}
	return nil
}

// ParseFile parses one catalog file whose content src the caller read
// (src is ParseFile's to modify until it returns), exactly as Walk parses
// the file name of index file: it calls fn for each blob, from the calling
// goroutine, and returns the file's problems and the warnings of
// WithWarnings, which Walk would have reported. With WithParsed, a caller
// can parse files as they arrive, before the whole tree is there, and
// have Walk take the result. The options used are WithMaxFileSize (a
// larger src is ErrTooLarge) and WithWarnings (whether warnings are
// wanted).
func ParseFile(name string, src []byte, file int, fn WalkFunc, opts ...WalkOption) (problems, warnings Errors, err error) {
	o := newWalkOptions(opts)
	if o.maxFileSize >= 0 && int64(len(src)) > o.maxFileSize {
		return Errors{{Path: name, Err: tooLarge(int64(len(src)), o.maxFileSize)}}, nil, nil
	}
	p := parser{maxSize: o.maxFileSize}
	problems, err = p.parseBlobs(name, src, file, fn)
	p.dropHints(problems)
	if o.warn == nil {
		p.warnings = nil
	}
	return problems, p.warnings, err
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// parser is one worker's reusable state.
type parser struct {
	maxSize int64 // the largest file read; < 0: no limit
	buf     []byte
	canon   canonjson.Canonicalizer
	yaml    []byte
	blob    Blob
	// warnings are the last file's (WithWarnings).
	warnings Errors
}

// readFile reads the whole file into the worker's buffer.
func (p *parser) readFile(root fs.FS, name string) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if st, err := f.Stat(); err == nil {
		// Checked again: the file may have been replaced since it was
		// listed.
		if err := fileProblem(st, p.maxSize, ""); err != nil {
			return nil, err
		}
		size = int(st.Size())
	}
	if cap(p.buf) < size+1 {
		p.buf = make([]byte, 0, size+512)
	}
	buf := p.buf[:0]
	for {
		if p.maxSize >= 0 && int64(len(buf)) > p.maxSize {
			// It grew since it was listed (or its size was not known).
			p.buf = buf[:0]
			return nil, tooLarge(-1, p.maxSize)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	p.buf = buf
	return buf, nil
}

// parseFile reads one file and hands its blobs to fn. Problems with the
// file's content are returned as Errors; err is fn's error.
func (p *parser) parseFile(root fs.FS, name string, fileIdx int, fn WalkFunc) (Errors, error) {
	p.warnings = nil
	p.blob.Index = 0
	var (
		errs Errors
		err  error
	)
	src, rerr := p.readFile(root, name)
	switch {
	case errors.Is(rerr, ErrTooLarge), errors.Is(rerr, ErrNotRegular):
		errs = Errors{{Path: name, Err: rerr}}
	case rerr != nil:
		errs = Errors{{Path: name, Err: fmt.Errorf("cannot read: %w", unwrapPathError(rerr))}}
	default:
		errs, err = p.parseBlobs(name, src, fileIdx, fn)
	}
	p.dropHints(errs)
	return errs, err
}

// dropHints drops the advice to list the file in an .indexignore from the
// file's problems once it is known to hold catalog blobs.
func (p *parser) dropHints(errs Errors) {
	if p.blob.Index > 0 {
		// The file holds catalog blobs: it is catalog data whatever is
		// wrong in it, so listing it in an .indexignore is no advice.
		for _, e := range errs {
			e.hint = false
		}
	}
}

// parseBlobs parses the content src of the file name (src is the parser's
// to modify).
func (p *parser) parseBlobs(name string, src []byte, fileIdx int, fn WalkFunc) (Errors, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return Errors{{Path: name, Err: fmt.Errorf("%w: the file is empty", ErrNotCatalog), hint: true}}, nil
	}
	if allNUL(src) {
		// What a write that never completed leaves behind. Upstream
		// reads such a file as empty when its size is a multiple of
		// 4096 bytes (its line reader drops a last unterminated line of
		// that length) and refuses it otherwise; an empty file is
		// refused here.
		return Errors{{Path: name, Err: fmt.Errorf("%w: the file holds only NUL bytes (%d), as a file whose writing never completed does", ErrNotCatalog, len(src)), hint: true}}, nil
	}
	if err := NotUTF8(src); err != nil {
		// Upstream's YAML splitter finds no separator in UTF-16: it reads
		// the first object only, silently dropping the rest.
		return Errors{{Path: name, Line: 1, Col: 1, Err: fmt.Errorf("%w: %w", ErrNotCatalog, err)}}, nil
	}
	if bytes.HasPrefix(src, utf8BOM) && canonjson.IsJSONStream(src[len(utf8BOM):]) {
		// A byte order mark before a JSON stream: upstream takes the file
		// for YAML and reads its first object only, silently dropping
		// the rest. Read it as the JSON stream it is. (The buffer is
		// ours; blanks keep every offset in the file.)
		copy(src, "   ")
		defer func() {
			if p.blob.Index > 1 {
				p.warnings = append(p.warnings, &Error{Path: name, Line: 1, Err: fmt.Errorf(
					"the file starts with a UTF-8 byte order mark and holds a JSON stream of %d objects: opm reads them all, but upstream opm and catalogd read only the first; remove the byte order mark", p.blob.Index)})
			}
		}()
	}
	lc := lineCounter{src: src, line: 1}
	var errs Errors
	// emit hands a blob to fn; a blob that is not a catalog object (no
	// schema, not an object, ...) is returned as badBlob instead.
	emit := func(off int, verbatim bool, canon, text []byte, fromYAML bool, line, col int) (badBlob *Error, err error) {
		b := &p.blob
		*b = Blob{Path: name, File: fileIdx, Index: b.Index, Line: line, Col: col, Offset: off, Verbatim: verbatim, Text: text, fromYAML: fromYAML}
		b.JSON = canon
		if err := extractMeta(&b.Meta); err != nil {
			hint := errors.Is(err, ErrNotCatalog) || errors.Is(err, errNoSchema) && !hasBlobKey(canon)
			return &Error{Path: name, Line: line, Col: col, Err: err, hint: hint}, nil
		}
		b.Index++
		return nil, fn(b)
	}

	// Upstream's decoder (apimachinery's YAMLOrJSONDecoder) reads a file
	// that starts with '{' as a JSON stream. When a value does not decode
	// (it does not parse, or is no catalog object) and at most one has, the
	// stream is still ambiguous: it reads the rest as YAML from the end of
	// the last good value (after the whitespace up to the first newline),
	// and if the first YAML document fails too, the JSON error is the one
	// reported.
	yamlFrom := 0
	var jsonErr *Error
	if canonjson.IsJSONStream(src) {
		pos, count := 0, 0
		for {
			canon, start, end, err := p.canon.Value(src, pos)
			if err != nil {
				var se *canonjson.SyntaxError
				off := end
				if errors.As(err, &se) {
					off = se.Offset
				}
				line, col := lc.at(off)
				jsonErr = &Error{Path: name, Line: line, Col: col, Err: fmt.Errorf("invalid JSON: %w", err)}
				if count > 1 {
					return append(errs, jsonErr), nil
				}
				yamlFrom = skipSpaceLine(src, pos)
				break
			}
			if canon == nil {
				return errs, nil
			}
			line, col := lc.at(start)
			verbatim := end-start == len(canon) && len(canon) > 0 && &canon[0] == &src[start]
			bad, err := emit(start, verbatim, canon, src[start:end], false, line, col)
			if err != nil {
				return errs, err
			}
			if bad != nil {
				if from := skipSpaceLine(src, pos); count <= 1 && p.yamlDecodes(src[from:]) {
					jsonErr, yamlFrom = bad, from
					break
				}
				// Upstream stops at this error; the rest is still JSON, so
				// its problems are reported too.
				errs = append(errs, bad)
			} else {
				count++
			}
			pos = end
		}
	}
	rest := src[yamlFrom:]
	baseLine, _ := lc.at(yamlFrom)

	first := true
	// fail records the error of a YAML document; the first one after a
	// JSON error stands for it.
	fail := func(e *Error) {
		if first && jsonErr != nil {
			e = jsonErr
		}
		errs = append(errs, e)
	}
	var fnErr error
	splitErr := canonjson.SplitYAML(rest, func(doc canonjson.YAMLDoc) error {
		doc.Line += baseLine - 1
		doc.Offset += yamlFrom
		defer func() { first = false }()
		if bad := firstBinary(doc.Data); bad >= 0 {
			// A file that is not text at all: one error for it, not one
			// per "document". (Upstream's YAML parser refuses the same
			// bytes; separator lines never reach it, so they may hold
			// anything after a '#'.)
			line, col := lc.at(doc.Offset + bad)
			fail(&Error{Path: name, Line: line, Col: col, Err: fmt.Errorf("%w: binary data (byte 0x%02x) in a file that is neither JSON nor YAML text", ErrNotCatalog, src[doc.Offset+bad]), hint: true})
			return errBinary
		}
		if isBlank(doc.Data) {
			errs = append(errs, &Error{Path: name, Line: doc.Line, Err: errors.New("empty YAML document (only blank lines or comments between separators): every document must be an object with a schema")})
			return nil
		}
		var err error
		p.yaml, err = canonjson.FromYAML(p.yaml[:0], doc.Data)
		if err != nil {
			fail(yamlError(name, doc, err))
			return nil
		}
		bad, err := emit(doc.Offset, false, p.yaml, doc.Data, true, doc.Line, 1)
		if err != nil {
			fnErr = err
			return err
		}
		if bad != nil {
			fail(bad)
		}
		return nil
	})
	if fnErr != nil {
		return errs, fnErr
	}
	if splitErr != nil && !errors.Is(splitErr, errBinary) {
		var le *canonjson.LineError
		e := &Error{Path: name, Err: splitErr}
		if errors.As(splitErr, &le) {
			e.Line, e.Err = le.Line+baseLine-1, le.Err
		}
		fail(e)
	}
	return errs, nil
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark some
// editors put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// NotUTF8 refuses text that starts with a UTF-16 or UTF-32 byte order
// mark (what Windows PowerShell 5 writes with Out-File or ">"), naming
// the encoding: catalogs and the configurations read with them are UTF-8
// text. It returns nil for anything else.
func NotUTF8(src []byte) error {
	var enc string
	switch {
	case bytes.HasPrefix(src, []byte{0xff, 0xfe, 0, 0}):
		enc = "UTF-32LE"
	case bytes.HasPrefix(src, []byte{0, 0, 0xfe, 0xff}):
		enc = "UTF-32BE"
	case bytes.HasPrefix(src, []byte{0xff, 0xfe}):
		enc = "UTF-16LE"
	case bytes.HasPrefix(src, []byte{0xfe, 0xff}):
		enc = "UTF-16BE"
	default:
		return nil
	}
	return fmt.Errorf("%s text (the file starts with a %s byte order mark): opm reads configurations and catalogs as UTF-8; save it as UTF-8", enc, enc)
}

// errBinary stops the split of a file that holds binary data.
var errBinary = errors.New("binary data")

// errFirstDoc stops yamlDecodes' split after the first document.
var errFirstDoc = errors.New("first document")

// yamlDecodes reports whether the first YAML document of src decodes into
// a catalog object (or is empty, which upstream decodes into one without a
// schema): whether upstream's decoder, falling back to YAML there, gets
// past it rather than report the JSON error.
func (p *parser) yamlDecodes(src []byte) bool {
	ok := false
	_ = canonjson.SplitYAML(src, func(doc canonjson.YAMLDoc) error {
		if isBlank(doc.Data) {
			ok = true
			return errFirstDoc
		}
		js, err := canonjson.FromYAML(nil, doc.Data)
		if err == nil {
			m := Meta{JSON: js}
			ok = extractMeta(&m) == nil
		}
		return errFirstDoc
	})
	return ok
}

// skipSpaceLine returns the offset after the white space at src[pos:], up
// to and including the first newline.
func skipSpaceLine(src []byte, pos int) int {
	for pos < len(src) {
		r, size := utf8.DecodeRune(src[pos:])
		if !unicode.IsSpace(r) {
			break
		}
		pos += size
		if r == '\n' {
			break
		}
	}
	return pos
}

func isBlank(doc []byte) bool {
	for len(doc) > 0 {
		nl := bytes.IndexByte(doc, '\n')
		line := doc
		if nl >= 0 {
			line, doc = doc[:nl], doc[nl+1:]
		} else {
			doc = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// firstBinary returns the offset of the first NUL byte or invalid UTF-8 in
// src, or -1. YAML text can hold neither.
func firstBinary(src []byte) int {
	if i := bytes.IndexByte(src, 0); i >= 0 {
		return i
	}
	if utf8.Valid(src) {
		return -1
	}
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlParserProblems are the problems go-yaml's parser (not its scanner)
// reports, in v2 (sigs.k8s.io/yaml) and v3 alike. It numbers their lines
// from 0 while it numbers the scanner's from 1 (decode.go, parser.fail):
// the line it gives for them is the one before the error's.
var yamlParserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// YAMLErrorLine is the line (from 1) of data that go-yaml's error err
// for it names, corrected where go-yaml counts from 0, and the message
// without "yaml: line N: " (or "yaml: "). The line is 0 when the message
// names none.
func YAMLErrorLine(data []byte, err error) (line int, msg string) {
	msg = err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, strings.TrimPrefix(msg, "yaml: ")
	}
	msg = strings.TrimPrefix(msg, m[0])
	n, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return 0, msg
	}
	if slices.Contains(yamlParserProblems, msg) {
		// At most the data's last line: the end of the stream is the
		// line after it.
		n = min(n+1, max(bytes.Count(data, []byte{'\n'})+boolInt(!bytes.HasSuffix(data, []byte{'\n'})), 1))
	}
	return n, msg
}

// yamlError turns a go-yaml error into an Error at the file's line.
func yamlError(name string, doc canonjson.YAMLDoc, err error) *Error {
	n, msg := YAMLErrorLine(doc.Data, err)
	e := &Error{Path: name, Line: doc.Line}
	if n > 0 {
		e.Line = doc.Line + n - 1
	}
	e.Err = fmt.Errorf("invalid YAML: %s", msg)
	if !strings.HasPrefix(msg, "unmarshal errors") && !strings.Contains(msg, "cannot unmarshal") {
		e.hint = !meantAsBlob(doc.Data)
	}
	return e
}

// meantAsBlob reports whether a YAML document that does not parse reads as
// a catalog blob all the same: a line starts with a "schema:" key, and
// every line that starts at the left margin is a key, a list item or a
// comment (prose, a README, has lines of other words there).
func meantAsBlob(doc []byte) bool {
	schema := false
	for len(doc) > 0 {
		line := doc
		if nl := bytes.IndexByte(doc, '\n'); nl >= 0 {
			line, doc = doc[:nl], doc[nl+1:]
		} else {
			doc = nil
		}
		line = bytes.TrimRight(line, " \t\r")
		switch {
		case len(line) == 0 || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' && (len(line) == 1 || line[1] == ' '):
		case yamlKeyRE.Match(line):
			if schemaKeyRE.Match(line) {
				schema = true
			}
		default:
			return false
		}
	}
	return schema
}

var (
	yamlKeyRE   = regexp.MustCompile(`^("[^"]*"|'[^']*'|[^\s#:"'][^:]*?)\s*:(\s|$)`)
	schemaKeyRE = regexp.MustCompile(`^(?i)["']?schema["']?\s*:`)
)

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// allNUL reports whether src is made of NUL bytes only.
func allNUL(src []byte) bool {
	if len(src) == 0 || src[0] != 0 {
		return false
	}
	for _, c := range src {
		if c != 0 {
			return false
		}
	}
	return true
}

// lineCounter turns increasing byte offsets into line and column numbers
// without rescanning the file.
type lineCounter struct {
	src  []byte
	off  int // offset of the start of line
	line int
}

func (lc *lineCounter) at(off int) (line, col int) {
	if off < lc.off {
		lc.off, lc.line = 0, 1
	}
	off = min(off, len(lc.src))
	for {
		nl := bytes.IndexByte(lc.src[lc.off:off], '\n')
		if nl < 0 {
			break
		}
		lc.off += nl + 1
		lc.line++
	}
	return lc.line, utf8.RuneCount(lc.src[lc.off:off]) + 1
}

// extractMeta reads schema, package and name from the canonical blob m.JSON,
// matching keys case-insensitively (Unicode case folding) as upstream does;
// two keys that fold to the same string are an error.
func extractMeta(m *Meta) error {
	if canonjson.Kind(m.JSON) != '{' {
		t := canonjson.TypeName(m.JSON)
		return fmt.Errorf("%w: expected an object with a schema, found %s %s", ErrNotCatalog, article(t), t)
	}
	needFold := false
	canonjson.ForEachMember(m.JSON, func(key, _ []byte) bool {
		for _, c := range key {
			if c >= utf8.RuneSelf || c == '\\' || (c >= 'A' && c <= 'Z') {
				needFold = true
				return false
			}
		}
		return true
	})
	var byFold map[string][]string
	if needFold {
		byFold = map[string][]string{}
	}
	var err error
	canonjson.ForEachMember(m.JSON, func(key, val []byte) bool {
		f := string(key)
		if needFold {
			name, _ := canonjson.Key(key)
			f = cases.Fold().String(name) // a Caser is not safe for concurrent use
			byFold[f] = append(byFold[f], name)
		}
		var dst *string
		switch f {
		case "schema":
			dst = &m.Schema
		case "package":
			dst = &m.Package
		case "name":
			dst = &m.Name
		default:
			return true
		}
		s, ok := canonjson.String(val)
		if !ok {
			name, _ := canonjson.Key(key)
			err = fmt.Errorf("the value of %q must be a string, found %s", name, canonjson.TypeName(val))
			return false
		}
		*dst = s
		return true
	})
	if err != nil {
		return err
	}
	var dups []string
	for f, keys := range byFold {
		if len(keys) > 1 {
			sort.Strings(keys)
			dups = append(dups, fmt.Sprintf("duplicate keys for key %q: [%s]", f, strings.Join(keys, " ")))
		}
	}
	if len(dups) > 0 {
		sort.Strings(dups)
		return errors.New(strings.Join(dups, "; "))
	}
	if m.Schema == "" {
		return errNoSchema
	}
	return nil
}

// errNoSchema is extractMeta's error for an object without a schema.
var errNoSchema = errors.New(`the object has no "schema" key (or it is empty): every catalog blob needs a schema`)

// blobKeys are keys of catalog blobs: an object without a schema but with
// one of them is a blob that lost its schema, not another kind of file.
var blobKeys = []string{"package", "name", "defaultChannel", "entries", "image", "properties", "relatedImages"}

// hasBlobKey reports whether the canonical object has one of blobKeys.
func hasBlobKey(obj []byte) bool {
	found := false
	canonjson.ForEachMember(obj, func(k, _ []byte) bool {
		for _, b := range blobKeys {
			if canonjson.KeyFold(k, b) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

func article(word string) string {
	if strings.IndexByte("aeiou", word[0]) >= 0 {
		return "an"
	}
	return "a"
}

// metaKeyToRename reports whether the raw key k spells schema, package or
// name other than in lower case.
func metaKeyToRename(k []byte) bool {
	switch string(k) {
	case "schema", "package", "name":
		return false
	}
	return canonjson.KeyFold(k, "schema") || canonjson.KeyFold(k, "package") || canonjson.KeyFold(k, "name")
}

// NormalizeMetaKeys returns the blob with its schema, package and name keys
// spelled in lower case (upstream matches them case-insensitively, the CUE
// schema does not). It returns blob itself when nothing needs renaming.
func NormalizeMetaKeys(blob []byte) []byte {
	needed := false
	canonjson.ForEachMember(blob, func(k, _ []byte) bool {
		needed = metaKeyToRename(k)
		return !needed
	})
	if !needed {
		return blob
	}
	type member struct{ key, val []byte }
	var (
		members []member
		renamed bool
	)
	canonjson.ForEachMember(blob, func(k, v []byte) bool {
		key := k
		if string(k) != "schema" && string(k) != "package" && string(k) != "name" {
			for _, meta := range []string{"schema", "package", "name"} {
				if canonjson.KeyFold(k, meta) {
					key, renamed = []byte(meta), true
				}
			}
		}
		members = append(members, member{key, v})
		return true
	})
	if !renamed {
		return blob
	}
	sort.SliceStable(members, func(i, j int) bool { return bytes.Compare(members[i].key, members[j].key) < 0 })
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, m.key...)
		out = append(out, '"', ':')
		out = append(out, m.val...)
	}
	return append(out, '}')
}
