package action

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// Init is `opm init`: an olm.package blob with an optional description and
// icon.
type Init struct {
	Package           string
	DefaultChannel    string
	DescriptionReader io.Reader
	IconReader        io.Reader
}

// Run builds the package blob.
func (i Init) Run() (*declcfg.Package, error) {
	pkg := &declcfg.Package{
		Schema:         "olm.package",
		Name:           i.Package,
		DefaultChannel: i.DefaultChannel,
	}
	if i.DescriptionReader != nil {
		data, err := io.ReadAll(i.DescriptionReader)
		if err != nil {
			return nil, fmt.Errorf("read description: %v", err)
		}
		pkg.Description = string(data)
	}
	if i.IconReader != nil {
		data, err := io.ReadAll(i.IconReader)
		if err != nil {
			return nil, fmt.Errorf("read icon: %v", err)
		}
		mediaType, err := IconMediaType(data)
		if err != nil {
			return nil, err
		}
		pkg.Icon = &declcfg.Icon{Data: data, MediaType: mediaType}
	}
	return pkg, nil
}

// errEmptyIcon is upstream's message (h2non/filetype's ErrEmptyBuffer).
var errEmptyIcon = errors.New("detect icon mediatype: Empty buffer")

// IconMediaType names the image type of an icon from its first bytes, as
// upstream's `opm init` does with h2non/filetype: the same magic numbers,
// the same media type names, and the same refusal of what is not an
// image. SVG is image/svg+xml where upstream's SVG check (go-is-svg, which
// upstream registers with filetype, ahead of its other types) accepts it,
// and also where that check refuses a plain SVG document (see isSVG).
func IconMediaType(data []byte) (string, error) {
	if len(data) == 0 {
		return "", errEmptyIcon
	}
	if upstreamSVG(data) {
		return "image/svg+xml", nil
	}
	// filetype tries its application matchers before its image ones.
	for _, m := range applicationMagic {
		if m.match(data) {
			return "", notAnImage(m.mime)
		}
	}
	for _, m := range imageMagic {
		if m.match(data) {
			return m.mime, nil
		}
	}
	if isSVG(data) {
		return "image/svg+xml", nil
	}
	for _, m := range otherMagic {
		if m.match(data) {
			return "", notAnImage(m.mime)
		}
	}
	return "", notAnImage("")
}

var (
	// xmlComment is an XML comment, which upstream's check removes
	// everywhere before it looks at the document.
	xmlComment = regexp.MustCompile(`<!--[\s\S]*?-->`)
	// svgDocument is what upstream's check takes for an SVG document,
	// without regard to case: blanks, an optional "<?xml" declaration
	// (anything up to the next ">"), an optional "<!doctype svg", then an
	// <svg ...> start tag, content without any "*", a closing </svg>, and
	// blanks only. (\s is RE2's: tab, newline, form feed, carriage return,
	// space.)
	svgDocument = regexp.MustCompile(`(?i)\A\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype svg[^>]*>\s*)?<svg[^>]*>[^*]*</svg>\s*\z`)
)

// upstreamSVG reports whether upstream's `opm init` takes data for an SVG
// image: data is not "binary" (none of its first 24 bytes, when it has
// that many, is below 9) and, with its comments removed, is an
// svgDocument. So a self-closing <svg/>, a byte order mark, a "*"
// anywhere (CSS) or text after </svg> make it refuse a valid SVG file.
func upstreamSVG(data []byte) bool {
	if len(data) >= 24 {
		for _, c := range data[:24] {
			if c <= 8 {
				return false
			}
		}
	}
	return svgDocument.Match(xmlComment.ReplaceAll(data, nil))
}

func notAnImage(mime string) error {
	return fmt.Errorf("detected invalid type %q: not an image", mime)
}

type magic struct {
	mime  string
	match func([]byte) bool
}

// prefixAt reports whether b holds p at offset off.
func prefixAt(b []byte, off int, p string) bool {
	return len(b) >= off+len(p) && string(b[off:off+len(p)]) == p
}

