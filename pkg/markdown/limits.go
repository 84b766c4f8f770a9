package markdown

import (
	"bytes"
	"errors"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// goldmark takes more than linear time or memory on some texts (as most
// Markdown parsers do; none in Go promises linear time). Measured on
// goldmark v1.8.7, each doubling of the text making the time four times
// longer, a 128 KiB text took:
//
//   - "[a](" repeated on one line: 8 s (each "](" looks for the end of its
//     link to the end of the line), "![a](", "[a](<", "[](" alike;
//   - "[a](" repeated on lines of one paragraph: 0.4 s (each "]" reads the
//     paragraph's lines again), "]([" alike; "[a]: b" reference
//     definitions, one a line: 0.4 s;
//   - ">" or "1. " repeated on one line (nested quotes and lists): 0.4 s
//     and 27 times its size in HTML;
//   - a table whose header has many columns followed by many short rows:
//     goldmark fills every row up with empty cells (16 KiB made 84 MB of
//     HTML and allocated 2 GB);
//   - a link reference definition with a long URL used many times: 32 KiB
//     made 45 MB of HTML.
//
// Render bounds each (bounds, below), so that any text of MaxSize renders
// in well under a second and a few MiB, and a real description (none
// comes near a bound) renders as it would without them:
//
//   - limitNesting: a line opens at most 16 quotes and list items, the
//     markers past them are text;
//   - linkMeter: every "]" is charged what goldmark's link parser may read
//     for it (the rest of its paragraph and its number of lines); once 16 Mi
//     is spent a "]" is text, so no more links are made;
//   - budgeted: a paragraph starting with "[" is charged the square of its
//     lines for its link reference definitions (from the same 16 Mi), a
//     table its cells (columns times rows; 100,000 in all); past that, the
//     paragraph stays a paragraph;
//   - linksChecked: the URLs and titles of the links made cannot add up to
//     more than the text's size and 64 KiB (a reference used many times),
//     the links past that are text;
//   - cappedWriter: the HTML is cut at 4 MiB.

// limits are the bounds of one text.
type limits struct {
	// nesting bounds the block quotes and list items one line opens.
	nesting int
	// work is the work (bytes and lines read) allowed to the link parser
	// and the link reference definitions.
	work int
	// cells bounds the table cells of a text.
	cells int
	// linkBytes is what the URLs and titles of links may add up to beyond
	// the text's size.
	linkBytes int
	// output bounds the HTML, before sanitizing.
	output int
}

// bounds are Render's limits.
var bounds = limits{nesting: 16, work: 16 << 20, cells: 100_000, linkBytes: 64 << 10, output: 4 << 20}

var budgetKey = parser.NewContextKey()

// budget is what is left of the work allowed to one text.
type budget struct {
	work      int // limits.work
	cells     int // limits.cells
	linkBytes int // the text's size and limits.linkBytes

	// The paragraph (or other block) whose lines linkMeter last looked
	// at, and for each of its lines the bytes from that line to the
	// block's end.
	block ast.Node
	rest  []int
}

func newBudget(lim limits, size int) *budget {
	return &budget{work: lim.work, cells: lim.cells, linkBytes: size + lim.linkBytes}
}

func budgetOf(pc parser.Context) *budget {
	if b, ok := pc.Get(budgetKey).(*budget); ok {
		return b
	}
	b := newBudget(bounds, MaxSize)
	pc.Set(budgetKey, b)
	return b
}

// spend takes cost from the work left, or says there is not that much.
func (b *budget) spend(cost int) bool {
	if cost > b.work {
		return false
	}
	b.work -= cost
	return true
}

// restOf returns, for each line of block, the bytes from it to the end of
// the block, computed once per block.
func (b *budget) restOf(block ast.Node) []int {
	if b.block == block {
		return b.rest
	}
	lines := block.Lines()
	n := lines.Len()
	b.block = block
	b.rest = append(b.rest[:0], make([]int, n+1)...)
	for i := n - 1; i >= 0; i-- {
		s := lines.At(i)
		b.rest[i] = b.rest[i+1] + s.Len()
	}
	return b.rest
}

// linkMeter runs before goldmark's link parser on every "]": it charges
// the budget the most that parser may read for it (the rest of the block,
// for a link's destination and title, and the block's lines, which it
// reads again for a shortcut reference), and once that is spent makes the
// "]" text, so that the link parser does not see it.
type linkMeter struct{}

func (linkMeter) Trigger() []byte { return []byte{']'} }

func (linkMeter) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) == 0 || line[0] != ']' {
		return nil
	}
	b := budgetOf(pc)
	l, _ := block.Position()
	rest := b.restOf(parent)
	cost := len(line) + len(rest)
	if l+1 < len(rest) {
		cost += rest[l+1]
	}
	if b.spend(cost) {
		return nil
	}
	block.Advance(1)
	return ast.NewTextSegment(text.NewSegment(seg.Start, seg.Start+1))
}

