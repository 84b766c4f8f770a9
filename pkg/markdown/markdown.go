// Package markdown renders the Markdown of a catalog (an operator's
// description in its ClusterServiceVersion, a package's description) into
// HTML that is safe to put in a page: CommonMark and GitHub's extensions
// (tables, strikethrough, bare links) by yuin/goldmark with raw
// HTML left out, then an allowlist of elements and attributes by
// microcosm-cc/bluemonday, so that no script, style, event handler, form,
// frame or dangerous URL gets through whatever the text holds.
//
// What a reader gets: paragraphs, headings, lists, emphasis, code, block
// quotes, rules, tables and links to http, https and mailto URLs (which
// open in a new tab, without a referrer). Images become links to the
// image, with its alt text: a page under a strict Content-Security-Policy
// loads no remote image, and an image is no place for a tracker. Raw HTML
// in the text is dropped; relative links (which would point into the page
// that shows the text) keep their text and lose the link.
package markdown

import (
	"bytes"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxSize bounds the text rendered: a longer text is cut there (at a line
// end when there is one), so that one huge description costs a bounded
// time and memory. Real descriptions are under 64 KiB.
const MaxSize = 1 << 20

var (
	once   sync.Once
	md     goldmark.Markdown
	policy *bluemonday.Policy
)

func setup() {
	md = goldmark.New(
		goldmark.WithExtensions(
			extension.Strikethrough, extension.Linkify,
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(imagesAsLinks{}, 100))),
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

// Render returns the HTML of the Markdown text src, sanitized. An empty
// text gives an empty string.
func Render(src string) string {
	if src == "" {
		return ""
	}
	once.Do(setup)
	b := []byte(src)
	if len(b) > MaxSize {
		cut := bytes.LastIndexByte(b[:MaxSize], '\n')
		if cut < MaxSize/2 {
			cut = MaxSize
		}
		b = b[:cut]
	}
	var out bytes.Buffer
	if err := md.Convert(b, &out); err != nil {
		// goldmark's HTML writer fails only when its writer does; a
		// bytes.Buffer does not. Show the text, escaped, rather than
		// nothing.
		out.Reset()
		out.WriteString("<pre>")
		out.Write(util.EscapeHTML(b))
		out.WriteString("</pre>")
	}
	return policy.Sanitize(out.String())
}

// imagesAsLinks replaces every image by a link to it whose text is the
// image's alt text; an image inside a link (a badge) becomes its alt text.
type imagesAsLinks struct{}

func (imagesAsLinks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
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
		var repl ast.Node
		if inLink {
			// The alt text stays, in place of the image.
			for c := img.FirstChild(); c != nil; {
				next := c.NextSibling()
				parent.InsertBefore(parent, img, c)
				c = next
			}
			parent.RemoveChild(parent, img)
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
		repl = link
		parent.ReplaceChild(parent, img, repl)
	}
}