// imageMagic are filetype's image matchers. Its own order among them comes
// from a Go map, but no two of them match the same bytes.
var imageMagic = []magic{
	{"image/jpeg", func(b []byte) bool { return len(b) > 2 && prefixAt(b, 0, "\xff\xd8\xff") }},
	{"image/jp2", func(b []byte) bool { return len(b) > 12 && prefixAt(b, 0, "\x00\x00\x00\x0cjP  \r\n\x87\n\x00") }},
	{"image/png", func(b []byte) bool { return len(b) > 3 && prefixAt(b, 0, "\x89PNG") }},
	{"image/gif", func(b []byte) bool { return len(b) > 2 && prefixAt(b, 0, "GIF") }},
	{"image/webp", func(b []byte) bool { return len(b) > 11 && prefixAt(b, 8, "WEBP") }},
	{"image/x-canon-cr2", isCR2},
	{"image/tiff", func(b []byte) bool { return len(b) > 10 && isTIFFHeader(b) && !isCR2(b) }},
	{"image/bmp", func(b []byte) bool { return len(b) > 1 && prefixAt(b, 0, "BM") }},
	{"image/vnd.ms-photo", func(b []byte) bool { return len(b) > 2 && prefixAt(b, 0, "II\xbc") }},
	{"image/vnd.adobe.photoshop", func(b []byte) bool { return len(b) > 3 && prefixAt(b, 0, "8BPS") }},
	{"image/vnd.microsoft.icon", func(b []byte) bool { return len(b) > 3 && prefixAt(b, 0, "\x00\x00\x01\x00") }},
	{"image/heif", isHEIF},
	{"image/vnd.dwg", func(b []byte) bool { return len(b) > 3 && prefixAt(b, 0, "AC10") }},
}

func isTIFFHeader(b []byte) bool {
	return prefixAt(b, 0, "II*\x00") || prefixAt(b, 0, "MM\x00*")
}

func isCR2(b []byte) bool {
	return len(b) > 10 && isTIFFHeader(b) && prefixAt(b, 8, "CR\x02")
}

// isHEIF reads an ISO base media file's ftyp box as filetype does.
func isHEIF(b []byte) bool {
	if len(b) < 16 || !prefixAt(b, 4, "ftyp") || len(b) < int(binary.BigEndian.Uint32(b)) {
		return false
	}
	if len(b) < 17 {
		return false
	}
	major := string(b[8:12])
	if major == "heic" {
		return true
	}
	if major != "mif1" && major != "msf1" {
		return false
	}
	end := int(binary.BigEndian.Uint32(b))
	for i := 16; i < end && i+4 <= len(b); i += 4 {
		if string(b[i:i+4]) == "heic" {
			return true
		}
	}
	return false
}

// applicationMagic are filetype's application matchers, which it tries
// first.
var applicationMagic = []magic{
	{"application/wasm", func(b []byte) bool { return prefixAt(b, 0, "\x00asm\x01\x00\x00\x00") }},
	{"application/vnd.android.dex", func(b []byte) bool { return len(b) > 36 && prefixAt(b, 0, "dex\n") && b[36] == 0x70 }},
	{"application/vnd.android.dey", func(b []byte) bool { return len(b) > 100 && prefixAt(b, 0, "dey\n") }},
}

// otherMagic names a few common files that are not images, so the error
// says what was given. (filetype knows many more; for those, and for any
// text, the type here is "".)
var otherMagic = []magic{
	{"application/pdf", func(b []byte) bool { return prefixAt(b, 0, "%PDF") }},
	{"application/zip", func(b []byte) bool {
		return prefixAt(b, 0, "PK") && len(b) > 3 && (b[2] == 3 || b[2] == 5 || b[2] == 7)
	}},
	{"application/gzip", func(b []byte) bool { return prefixAt(b, 0, "\x1f\x8b\x08") }},
}

// isSVG reports whether data is an SVG document as people write them,
// also where upstream's check (upstreamSVG) refuses it: an optional byte
// order mark, XML declaration, comments and doctype, then an <svg element,
// whatever follows.
func isSVG(data []byte) bool {
	b := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			end := bytes.Index(b, []byte("?>"))
			if end < 0 {
				return false
			}
			b = b[end+2:]
		case bytes.HasPrefix(b, []byte("<!--")):
			end := bytes.Index(b, []byte("-->"))
			if end < 0 {
				return false
			}
			b = b[end+3:]
		case bytes.HasPrefix(b, []byte("<!")):
			end := bytes.IndexByte(b, '>')
			if end < 0 {
				return false
			}
			b = b[end+1:]
		default:
			return bytes.HasPrefix(b, []byte("<svg")) && len(b) > 4 && bytes.IndexByte([]byte(" \t\r\n>/"), b[4]) >= 0
		}
	}
}
