// Package imageref validates container image pull specs exactly the way
// upstream opm does.
//
// operator-registry v1.73.0 checks every bundle image and related image with
// ParseNormalizedNamed from go.podman.io/image/v5/docker/reference (v5.40.0,
// which parses digests with github.com/opencontainers/go-digest v1.0.0).
// Validate gives the same verdict and the same error text as that function
// for every input string, using a hand-written scanner instead of regular
// expressions. The grammar it accepts is:
//
//	reference        := name [ ":" tag ] [ "@" digest ]
//	name             := [ domain "/" ] path-component [ "/" path-component ]*
//	domain           := domain-component [ "." domain-component ]* [ ":" [0-9]+ ]
//	domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
//	path-component   := [a-z0-9]+ [ separator [a-z0-9]+ ]*
//	separator        := "." | "_" | "__" | "-"+
//	tag              := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//	digest           := algorithm ":" [0-9a-fA-F]{32,}
//	algorithm        := [A-Za-z][A-Za-z0-9]* [ [-_+.] [A-Za-z][A-Za-z0-9]* ]*
//
// Note that this grammar (podman's copy of the reference package) differs
// from github.com/distribution/reference v0.6.0: it has no IPv6 hosts and
// its "must be lowercase" messages do not name the repository.
package imageref

import (
	"errors"
	"strings"
)

// The errors Validate returns, worded as the reference and go-digest
// packages word them. Only the "64-byte hexadecimal" error is built per call
// because its message contains the input.
var (
	// ErrInvalidFormat is returned when s does not match the reference
	// grammar ("invalid reference format").
	ErrInvalidFormat = errors.New("invalid reference format")
	// ErrNameUppercase is returned when the repository path (the part after
	// the registry and before the first ':') changes under strings.ToLower.
	ErrNameUppercase = errors.New("invalid reference format: repository name must be lowercase")
	// ErrNameContainsUppercase is returned when s does not match the grammar
	// but its strings.ToLower form does, for example with an uppercase
	// letter in a first path component that is not a valid registry name
	// ("A_b.c/x"), or a Kelvin sign (U+212A) in a tag.
	ErrNameContainsUppercase = errors.New("repository name must be lowercase")
	// ErrNameTooLong is returned when the normalized name (registry and
	// repository, for example "docker.io/library/busybox") is longer than
	// 255 bytes.
	ErrNameTooLong = errors.New("repository name must not be more than 255 characters")
	// ErrDigestFormat is returned for a digest with an uppercase algorithm
	// name, or a sha256/sha384/sha512 digest with uppercase hex.
	ErrDigestFormat = errors.New("invalid checksum digest format")
	// ErrDigestLength is returned for a sha256, sha384 or sha512 digest whose
	// hex part is not 64, 96 or 128 characters long.
	ErrDigestLength = errors.New("invalid checksum digest length")
	// ErrDigestAlgorithm is returned for a well-formed digest whose algorithm
	// is not sha256, sha384 or sha512.
	ErrDigestAlgorithm = errors.New("unsupported digest algorithm")
)

const (
	defaultDomain       = "docker.io"
	legacyDefaultDomain = "index.docker.io"
	officialRepoPrefix  = "library/"
	nameTotalLengthMax  = 255
	tagLengthMax        = 128
	minDigestHexLength  = 32
)

// Validate returns nil if s is a pull spec that ParseNormalizedNamed from
// go.podman.io/image/v5/docker/reference accepts, and otherwise an error
// whose message is identical to the one ParseNormalizedNamed returns. A
// familiar name like "busybox" is valid: it is normalized to
// "docker.io/library/busybox" first, and the 255-byte name limit applies to
// the normalized name.
//
// Validate does not special-case the empty string (it is invalid, as it is
// for ParseNormalizedNamed); opm skips empty pull specs before validating.
func Validate(s string) error {
	if isIdentifier(s) {
		return errors.New("invalid repository name (" + s + "), cannot specify 64-byte hexadecimal strings")
	}

	// Split off the registry the way docker normalization does: the first
	// path segment is a registry only if it contains '.' or ':' or is
	// "localhost"; otherwise the registry is docker.io.
	domain, remainder := defaultDomain, s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if first := s[:i]; first == "localhost" || strings.ContainsAny(first, ".:") {
			domain, remainder = first, s[i+1:]
		}
	}
	if domain == legacyDefaultDomain {
		domain = defaultDomain
	}
	// Official images get "library/" in front; it only adds to the name
	// length, since "library" is itself a valid path component.
	extra := 0
	if domain == defaultDomain && strings.IndexByte(remainder, '/') < 0 {
		extra = len(officialRepoPrefix)
	}

	remoteName := remainder
	if i := strings.IndexByte(remainder, ':'); i >= 0 {
		remoteName = remainder[:i]
	}
	if changedByToLower(remoteName) {
		return ErrNameUppercase
	}

	// Parse domain + "/" + remainder.
	nameLen, digest, ok := match(domain, remainder)
	if !ok {
		// Parse retries the strings.ToLower form only to pick the message.
		if _, _, lowerOK := match(strings.ToLower(domain), strings.ToLower(remainder)); lowerOK {
			return ErrNameContainsUppercase
		}
		return ErrInvalidFormat
	}
	if len(domain)+1+extra+nameLen > nameTotalLengthMax {
		return ErrNameTooLong
	}
	if digest != "" {
		return validateDigest(digest)
	}
	return nil
}

