package action

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/h2non/filetype"
)

// upstreamIconType is what upstream's `opm init` does with an icon: it asks
// h2non/filetype (a test-only dependency here) and accepts only images.
func upstreamIconType(data []byte) (string, bool) {
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

// TestIconMediaTypeAgreesWithUpstream: wherever upstream accepts an icon we
// give the same media type, and wherever it refuses one we refuse it too
// with its message (SVG, which upstream cannot recognise, is the one
// documented exception).
func TestIconMediaTypeAgreesWithUpstream(t *testing.T) {
	samples := iconSamples()
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
	images := 0
	for _, b := range samples {
		want, ok := upstreamIconType(b)
		got, err := IconMediaType(b)
		if ok {
			images++
			if err != nil || got != want {
				t.Errorf("%q: got %q, %v; upstream accepts it as %q", b, got, err, want)
			}
			continue
		}
		if err == nil {
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
	if images < 100 {
		t.Fatalf("only %d samples were images: the sample set is too weak", images)
	}
}

func TestIconMediaTypeSVG(t *testing.T) {
	for _, s := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>`,
		"\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x\">\n<svg>\n</svg>",
		"\n\t <svg\nwidth=\"1\"></svg>",
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
