package canonjson

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special flags, in each byte of the returned word's high bit, the bytes of
// x that need attention inside a JSON string: '"', '\\', control characters
// and non-ASCII bytes. The lowest flagged byte is always a true match.
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((q - lsb) & ^q & msb) | ((b - lsb) & ^b & msb) | ((x - lsb*0x20) & ^x & msb) | (x & msb)
}

// nextSpecial returns the index of the first byte at or after i that is a
// quote, a backslash, a control character or non-ASCII, or len(s).
func nextSpecial(s []byte, i int) int {
	for i+8 <= len(s) {
		if m := special(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(s) {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
		i++
	}
	return i
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

// checkString finds the end of the string at src[i] (a quote) and reports
// whether it is written exactly as encoding/json would write it.
func checkString(src []byte, i int) (end int, ok bool, err error) {
	j := i + 1
	for {
		j = nextSpecial(src, j)
		if j >= len(src) {
			return j, false, syntaxErr(j, "unexpected end of JSON input")
		}
		switch c := src[j]; {
		case c == '"':
			return j + 1, true, nil
		case c == '\\':
			if j+1 >= len(src) {
				return j, false, nil
			}
			switch src[j+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
				j += 2
				continue
			case 'u':
				if j+6 > len(src) {
					return j, false, nil
				}
				h := src[j+2 : j+6]
				if h[0] == '0' && h[1] == '0' && (h[2] == '0' || h[2] == '1') && isLowerHex(h[3]) {
					v := hexVal(h[2])<<4 | hexVal(h[3])
					if v != '\b' && v != '\f' && v != '\n' && v != '\r' && v != '\t' {
						j += 6
						continue
					}
				} else if string(h) == "2028" || string(h) == "2029" {
					j += 6
					continue
				}
				return j, false, nil
			default:
				return j, false, nil
			}
		case c < 0x20:
			return j, false, nil
		default:
			r, size := utf8.DecodeRune(src[j:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return j, false, nil
			}
			j += size
		}
	}
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// getu4 decodes the \uXXXX escape at s[0:6], or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		h := hexVal(c)
		if h < 0 {
			return -1
		}
		r = r<<4 | h
	}
	return r
}

// unquote decodes the JSON string at src[i] (a quote) with encoding/json's
// rules and appends its bytes to dst: escapes are resolved, invalid UTF-8
// and unpaired surrogates become U+FFFD.
func unquote(dst *[]byte, src []byte, i int) (int, error) {
	b := *dst
	j := i + 1
	for {
		k := nextSpecial(src, j)
		b = append(b, src[j:k]...)
		j = k
		if j >= len(src) {
			*dst = b
			return j, syntaxErr(j, "unexpected end of JSON input")
		}
		switch c := src[j]; {
		case c == '"':
			*dst = b
			return j + 1, nil
		case c == '\\':
			if j+1 >= len(src) {
				*dst = b
				return j + 1, syntaxErr(j+1, "unexpected end of JSON input")
			}
			switch e := src[j+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				j += 2
			case 'b':
				b = append(b, '\b')
				j += 2
			case 'f':
				b = append(b, '\f')
				j += 2
			case 'n':
				b = append(b, '\n')
				j += 2
			case 'r':
				b = append(b, '\r')
				j += 2
			case 't':
				b = append(b, '\t')
				j += 2
			case 'u':
				rr := getu4(src[j:])
				if rr < 0 {
					// Find the offending character for the message.
					k := j + 2
					for k < len(src) && k < j+6 && hexVal(src[k]) >= 0 {
						k++
					}
					*dst = b
					if k >= len(src) {
						return k, syntaxErr(k, "unexpected end of JSON input")
					}
					return k, syntaxErr(k, "invalid character %s in \\u hexadecimal character escape", describe(src[k]))
				}
				j += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(src[j:])
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						j += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				*dst = b
				return j + 1, syntaxErr(j+1, "invalid character %s in string escape code", describe(e))
			}
		case c < 0x20:
			*dst = b
			return j, syntaxErr(j, "invalid character %s in string literal", describe(c))
		default:
			r, size := utf8.DecodeRune(src[j:])
			b = utf8.AppendRune(b, r) // RuneError for an invalid byte
			j += size
		}
	}
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a canonical JSON string: escaped as
// encoding/json escapes with HTML escaping off, after replacing each byte of
// invalid UTF-8 with U+FFFD (which is what a decode and re-encode does).
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = nextSpecial(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
		default:
			i += size
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendQuoted is AppendString for a string argument.
func AppendQuoted(dst []byte, s string) []byte {
	return AppendString(dst, []byte(s))
}

// appendNumber appends the canonical text of the JSON number num: what
// encoding/json writes for the float64 it decodes to.
func appendNumber(dst, num []byte, off int) ([]byte, error) {
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return dst, &SyntaxError{Offset: off, Msg: "json: cannot unmarshal number " + string(num) + " into Go value of type float64"}
	}
	return AppendFloat(dst, f), nil
}

// AppendFloat appends f as encoding/json writes a float64.
func AppendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
