package action

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/h2non/filetype"
	"github.com/h2non/filetype/types"
	issvg "github.com/h2non/go-is-svg"
)

// registerSVG does what upstream's alpha/model does when opm starts: it
// registers go-is-svg's check with filetype (which puts it first).
var registerSVG = sync.OnceFunc(func() {
	filetype.AddMatcher(types.NewType("svg", "image/svg+xml"), issvg.Is)
})

// upstreamIconType is what upstream's `opm init` does with an icon: it asks
// h2non/filetype, with go-is-svg registered (both test-only dependencies
// here), and accepts only images.
func upstreamIconType(data []byte) (string, bool) {
	registerSVG()
	t, err := filetype.Match(data)
	if err != nil || t.MIME.Type != "image" {
		return t.MIME.Value, false
	}
	return t.MIME.Value, true
}

// iconSamples are the magic numbers of every image type filetype knows, a
// few near misses, and files that are not images.
func iconSamples() [][]byte {
	pad := func(s string, n int) []byte {
		b := make([]byte, n)
		copy(b, s)
		return b
	}
	ftyp := func(major string, brands ...string) []byte {
		b := make([]byte, 16+4*len(brands))
		binary.BigEndian.PutUint32(b, uint32(len(b)))
		copy(b[4:], "ftyp"+major+"\x00\x00\x00\x00"+strings.Join(brands, ""))
		return append(b, 0)
	}
	webp := pad("RIFF\x00\x00\x00\x00WEBPVP8 ", 16)
	cr2 := pad("II*\x00\x10\x00\x00\x00CR\x02\x00", 16)
	return [][]byte{
		pad("\xff\xd8\xff\xe0", 8), pad("\xff\xd8\xff", 3), pad("\xff\xd8", 2),
		pad("\x00\x00\x00\x0cjP  \r\n\x87\n\x00", 16), pad("\x00\x00\x00\x0cjP  \r\n\x87\n\x00", 13),
		pad("\x89PNG\r\n\x1a\n", 8), pad("\x89PNG", 4), pad("\x89PN", 3),
		pad("GIF89a", 6), pad("GIF", 3), []byte("GI"),
		webp, webp[:12], webp[:11],
		cr2, pad("MM\x00*\x00\x00\x00\x08CR\x02", 12), pad("II*\x00\x08\x00\x00\x00\x00\x00\x00", 11), pad("MM\x00*", 11), pad("II*\x00", 10),
		pad("BM", 2), []byte("B"),
		pad("II\xbc\x01", 4), pad("II\xbc", 3),
		pad("8BPS", 4), pad("8BPS", 5),
		pad("\x00\x00\x01\x00", 4), pad("\x00\x00\x01\x00", 6),
		ftyp("heic"), ftyp("mif1", "heic"), ftyp("msf1", "avif", "heic"), ftyp("mif1", "avif"), ftyp("avif"), ftyp("heic")[:16],
		pad("AC1015", 6), pad("AC10", 4),
		pad("\x00asm\x01\x00\x00\x00", 8), pad("dex\n035", 40), pad("dey\n036", 120),
		[]byte("%PDF-1.7"), pad("PK\x03\x04", 30), pad("\x1f\x8b\x08", 10),
		[]byte("hello"), []byte("{\"a\": 1}"), {0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
}

// svgSamples are SVG documents and near misses: what upstream's check
// accepts and refuses, and what isSVG accepts besides.
func svgSamples() [][]byte {
	var out [][]byte
	for _, s := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"/>`,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->\n<!DOCTYPE svg>\n<svg width=\"1\"><rect/></svg>\n",
		"<?xml version=\"1.0\"?><!DOCTYPE html><svg></svg>",
		"<?xml version='1.0'><svg></svg>",
		"<?xml-stylesheet href=\"a.css\"?><svg></svg>",
		"<!-- a --><?xml version=\"1.0\"?><!-- b --><svg><!-- * --></svg><!-- c -->",
		"<SVG VIEWBOX=\"0 0 1 1\"></SVG>",
		"<!DocType SVG><Svg></sVg>",
		"\f\v<svg></svg>",
		"\f<svg></svg>\f",
		" \t\r\n<svg></svg> \t\r\n",
		"<svg><style>* { fill: red }</style></svg>",
		"<svg></svg>trailing",
		"<svg></svg><svg></svg>",
		"<svgfoo></svg>",
		"<svg>",
		"<svg",
		"\xef\xbb\xbf<svg></svg>",
		"<svg><title>caf\xc3\xa9</title></svg>",
		"<svg><title>caf\xc3\xa9 caf\xc3\xa9 caf\xc3\xa9</title></svg>",
		"<svg><title>\xff\xfe\x80\x7f\x09\x0a\x0b\x0c\x0d\x0e\x1f\x20</title></svg>",
		"<svg><title>\x09\x0a\x0b\x0c\x0d\x0e\x1f\x20\x08</title></svg>",
		"<svg xmlns=\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"></svg>",
		"<svg>\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03</svg>",
		"<svg>\x01</svg>",
		"<html><svg></svg></html>",
		"<!-- <svg></svg>",
		"<!-- --><svg></svg><!-- ",
		"svg",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// TestIconMediaTypeAgreesWithUpstream: wherever upstream accepts an icon we
// give the same media type, and wherever it refuses one we refuse it too
// with its message, but for the SVG documents its check refuses and isSVG
// accepts (the one documented difference).
func TestIconMediaTypeAgreesWithUpstream(t *testing.T) {
	samples := append(iconSamples(), svgSamples()...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		// Bias towards the magic numbers: start from a sample, then mutate.
		if r.IntN(2) == 0 {
			s := samples[r.IntN(len(samples))]
			b = append(append([]byte(nil), s...), b[:r.IntN(len(b))]...)
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		samples = append(samples, b)
	}
	images, svgs, extra := 0, 0, 0
	for _, b := range samples {
		want, ok := upstreamIconType(b)
		got, err := IconMediaType(b)
		if ok {
			images++
			if want == "image/svg+xml" {
				svgs++
			}
			if err != nil || got != want {
				t.Errorf("%q: got %q, %v; upstream accepts it as %q", b, got, err, want)
			}
			continue
		}
		if err == nil {
			if got == "image/svg+xml" && isSVG(b) {
				extra++
				continue
			}
			t.Errorf("%q: got %q; upstream refuses it (type %q)", b, got, want)
			continue
		}
		// The application types filetype tries before images, and the few
		// in otherMagic, are named in our message as in upstream's.
		for _, m := range append(applicationMagic, otherMagic...) {
			if m.mime == want && err.Error() != notAnImage(want).Error() {
				t.Errorf("%q: error %q, upstream's names %q", b, err, want)
			}
		}
	}
	t.Logf("%d images, %d SVG, %d SVG only here", images, svgs, extra)
	if images < 100 || svgs < 10 || extra < 5 {
		t.Fatalf("%d samples were images, %d SVG, %d SVG only here: the sample set is too weak", images, svgs, extra)
	}
}

// TestUpstreamSVG: upstreamSVG is go-is-svg's check, on every SVG sample
// and mutations of them.
func TestUpstreamSVG(t *testing.T) {
	samples := svgSamples()
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := append([]byte(nil), samples[r.IntN(len(samples))]...)
		switch r.IntN(3) {
		case 0: // a byte changed, often to a character that matters
			b[r.IntN(len(b))] = "<>/*!?-\t\f\x00\x08\x09\x80svgSVGxml"[r.IntN(22)]
		case 1: // a byte dropped
			i := r.IntN(len(b))
			b = append(b[:i], b[i+1:]...)
		case 2: // a piece inserted
			i := r.IntN(len(b) + 1)
			piece := []string{"<!-- x -->", "*", " ", "\f", "\x08", "\xef\xbb\xbf", "</svg>", "<svg>", "<?xml?>", "<!doctype svg>", "\n"}[r.IntN(11)]
			b = append(b[:i], append([]byte(piece), b[i:]...)...)
		}
		if len(b) > 0 {
			samples = append(samples, b)
		}
	}
	yes := 0
	for _, b := range samples {
		want := issvg.Is(b)
		if got := upstreamSVG(b); got != want {
			t.Errorf("%q: upstreamSVG %v, go-is-svg %v", b, got, want)
		}
		if want {
			yes++
		}
	}
	if yes < 500 || len(samples)-yes < 1000 {
		t.Fatalf("%d of %d samples are SVG to go-is-svg: the sample set is too weak", yes, len(samples))
	}
}

func TestIconMediaTypeSVG(t *testing.T) {
	for _, s := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>`,
		"\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x\">\n<svg>\n</svg>",
		"\n\t <svg\nwidth=\"1\"></svg>",
		"<SVG VIEWBOX=\"0 0 1 1\"></SVG>", // upstream's check ignores case
	} {
		if got, err := IconMediaType([]byte(s)); err != nil || got != "image/svg+xml" {
			t.Errorf("%q: got %q, %v", s, got, err)
		}
	}
	for _, s := range []string{`<svgx/>`, `<html><svg/></html>`, `<?xml version="1.0"`, `<!-- <svg/>`, `svg`} {
		if got, err := IconMediaType([]byte(s)); err == nil {
			t.Errorf("%q: accepted as %q", s, got)
		}
	}
}