// match reports whether first + "/" + rest matches the reference grammar,
// where first holds no '/'. It returns the length of the name part of rest
// and the digest (empty if there is none).
func match(first, rest string) (nameLen int, digest string, ok bool) {
	// The first segment is either the registry or the first path
	// component. Neither contains '@', and a ':' in it can only start a
	// port, since a tag never reaches a '/'.
	if !isDomain(first) && !isPathComponent(first) {
		return 0, "", false
	}
	beforeDigest := rest
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		beforeDigest, digest = rest[:i], rest[i+1:]
		if !isDigest(digest) {
			return 0, "", false
		}
	}
	name := beforeDigest
	lastSlash := strings.LastIndexByte(beforeDigest, '/')
	if i := strings.IndexByte(beforeDigest[lastSlash+1:], ':'); i >= 0 {
		name = beforeDigest[:lastSlash+1+i]
		if !isTag(beforeDigest[lastSlash+1+i+1:]) {
			return 0, "", false
		}
	}
	for p := name; ; {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			if !isPathComponent(p) {
				return 0, "", false
			}
			break
		}
		if !isPathComponent(p[:i]) {
			return 0, "", false
		}
		p = p[i+1:]
	}
	return len(name), digest, true
}

// isIdentifier reports whether s is exactly 64 lowercase hex digits.
func isIdentifier(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

// changedByToLower reports whether strings.ToLower(s) != s, without
// allocating for ASCII input.
func changedByToLower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return strings.ToLower(s) != s
		}
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// isPathComponent reports whether s is [a-z0-9]+ runs joined by ".", "_",
// "__" or one or more "-".
func isPathComponent(s string) bool {
	i := 0
	for {
		start := i
		for i < len(s) && isLowerAlnum(s[i]) {
			i++
		}
		if i == start {
			return false
		}
		if i == len(s) {
			return true
		}
		switch s[i] {
		case '.':
			i++
		case '_':
			i++
			if i < len(s) && s[i] == '_' {
				i++
			}
		case '-':
			for i < len(s) && s[i] == '-' {
				i++
			}
		default:
			return false
		}
	}
}

// isDomain reports whether s is dot-separated domain components (letters,
// digits and inner hyphens) with an optional ":" and decimal port.
func isDomain(s string) bool {
	host := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		host = s[:i]
		port := s[i+1:]
		if port == "" {
			return false
		}
		for j := 0; j < len(port); j++ {
			if !isDigit(port[j]) {
				return false
			}
		}
	}
	for {
		label := host
		i := strings.IndexByte(host, '.')
		if i >= 0 {
			label = host[:i]
		}
		if label == "" || !isAlnum(label[0]) || !isAlnum(label[len(label)-1]) {
			return false
		}
		for j := 1; j < len(label)-1; j++ {
			if c := label[j]; !isAlnum(c) && c != '-' {
				return false
			}
		}
		if i < 0 {
			return true
		}
		host = host[i+1:]
	}
}

// isTag reports whether s is a word character followed by at most 127 word
// characters, dots and hyphens.
func isTag(s string) bool {
	if len(s) == 0 || len(s) > tagLengthMax || !isWord(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isWord(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isDigest reports whether s matches the reference grammar's digest: an
// algorithm made of [A-Za-z][A-Za-z0-9]* parts joined by single [-_+.], a
// ':', and at least 32 hex digits of either case.
func isDigest(s string) bool {
	i := 0
	for {
		if i >= len(s) || !isAlpha(s[i]) {
			return false
		}
		i++
		for i < len(s) && isAlnum(s[i]) {
			i++
		}
		if i >= len(s) {
			return false
		}
		if c := s[i]; c == ':' {
			break
		} else if c != '-' && c != '_' && c != '+' && c != '.' {
			return false
		}
		i++
	}
	hex := s[i+1:]
	if len(hex) < minDigestHexLength {
		return false
	}
	for j := 0; j < len(hex); j++ {
		if !isHex(hex[j]) {
			return false
		}
	}
	return true
}

// validateDigest checks a digest that already matches the grammar the way
// go-digest v1.0.0's Digest.Validate does (with sha256, sha384 and sha512
// available, as they are in opm).
func validateDigest(d string) error {
	i := strings.IndexByte(d, ':')
	alg, hex := d[:i], d[i+1:]
	var size int
	switch alg {
	case "sha256":
		size = 64
	case "sha384":
		size = 96
	case "sha512":
		size = 128
	default:
		// go-digest reports an algorithm with uppercase letters as a
		// format error and any other unknown algorithm as unsupported.
		for j := 0; j < len(alg); j++ {
			if 'A' <= alg[j] && alg[j] <= 'Z' {
				return ErrDigestFormat
			}
		}
		return ErrDigestAlgorithm
	}
	if len(hex) != size {
		return ErrDigestLength
	}
	for j := 0; j < len(hex); j++ {
		if !isLowerHex(hex[j]) {
			return ErrDigestFormat
		}
	}
	return nil
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool      { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool      { return isDigit(c) || isAlpha(c) }
func isLowerAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' }
func isWord(c byte) bool       { return isAlnum(c) || c == '_' }
func isHex(c byte) bool        { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isLowerHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }
