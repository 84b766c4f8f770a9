// Package markdown renders the Markdown of a catalog (an operator's
// description in its ClusterServiceVersion, a package's description) into
// HTML that is safe to put in a page: CommonMark and GitHub's extensions
// (tables, strikethrough, bare links) by yuin/goldmark with raw
// HTML left out, then an allowlist of elements and attributes by
// microcosm-cc/bluemonday, so that no script, style, event handler, form,
// frame or dangerous URL gets through whatever the text holds.
//
// What a reader gets: paragraphs, headings, lists, emphasis, code, block
// quotes, rules, tables and links to http and https URLs with a host, and
// to mailto URLs (which open in a new tab, without a referrer). Images
// become links to the image, with its alt text: a page under a strict
// Content-Security-Policy loads no remote image, and an image is no place
// for a tracker. Raw HTML in the text is dropped; relative links (which
// would point into the page that shows the text) keep their text and lose
// the link.
//
// The work is bounded whatever the text (limits.go): a text is cut at
// MaxSize, and the constructions that cost goldmark more than linear time
// or memory (deep nesting on one line, unclosed links, padded table cells,
// a reference used many times) are rendered as text past a budget.
package markdown

import (
	"errors"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxSize bounds the text rendered: a longer text is cut there (at a line
// end when there is one), so that one huge description costs a bounded
// time and memory. Real descriptions are under 32 KiB (the largest of
// community-operators-v4.22 is 26 KB).
const MaxSize = 256 << 10

var (
	once   sync.Once
	md     goldmark.Markdown
	policy *bluemonday.Policy
)

func setup() {
	// goldmark's parser with its own block and inline parsers, and in
	// place of its link reference and table transformers the same ones
	// behind a budget (limits.go).
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(), util.Prioritized(linkMeter{}, 150))...),
		parser.WithParagraphTransformers(
			util.Prioritized(budgeted{parser.LinkReferenceParagraphTransformer, referenceCost}, 100),
			util.Prioritized(budgeted{extension.NewTableParagraphTransformer(), tableCost}, 200),
		),
		parser.WithASTTransformers(
			util.Prioritized(extension.NewTableASTTransformer(), 0),
			util.Prioritized(linksChecked{}, 100),
		),
	)
	md = goldmark.New(
		goldmark.WithParser(p),
		goldmark.WithExtensions(extension.Strikethrough, extension.Linkify),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(
			extension.NewTableHTMLRenderer(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)), 500))),
		// No html.WithUnsafe: raw HTML is left out and links to
		// javascript:, vbscript:, file: and data: URLs lose their target.
	)
	policy = newPolicy()
}

// newPolicy is the allowlist the rendered HTML passes through.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
		"ul", "ol", "li", "blockquote", "pre", "code", "em", "strong", "del", "s",
		"table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("align").Matching(bluemonday.CellAlign).OnElements("th", "td")
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("title").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(false)
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}

// Cut returns the part of src that Render renders: src, or when it is
// longer than MaxSize its start, up to the last line end in the second
// half of MaxSize (else MaxSize bytes, less the start of a UTF-8
// character cut in two), and true.
func Cut(src string) (string, bool) {
	if len(src) <= MaxSize {
		return src, false
	}
	if i := strings.LastIndexByte(src[:MaxSize], '\n'); i+1 >= MaxSize/2 {
		return src[:i+1], true
	}
	cut := MaxSize
	for cut > 0 && !utf8.RuneStart(src[cut]) {
		cut--
	}
	return src[:cut], true
}

// slots bounds the texts rendered at once to the processors Go runs on:
// a text of MaxSize can hold tens of MB while it renders (47 MB for the
// worst measured), and a server asked for many at once would hold them
// all.
var slots = make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))

// Render returns the HTML of the Markdown text src (its part Cut keeps),
// sanitized. An empty text gives an empty string. At most GOMAXPROCS texts
// are rendered at once; a call waits for its turn (each takes well under a
// second).
func Render(src string) string {
	if src == "" {
		return ""
	}
	slots <- struct{}{}
	defer func() { <-slots }()
	return render(src, bounds)
}

func render(src string, lim limits) string {
	src, _ = Cut(src)
	if src == "" {
		return ""
	}
	once.Do(setup)
	b := limitNesting([]byte(src), lim.nesting)
	out := &cappedWriter{max: lim.output}
	pc := parser.NewContext()
	pc.Set(budgetKey, newBudget(lim, len(b)))
	if err := md.Convert(b, out, parser.WithContext(pc)); err != nil && !errors.Is(err, errOutputFull) {
		// goldmark's HTML writer fails only when its writer does, and
		// ours only when it is full. Show the text, escaped, rather
		// than nothing.
		out.buf.Reset()
		out.buf.WriteString("<pre>")
		out.buf.Write(util.EscapeHTML(b))
		out.buf.WriteString("</pre>")
	}
	return policy.Sanitize(out.buf.String())
}

// linksChecked makes every image a link to it whose text is the image's
// alt text (an image inside a link, a badge, becomes its alt text), and
// then leaves only the text of a link whose URL is not an absolute http or
// https URL with a host, or a mailto URL (allowedURL), or that is past the
// budget of link bytes (a reference used many times).
type linksChecked struct{}

func (linksChecked) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	source := reader.Source()
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		parent := img.Parent()
		if parent == nil {
			continue
		}
		inLink := false
		for p := parent; p != nil; p = p.Parent() {
			if _, ok := p.(*ast.Link); ok {
				inLink = true
				break
			}
			if _, ok := p.(*ast.AutoLink); ok {
				inLink = true
				break
			}
		}
		if inLink {
			// The alt text stays, in place of the image.
			unwrap(img)
			continue
		}
		link := ast.NewLink()
		link.Destination, link.Title = img.Destination, img.Title
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			link.AppendChild(link, c)
			c = next
		}
		if !link.HasChildren() {
			link.AppendChild(link, ast.NewString([]byte("image")))
		}
		parent.ReplaceChild(parent, img, link)
	}

	bud := budgetOf(pc)
	var refused []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			size := len(n.Destination) + len(n.Title)
			if !allowedURL(n.Destination) || size > bud.linkBytes {
				refused = append(refused, n)
			} else {
				bud.linkBytes -= size
			}
		case *ast.AutoLink:
			if n.AutoLinkType != ast.AutoLinkEmail && !allowedURL(n.URL(source)) {
				refused = append(refused, n)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, n := range refused {
		if a, ok := n.(*ast.AutoLink); ok {
			a.Parent().ReplaceChild(a.Parent(), a, ast.NewString(a.Label(source)))
			continue
		}
		unwrap(n)
	}
}

// unwrap puts n's children in its place.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// allowedURL says whether a link's destination, as goldmark writes it in
// the page (escaped), may be a link's target (LinkURL).
func allowedURL(dest []byte) bool { return LinkURL(string(util.URLEscape(dest, true))) }

// LinkURL says whether u may be the target of a link in a page, as the
// links Render keeps: an absolute http or https URL with a host, or a
// mailto URL with an address. Not a script (javascript:, vbscript:,
// data:), nor a URL relative to the page that shows it ("https:x" and
// "http:/x" are relative to a page of the same scheme), nor a string that
// does not parse as a URL (spaces in the host, control characters).
func LinkURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https":
		return p.Host != "" && p.Opaque == ""
	case "mailto":
		return p.Opaque != ""
	}
	return false
}
