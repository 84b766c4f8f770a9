package markdown

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// renderCase is a Markdown text and what its HTML must and must not hold.
type renderCase struct {
	name, src string
	want      []string // substrings of the HTML
	not       []string // substrings it must not hold (in any case)
}

// runRenderCases renders each case and checks it, and that it is safe.
func runRenderCases(t *testing.T, cases []renderCase) {
	t.Helper()
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

func TestRender(t *testing.T) {
	cases := []renderCase{
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
	runRenderCases(t, cases)
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
		"[a](https:x) <javascript:x> [b][r]\n\n[r]: jav&#x09;ascript:x", strings.Repeat("> - 1. ", 8) + "x", "|a|b|c|\n|-|:-:|-|\nx\n",
		"[x]: https://e\n\n[x][x] [x] [a](", "- - - - - - - - - - - - - - - - - - - -",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSafe(t, Render(src))
	})
}

// TestRenderHostile: what a hostile description tries, to get a script,
// a script URL or a link into the page itself through: none gets through.
func TestRenderHostile(t *testing.T) {
	cases := []renderCase{
		{"entities and controls in the scheme", "[a](jav&#x09;ascript:alert(1)) [b](&#x6A;avascript:alert(1)) [c](javascript&colon;alert(1)) [d](java%0ascript:alert(1)) [e](\x01javascript:alert(1)) [f](java\x00script:alert(1)) [g](<javascript:alert(1)>)",
			[]string{"a b c d e f g"}, []string{"href", "<a"}},
		{"autolinks of other schemes", "<javascript:alert(1)> <JAVASCRIPT:alert(1)> <vbscript:msgbox(1)> <data:text/html,x> <file:///etc/passwd>",
			[]string{"javascript:alert(1)", "vbscript:msgbox(1)"}, []string{"href", "<a"}},
		{"bare link text with a scheme", "javascript:alert(1) and www.example.com/javascript:alert(1)",
			[]string{"javascript:alert(1) and ", `href="http://www.example.com/javascript:alert(1)"`}, nil},
		{"reference links", "[a][r] [b][s] [c]\n\n[r]: javascript:alert(1)\n[s]: <jav&#x09;ascript:alert(1)>\n[c]: data:text/html;base64,PHNjcmlwdD4=",
			[]string{"a b c"}, []string{"href", "<a"}},
		{"reference images", "![a][r] ![b](data:image/png;base64,AAAA)\n\n[r]: data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=",
			[]string{"a b"}, []string{"href", "<a", "<img"}},
		{"SVG and MathML", "<svg><script>alert(1)</script></svg> <svg onload=alert(1)> <math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
			nil, []string{"<svg", "<script", "onload", "<math", "xlink", "javascript"}},
		{"scheme-relative and schemeless", "[a](//evil.example/x) [b](https:evil.example) [c](http:/evil) [d](https://) [e](mailto:)",
			[]string{"a b c d e"}, []string{"href", "<a"}},
		{"other schemes", "[a](ftp://x.example/) [b](file:///etc/passwd) [c](intent://x#Intent;end) [d](ws://x.example)",
			[]string{"a b c d"}, []string{"href", "<a"}},
		{"quotes in a URL stay in it", `[x](https://a.example/"><script>alert(1)</script>) https://b.example/<script>alert(1)</script>`,
			[]string{`href="https://a.example/%22%3E%3Cscript%3Ealert(1)%3C/script%3E"`, `href="https://b.example/"`}, []string{"<script"}},
		{"an image's title cannot leave its attribute", `![x](https://a.example/i.png "t\" onerror=\"alert(1)") ![y](https://a.example/" onerror="alert(1))`,
			[]string{`title="t&#34; onerror=&#34;alert(1)"`}, []string{`" onerror="`, "<img"}},
		{"comments, CDATA, processing instructions", "<!-- <script>alert(1)</script> -->\n\n<![CDATA[<script>alert(2)</script>]]>\n\n<?php alert(3) ?>",
			nil, []string{"<script", "<!--", "CDATA", "<?"}},
		{"a table of hostile cells", "| <script>alert(1)</script> | b |\n|---|---|\n| [x](javascript:y) | ![i](javascript:z) |",
			[]string{"<td>x</td>", "<td>i</td>"}, []string{"<script", "javascript"}},
		{"a badge linking to a script", "[![a](javascript:1)](javascript:2)", []string{"a"}, []string{"href", "javascript"}},
		{"mailto is kept, escaped", "[a](mailto:x@example.com?body=<script>) b@example.com",
			[]string{`href="mailto:x@example.com?body=%3Cscript%3E"`, `href="mailto:b@example.com"`}, []string{"<script"}},
		{"uppercase schemes and spaces", "[a](  HTTPS://EXAMPLE.COM  )", []string{`href="https://EXAMPLE.COM"`}, nil},
	}
	runRenderCases(t, cases)
}

// rep is u repeated to n bytes.
func rep(u string, n int) string { return strings.Repeat(u, n/len(u)+1)[:n] }

// TestRenderBounded: texts of MaxSize that take goldmark more than linear
// time or memory (see limits.go; unbounded, the first takes minutes and
// the table gigabytes) meet a bound, which the HTML shows: the link after
// them is text, the nesting stops, the table is a paragraph, the
// references stop being links. A real link before the budget is spent
// stays a link.
func TestRenderBounded(t *testing.T) {
	const link = "[ok](https://ok.example/)"
	linkAfter := func(html string) bool { return strings.Contains(html, `href="https://ok.example/"`) }
	cases := []struct {
		name  string
		src   string
		check func(t *testing.T, html string)
	}{
		{"unclosed links on one line", link + " " + rep("[a](", MaxSize-200) + "\n\n" + link, func(t *testing.T, html string) {
			if strings.Count(html, `href="https://ok.example/"`) != 1 {
				t.Errorf("the link before the budget is spent: %d links, want 1", strings.Count(html, `href="https://ok.example/"`))
			}
		}},
		{"unclosed images on one line", rep("![a](", MaxSize-100) + "\n\n" + link, func(t *testing.T, html string) {
			if linkAfter(html) {
				t.Error("a link after the budget is spent")
			}
		}},
		{"unclosed links with <", rep("[a](<", MaxSize-100) + "\n\n" + link, func(t *testing.T, html string) {
			if linkAfter(html) {
				t.Error("a link after the budget is spent")
			}
		}},
		{"unclosed links on many lines", rep("[a](\n", MaxSize-100) + "\n\n" + link, func(t *testing.T, html string) {
			if linkAfter(html) {
				t.Error("a link after the budget is spent")
			}
		}},
		{"reference definitions", rep("[a]: b\n", MaxSize-100) + "\n" + link, func(t *testing.T, html string) {
			if !strings.Contains(html, "[a]: b") {
				t.Error("the definitions past the budget are not text")
			}
		}},
		{"quotes nested on one line", rep("> ", MaxSize-1) + "x", func(t *testing.T, html string) {
			if n := strings.Count(html, "<blockquote>"); n != bounds.nesting {
				t.Errorf("%d quotes nested, want %d", n, bounds.nesting)
			}
		}},
		{"lists nested on one line", rep("1. - ", MaxSize-1) + "x", func(t *testing.T, html string) {
			if n := strings.Count(html, "<li>"); n != bounds.nesting {
				t.Errorf("%d list items nested, want %d", n, bounds.nesting)
			}
		}},
		{"a table padded with empty cells", "|" + rep("a|", MaxSize/4) + "\n|" + rep("-|", MaxSize/4) + "\n" + rep("x\n", MaxSize/2-8), func(t *testing.T, html string) {
			if n := strings.Count(html, "<td"); n > bounds.cells {
				t.Errorf("%d cells, want at most %d", n, bounds.cells)
			}
		}},
		{"tables padded with empty cells", rep("|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|\n|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|\n"+rep("x\n", 800)+"\n", MaxSize), func(t *testing.T, html string) {
			if n := strings.Count(html, "<td"); n > bounds.cells {
				t.Errorf("%d cells, want at most %d", n, bounds.cells)
			}
		}},
		{"a long reference used many times", "[x]: https://x.example/" + rep("x", MaxSize/4) + "\n\n" + rep("[x]", MaxSize/2), func(t *testing.T, html string) {
			if n := strings.Count(html, "<a "); n == 0 || n > 8 {
				t.Errorf("%d links, want a few", n)
			}
		}},
		{"brackets", rep("[", MaxSize/2) + rep("]", MaxSize/2-1), nil},
		{"emphasis", rep("*a _a ", MaxSize), nil},
		{"bare links", rep("www.a.example ", MaxSize), func(t *testing.T, html string) {
			if len(html) > bounds.output {
				t.Errorf("%d bytes of HTML, more than %d", len(html), bounds.output)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.src) > MaxSize {
				t.Fatalf("the text is %d bytes, more than MaxSize", len(c.src))
			}
			// A hang guard only: these take well under a second.
			done := make(chan string, 1)
			go func() { done <- Render(c.src) }()
			var html string
			select {
			case html = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("still rendering after 2 minutes")
			}
			if len(html) > bounds.output {
				t.Errorf("%d bytes of HTML, more than %d", len(html), bounds.output)
			}
			if c.check != nil {
				c.check(t, html)
			}
			checkSafe(t, html)
		})
	}
}

