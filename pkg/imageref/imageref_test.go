package imageref

import (
	"errors"
	"strings"
	"testing"
)

func r(s string, n int) string { return strings.Repeat(s, n) }

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// validateCases holds inputs with the error message that
// go.podman.io/image/v5@v5.40.0/docker/reference.ParseNormalizedNamed
// returns for them ("" means no error), as used by operator-registry v1.73.0.
// The messages were produced by running that library.
var validateCases = []struct {
	name, in, want string
}{
	{"familiar name", "busybox", ""},
	{"familiar name with tag", "busybox:1.36", ""},
	{"user repo", "operator-framework/opm", ""},
	{"registry path tag", "quay.io/operator-framework/opm:v1.73.0", ""},
	{"registry path digest", "registry.redhat.io/openshift4/ose-kube-rbac-proxy@sha256:" + hex64, ""},
	{"tag and digest", "quay.io/foo/bar:v1@sha256:" + hex64, ""},
	{"sha384 digest", "quay.io/foo/bar@sha384:" + r("ab", 48), ""},
	{"sha512 digest", "quay.io/foo/bar@sha512:" + r("cd", 64), ""},
	{"registry with port", "localhost:5000/foo/bar:latest", ""},
	{"localhost without port", "localhost/foo", ""},
	{"ip registry", "10.0.0.1:5000/foo", ""},
	{"uppercase registry", "Quay.IO/foo/bar", ""},
	{"uppercase tag", "quay.io/foo/bar:V1.0-RC1", ""},
	{"separators", "a.b/c__d-e---f.g_h/i", ""},
	{"underscore first segment is a path", "foo_bar.com/baz", ""},
	{"index.docker.io", "index.docker.io/busybox", ""},
	{"empty", "", "invalid reference format"},
	{"only at", "@", "invalid reference format"},
	{"only colon", ":", "invalid reference format"},
	{"uppercase path", "quay.io/Foo/bar", "invalid reference format: repository name must be lowercase"},
	{"uppercase familiar", "Busybox", "invalid reference format: repository name must be lowercase"},
	{"uppercase first segment is a path", "Foo/bar", "invalid reference format: repository name must be lowercase"},
	{"uppercase localhost", "LOCALHOST/foo", "invalid reference format: repository name must be lowercase"},
	{"uppercase digest algorithm without tag", "foo@SHA256:" + hex64, "invalid reference format: repository name must be lowercase"},
	{"uppercase digest algorithm with tag", "foo:tag@SHA256:" + hex64, "invalid checksum digest format"},
	{"uppercase path not a registry", "FOO_bar.com/baz", "repository name must be lowercase"},
	{"kelvin sign in tag", "foo:\u212a", "repository name must be lowercase"},
	{"dotted I in registry", "\u0130.com/foo", "repository name must be lowercase"},
	{"non-ASCII in path", "quay.io/caf\u00e9", "invalid reference format"},
	{"invalid UTF-8 in path", "foo\xff", "invalid reference format: repository name must be lowercase"},
	{"invalid UTF-8 in tag", "foo:\xff", "invalid reference format"},
	{"64 hex", hex64, "invalid repository name (0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef), cannot specify 64-byte hexadecimal strings"},
	{"64 hex with tag", hex64 + ":latest", ""},
	{"ipv6 registry", "[::1]:5000/foo", "invalid reference format"},
	{"double dot", "quay.io/foo..bar", "invalid reference format"},
	{"triple underscore", "quay.io/foo___bar", "invalid reference format"},
	{"trailing separator", "quay.io/foo-", "invalid reference format"},
	{"trailing slash", "quay.io/foo/", "invalid reference format"},
	{"double slash", "quay.io//foo", "invalid reference format"},
	{"registry label ends with hyphen", "quay-.io/foo", "invalid reference format"},
	{"empty port", "quay.io:/foo", "invalid reference format"},
	{"two ports", "quay.io:1:2/foo", "invalid reference format"},
	{"empty tag", "quay.io/foo:", "invalid reference format"},
	{"tag starts with dot", "quay.io/foo:.x", "invalid reference format"},
	{"two tags", "quay.io/foo:a:b", "invalid reference format"},
	{"tag of 128", "foo:" + r("t", 128), ""},
	{"tag of 129", "foo:" + r("t", 129), "invalid reference format"},
	{"at without digest", "quay.io/foo@", "invalid reference format"},
	{"two digests", "quay.io/foo@sha256:" + hex64 + "@sha256:" + hex64, "invalid reference format"},
	{"short sha256", "quay.io/foo@sha256:" + hex64[:63], "invalid checksum digest length"},
	{"long sha256", "quay.io/foo@sha256:" + hex64 + "0", "invalid checksum digest length"},
	{"sha256 hex too short for grammar", "quay.io/foo@sha256:" + hex64[:31], "invalid reference format"},
	{"uppercase sha256 hex", "quay.io/foo@sha256:" + strings.ToUpper(hex64), "invalid checksum digest format"},
	{"sha384 wrong length", "quay.io/foo@sha384:" + hex64, "invalid checksum digest length"},
	{"sha512 wrong length", "quay.io/foo@sha512:" + hex64, "invalid checksum digest length"},
	{"unknown algorithm", "quay.io/foo@md5:" + hex64[:32], "unsupported digest algorithm"},
	{"unknown algorithm with tag and uppercase", "quay.io/foo:v@Md5:" + hex64[:32], "invalid checksum digest format"},
	{"non-hex digest", "quay.io/foo@sha256:" + hex64[:63] + "g", "invalid reference format"},
	{"name of 255", "quay.io/" + r("a", 247), ""},
	{"name of 256", "quay.io/" + r("a", 248), "repository name must not be more than 255 characters"},
	{"normalized name of 256", r("a", 238), "repository name must not be more than 255 characters"},
	{"normalized name of 255", r("a", 237), ""},
	{"space", "quay.io/foo bar", "invalid reference format"},
}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := Validate(tc.in); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestValidateSentinels checks that the fixed messages come from the
// exported error values, so callers can use errors.Is.
func TestValidateSentinels(t *testing.T) {
	sentinels := []error{ErrInvalidFormat, ErrNameUppercase, ErrNameContainsUppercase, ErrNameTooLong, ErrDigestFormat, ErrDigestLength, ErrDigestAlgorithm}
	for _, tc := range validateCases {
		if tc.want == "" || strings.HasPrefix(tc.want, "invalid repository name (") {
			continue
		}
		err := Validate(tc.in)
		found := false
		for _, s := range sentinels {
			if s.Error() == tc.want {
				found = true
				if !errors.Is(err, s) {
					t.Errorf("Validate(%q) = %v, want errors.Is(err, %q)", tc.in, err, s)
				}
			}
		}
		if !found {
			t.Errorf("no sentinel error for %q", tc.want)
		}
	}
}

