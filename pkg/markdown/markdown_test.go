package markdown

import (
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestRender(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the HTML
		not       []string // substrings it must not hold
	}{
		{"empty", "", nil, []string{"<"}},
		{"emphasis and headings", "# Title\n\nSome **bold** and *em* and `code`.",
			[]string{"<h1>Title</h1>", "<strong>bold</strong>", "<em>em</em>", "<code>code</code>"}, nil},
		{"table, aligned", "| a | b |\n|:-|-:|\n| 1 | 2 |",
			[]string{"<table>", `<th align="left">a</th>`, `<td align="right">2</td>`}, []string{"style"}},
		{"fenced code", "```yaml\nkey: <v>\n```", []string{"<pre><code>key: &lt;v&gt;\n</code></pre>"}, []string{"class="}},
		{"strikethrough and autolink", "~~old~~ see https://example.com",
			[]string{"<del>old</del>", `<a href="https://example.com" rel="nofollow noreferrer noopener" target="_blank">https://example.com</a>`}, nil},
		{"a link opens in a new tab, without referrer", "[docs](https://example.com/docs \"The docs\")",
			[]string{`href="https://example.com/docs"`, `title="The docs"`, `target="_blank"`, `noreferrer`}, nil},
		{"mailto", "[mail](mailto:a@example.com)", []string{`href="mailto:a@example.com"`}, nil},
		{"raw HTML is dropped", "<script>alert(1)</script>\n\n<div onclick=\"x()\">hi</div> <b onmouseover=x>b</b>",
			nil, []string{"<script", "onclick", "onmouseover", "<div", "<b>"}},
		{"inline raw HTML", "a <img src=x onerror=alert(1)> b <iframe src=https://evil></iframe>",
			[]string{"a ", " b "}, []string{"<img", "onerror", "<iframe"}},
		{"javascript link", "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](  javascript:alert(1)) <javascript:alert(1)>",
			[]string{"x y z"}, []string{"href", "<a"}},
		{"vbscript and data links", "[x](vbscript:msgbox) [y](data:text/html;base64,PHNjcmlwdD4=)", nil, []string{"href", "vbscript", "data:"}},
		{"entity-encoded javascript", "[x](&#106;avascript:alert(1)) [y](java&#x09;script:alert(1))", nil, []string{"href"}},
		{"relative links lose their target", "[here](#pkg=etcd) [there](/api/v1/all) [up](../x)", []string{"here", "there", "up"}, []string{"href"}},
		{"an image becomes a link to it", "![the logo](https://example.com/logo.png)",
			[]string{`<a href="https://example.com/logo.png"`, ">the logo</a>"}, []string{"<img"}},
		{"a badge: the image's text in the link", "[![build](https://ci/badge.svg)](https://ci/)",
			[]string{`<a href="https://ci/"`, ">build</a>"}, []string{"<img", "badge.svg"}},
		{"an image without alt text", "![](https://example.com/x.png)", []string{">image</a>"}, []string{"<img"}},
		{"a javascript image", "![x](javascript:alert(1))", []string{"x"}, []string{"javascript", "href"}},
		{"attributes in link titles are escaped", `[x](https://e.com "a\" onmouseover=\"alert(1)")`, []string{`title="a&#34; onmouseover=&#34;alert(1)"`}, []string{`" onmouseover="`}},
		{"no heading ids", "# Channels\n## package", []string{"<h1>Channels</h1>"}, []string{"id="}},
		{"html blocks", "<details><summary>x</summary>\n\ny\n\n</details>\n\n<style>body{}</style>", []string{"y"}, []string{"<details", "<style", "<summary"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Render(c.src)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("Render(%q) = %q, want it to hold %q", c.src, got, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(strings.ToLower(got), strings.ToLower(n)) {
					t.Errorf("Render(%q) = %q, holds %q", c.src, got, n)
				}
			}
			checkSafe(t, got)
		})
	}
}

func TestRenderCutsHugeTexts(t *testing.T) {
	line := strings.Repeat("word ", 20) + "\n"
	src := strings.Repeat(line, MaxSize/len(line)+100)
	got := Render(src)
	if n := strings.Count(got, "word"); n > MaxSize/5 || n == 0 {
		t.Errorf("%d words rendered of a %d-byte text", n, len(src))
	}
}

var (
	allowedTags  = regexp.MustCompile(`^(p|br|hr|h[1-6]|ul|ol|li|blockquote|pre|code|em|strong|del|s|table|thead|tbody|tr|th|td|a)$`)
	allowedAttrs = map[string]bool{"href": true, "title": true, "rel": true, "target": true, "align": true, "start": true}
)

// checkSafe parses out as a browser would and checks every element and
// attribute against what the page allows: nothing else may get through,
// whatever the input.
func checkSafe(t *testing.T, out string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !allowedTags.MatchString(tok.Data) {
			t.Fatalf("element <%s> in %q", tok.Data, out)
		}
		for _, a := range tok.Attr {
			if !allowedAttrs[a.Key] {
				t.Fatalf("attribute %s on <%s> in %q", a.Key, tok.Data, out)
			}
			if a.Key == "href" && !regexp.MustCompile(`^(?i)(https?:|mailto:)`).MatchString(a.Val) {
				t.Fatalf("link to %q in %q", a.Val, out)
			}
		}
	}
}

// FuzzRender: whatever the text, the HTML holds only what the page allows.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# t\n\n**b** [l](https://x) ![i](https://y)", "<script>x</script>", "[a](javascript:x)",
		"| a |\n|---|\n| <b onclick=x> |", "<a href=\"javascript:x\">y</a>", "```\n<script>\n```", "[![b](https://i)](https://l)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSafe(t, Render(src))
	})
}