// TestRenderReal: real descriptions (testdata/real) come nowhere near a
// bound: the same HTML with and without them.
func TestRenderReal(t *testing.T) {
	files, err := filepath.Glob("testdata/real/*.md")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata/real/*.md", err)
	}
	unbounded := limits{nesting: 1 << 30, work: 1 << 60, cells: 1 << 60, linkBytes: 1 << 60, output: 1 << 60}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, want := Render(string(src)), render(string(src), unbounded)
		if got != want {
			t.Errorf("%s: the bounds change the HTML", f)
		}
		if len(got) < len(src)/2 {
			t.Errorf("%s: %d bytes of HTML for %d of Markdown", f, len(got), len(src))
		}
		checkSafe(t, got)
	}
}

func TestCut(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	for _, c := range []struct {
		src      string
		want     int
		wantsCut bool
	}{
		{"", 0, false},
		{strings.Repeat("x", MaxSize), MaxSize, false},
		{strings.Repeat(line, MaxSize/100+1), MaxSize / 100 * 100, true},
		// No line end in the second half: cut at MaxSize, before a
		// character's continuation bytes.
		{strings.Repeat("x", MaxSize-1) + "é", MaxSize - 1, true},
		{strings.Repeat("x", MaxSize-2) + "€", MaxSize - 2, true},
	} {
		got, cut := Cut(c.src)
		if len(got) != c.want || cut != c.wantsCut || got != c.src[:len(got)] || !utf8.ValidString(got) {
			t.Errorf("Cut of %d bytes: %d bytes, cut %v; want %d, %v", len(c.src), len(got), cut, c.want, c.wantsCut)
		}
	}
}

func TestLinkURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.com": true, "HTTP://EXAMPLE.COM/x?y#z": true, "mailto:a@example.com": true, "https://[::1]:8443/": true,
		"": false, "javascript:alert(1)": false, "JavaScript:alert(1)": false, " javascript:alert(1)": false, "java\tscript:alert(1)": false,
		"vbscript:x": false, "data:text/html,x": false, "file:///etc/passwd": false, "ftp://example.com": false,
		"//example.com": false, "https:example.com": false, "http:/example.com": false, "https://": false, "mailto:": false,
		"/api/v1/all": false, "#pkg=x": false, "example.com": false, "https://exa mple.com": false, "https://example.com\x00": false, "https://example.com/\n": false,
	} {
		if got := LinkURL(u); got != want {
			t.Errorf("LinkURL(%q) = %v, want %v", u, got, want)
		}
	}
}