func TestValidateDoesNotAllocate(t *testing.T) {
	for _, tc := range validateCases {
		if tc.want != "" {
			continue
		}
		if n := testing.AllocsPerRun(100, func() { _ = Validate(tc.in) }); n != 0 {
			t.Errorf("Validate(%q) allocates %v times", tc.in, n)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	inputs := []string{
		"registry.redhat.io/openshift4/ose-kube-rbac-proxy@sha256:" + hex64,
		"quay.io/operator-framework/opm:v1.73.0",
		"busybox",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := Validate(inputs[i%len(inputs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzValidate checks that Validate never panics, always returns one of
// the messages ParseNormalizedNamed can return, and accepts only strings
// built from the grammar's characters.
func FuzzValidate(f *testing.F) {
	for _, tc := range validateCases {
		f.Add(tc.in)
	}
	known := map[string]bool{}
	for _, e := range []error{ErrInvalidFormat, ErrNameUppercase, ErrNameContainsUppercase, ErrNameTooLong, ErrDigestFormat, ErrDigestLength, ErrDigestAlgorithm} {
		known[e.Error()] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Validate(s)
		if err == nil {
			if s == "" {
				t.Fatal("empty string accepted")
			}
			for i := 0; i < len(s); i++ {
				if c := s[i]; !isAlnum(c) && !strings.ContainsRune("._-/:@", rune(c)) {
					t.Fatalf("Validate(%q) accepted byte %q", s, c)
				}
			}
			return
		}
		if msg := err.Error(); !known[msg] && msg != "invalid repository name ("+s+"), cannot specify 64-byte hexadecimal strings" {
			t.Fatalf("Validate(%q) returned unexpected message %q", s, msg)
		}
	})
}