// budgeted is one of goldmark's paragraph transformers, run only when the
// budget has what cost says it may take of it for the paragraph's lines.
type budgeted struct {
	parser.ParagraphTransformer
	cost func(lines *text.Segments, source []byte, b *budget) bool
}

func (t budgeted) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if node.Lines().Len() > 0 && t.cost(node.Lines(), reader.Source(), budgetOf(pc)) {
		t.ParagraphTransformer.Transform(node, reader, pc)
	}
}

// referenceCost charges link reference definitions: goldmark reads the
// paragraph's lines again for each one it finds, so a paragraph that
// starts with "[" costs the square of its lines.
func referenceCost(lines *text.Segments, source []byte, b *budget) bool {
	first := lines.At(0)
	if l := bytes.TrimLeft(first.Value(source), " \t"); len(l) == 0 || l[0] != '[' {
		return true // no definition: nothing read but its first line
	}
	return b.spend(lines.Len() * lines.Len())
}

// tableCost charges a table its cells: the columns of its delimiter row
// times its rows, however few cells each row has (goldmark adds the
// missing ones).
func tableCost(lines *text.Segments, source []byte, b *budget) bool {
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		row := seg.Value(source)
		if !delimiterRow(row) {
			continue
		}
		cells := columns(row) * (lines.Len() - i + 1)
		if cells > b.cells {
			return false
		}
		b.cells -= cells
		return true
	}
	return true // not a table
}

// columns counts the columns of a delimiter row as goldmark does: the
// parts between its "|", but a blank first and last.
func columns(row []byte) int {
	n := bytes.Count(row, []byte("|")) + 1
	if t := bytes.TrimSpace(row); len(t) > 0 && t[0] == '|' {
		n--
	}
	if t := bytes.TrimSpace(row); len(t) > 1 && t[len(t)-1] == '|' {
		n--
	}
	return max(n, 1)
}

// delimiterRow says whether a line can be a table's delimiter row: only
// "|", "-", ":" and spaces, and not only "-".
func delimiterRow(line []byte) bool {
	dashesOnly := true
	for _, c := range line {
		switch c {
		case '-':
		case '|', ':', ' ', '\t', '\r', '\n', '\v', '\f':
			if c == '|' || c == ':' {
				dashesOnly = false
			}
		default:
			return false
		}
	}
	return !dashesOnly
}

// limitNesting returns src with a backslash before every block quote or
// list marker past the first max at the start of a line ("> > >",
// "- - 1. "), which makes it text. A line of a thematic break ("- - -")
// is left as it is. It returns src itself when no line has that many.
func limitNesting(src []byte, max int) []byte {
	var out []byte
	last := 0
	for start := 0; start < len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		if at := excessMarker(src[start:end], max); at >= 0 {
			out = append(out, src[last:start+at]...)
			out = append(out, '\\')
			last = start + at
		}
		start = end
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}

// excessMarker returns the offset in line of the container marker past
// the first max at its start (of an ordered list item, the offset of its
// "." or ")"), or -1.
func excessMarker(line []byte, max int) int {
	if thematicBreak(line) {
		return -1
	}
	n, i := 0, 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			return -1
		}
		end, escape := markerAt(line, i)
		if end < 0 {
			return -1
		}
		if n == max {
			return escape
		}
		n++
		i = end
	}
}

// markerAt reads a block quote or list marker at line[i]: it returns the
// offset past it and the offset of the character a backslash makes text,
// or -1.
func markerAt(line []byte, i int) (end, escape int) {
	spaceAt := func(j int) bool {
		return j >= len(line) || line[j] == ' ' || line[j] == '\t' || line[j] == '\n' || line[j] == '\r'
	}
	switch c := line[i]; {
	case c == '>':
		return i + 1, i
	case c == '-' || c == '+' || c == '*':
		if spaceAt(i + 1) {
			return i + 1, i
		}
	case c >= '0' && c <= '9':
		j := i
		for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j < len(line) && (line[j] == '.' || line[j] == ')') && spaceAt(j+1) {
			return j + 1, j
		}
	}
	return -1, -1
}

// thematicBreak says whether line is three or more of one of "-", "*",
// "_", with spaces.
func thematicBreak(line []byte) bool {
	var mark byte
	n := 0
	for _, c := range line {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '-', '*', '_':
			if mark != 0 && c != mark {
				return false
			}
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// errOutputFull is cappedWriter's error once it holds max bytes.
var errOutputFull = errors.New("the HTML is larger than the bound")

// cappedWriter keeps what is written to it up to max bytes.
type cappedWriter struct {
	buf bytes.Buffer
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:room])
		return room, errOutputFull
	}
	return w.buf.Write(p)
}
