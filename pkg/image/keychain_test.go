package image

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// fakeHelper installs docker-credential-<helper> on a fresh PATH; it
// answers user:pass for server and "not found" for anything else.
func fakeHelper(t *testing.T, helper, server, user, pass string) {
	t.Helper()
	bin := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
read -r url
if [ "$1" = get ] && [ "$url" = %q ]; then
  printf '{"ServerURL":"%%s","Username":%q,"Secret":%q}' "$url"
  exit 0
fi
echo "credentials not found in native keychain"
exit 1
`, server, user, pass)
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-"+helper), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestKeychainAgainstRegistry(t *testing.T) {
	const user, pass = "alice", "wonderland"
	for _, guard := range []struct {
		name string
		wrap func(string, string) func(http.Handler) http.Handler
	}{{"basic", basicAuth}, {"token", tokenAuth}} {
		reg := newRegistry(t, guard.wrap(user, pass))
		ref := reg.push(t, "org/catalog:v1", catalogImage(t), remote.WithAuth(staticAuth(user, pass)))

		tests := []struct {
			name  string
			setup func(t *testing.T, home, dockerConfig, runtimeDir, configHome string)
		}{
			{"DOCKER_CONFIG", func(t *testing.T, _, dc, _, _ string) {
				writeAuthFile(t, filepath.Join(dc, "config.json"), reg.host, user, pass)
			}},
			{"~/.docker/config.json", func(t *testing.T, home, _, _, _ string) {
				t.Setenv("DOCKER_CONFIG", "")
				writeAuthFile(t, filepath.Join(home, ".docker", "config.json"), "https://"+reg.host, user, pass)
			}},
			{"REGISTRY_AUTH_FILE", func(t *testing.T, home, _, _, _ string) {
				f := filepath.Join(home, "elsewhere", "auth.json")
				writeAuthFile(t, f, reg.host, user, pass)
				t.Setenv("REGISTRY_AUTH_FILE", f)
			}},
			{"XDG_RUNTIME_DIR", func(t *testing.T, _, _, run, _ string) {
				writeAuthFile(t, filepath.Join(run, "containers", "auth.json"), reg.host+"/org/catalog", user, pass)
			}},
			{"XDG_CONFIG_HOME", func(t *testing.T, _, _, _, cfg string) {
				writeAuthFile(t, filepath.Join(cfg, "containers", "auth.json"), reg.host+"/org", user, pass)
			}},
			{"~/.config/containers/auth.json", func(t *testing.T, home, _, _, _ string) {
				t.Setenv("XDG_CONFIG_HOME", "")
				writeAuthFile(t, filepath.Join(home, ".config", "containers", "auth.json"), reg.host, user, pass)
			}},
			{"credHelpers", func(t *testing.T, _, dc, _, _ string) {
				fakeHelper(t, "fake", reg.host, user, pass)
				writeJSON(t, filepath.Join(dc, "config.json"), map[string]any{"credHelpers": map[string]string{reg.host: "fake"}})
			}},
			{"credsStore", func(t *testing.T, _, dc, _, _ string) {
				fakeHelper(t, "store", reg.host, user, pass)
				writeJSON(t, filepath.Join(dc, "config.json"), map[string]any{"credsStore": "store"})
			}},
		}
		for _, tc := range tests {
			t.Run(guard.name+"/"+tc.name, func(t *testing.T) {
				home, dc, run, cfg := isolateCredentials(t)
				tc.setup(t, home, dc, run, cfg)
				x, err := Extract(context.Background(), ref, t.TempDir())
				if err != nil {
					t.Fatalf("Extract: %v", err)
				}
				if x.Kind != KindCatalog {
					t.Errorf("kind %v", x.Kind)
				}
			})
		}
		t.Run(guard.name+"/no credentials", func(t *testing.T) {
			isolateCredentials(t)
			_, err := Pull(context.Background(), ref)
			if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "UNAUTHORIZED") {
				t.Errorf("Pull: %v, want UNAUTHORIZED", err)
			}
		})
		t.Run(guard.name+"/wrong password", func(t *testing.T) {
			_, dc, _, _ := isolateCredentials(t)
			writeAuthFile(t, filepath.Join(dc, "config.json"), reg.host, user, "nope")
			if _, err := Pull(context.Background(), ref); err == nil {
				t.Error("Pull: no error")
			}
		})
	}
}

// target is an authn.Resource for a repository reference.
func target(t *testing.T, repo string) authn.Resource {
	t.Helper()
	r, err := name.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func basicOf(t *testing.T, a authn.Authenticator) string {
	t.Helper()
	if a == authn.Anonymous {
		return "anonymous"
	}
	cfg, err := a.Authorization()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IdentityToken != "" {
		return "token:" + cfg.IdentityToken
	}
	return cfg.Username + ":" + cfg.Password
}

func TestKeychainLookup(t *testing.T) {
	home, dc, run, _ := isolateCredentials(t)
	auth := func(u, p string) map[string]string {
		return map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(u + ":" + p))}
	}
	writeJSON(t, filepath.Join(home, "first.json"), map[string]any{"auths": map[string]any{
		"quay.io/org/special": auth("special", "1"),
		"https://ghcr.io":     auth("ghcr", "1"),
	}})
	t.Setenv("REGISTRY_AUTH_FILE", filepath.Join(home, "first.json"))
	writeJSON(t, filepath.Join(dc, "config.json"), map[string]any{"auths": map[string]any{
		"quay.io":                     auth("docker-quay", "2"),
		"https://index.docker.io/v1/": auth("hub", "2"),
		"ghcr.io":                     auth("ghcr", "2"),
		"tokens.example.com":          map[string]string{"identitytoken": "idtok"},
		"empty.example.com":           map[string]string{},
	}})
	writeJSON(t, filepath.Join(run, "containers", "auth.json"), map[string]any{"auths": map[string]any{
		"quay.io/org":       auth("podman-org", "3"),
		"empty.example.com": auth("podman-empty", "3"),
		"docker.io/busybox": auth("podman-busybox", "3"),
	}})

	for repo, want := range map[string]string{
		"quay.io/org/special":         "special:1",     // REGISTRY_AUTH_FILE, repository key
		"quay.io/org/other":           "docker-quay:2", // docker config wins over podman's org key
		"quay.io/else/x":              "docker-quay:2",
		"ghcr.io/x/y":                 "ghcr:1",
		"busybox":                     "hub:2", // Docker Hub's legacy key
		"docker.io/library/busybox":   "hub:2",
		"tokens.example.com/a":        "token:idtok",
		"empty.example.com/a":         "podman-empty:3", // an empty entry does not count
		"unknown.example.com/a":       "anonymous",
		"registry-1.docker.io/user/x": "hub:2",
	} {
		a, err := Keychain.Resolve(target(t, repo))
		if err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
		if got := basicOf(t, a); got != want {
			t.Errorf("%s: %s, want %s", repo, got, want)
		}
	}

	// Only the file named.
	a, err := NewKeychain(filepath.Join(run, "containers", "auth.json")).Resolve(target(t, "quay.io/org/other"))
	if err != nil || basicOf(t, a) != "podman-org:3" {
		t.Errorf("NewKeychain: %v, %v", a, err)
	}
	if got := AuthFiles(); len(got) != 4 || got[0] != filepath.Join(home, "first.json") {
		t.Errorf("AuthFiles = %q", got)
	}
}

func TestKeychainErrors(t *testing.T) {
	_, dc, _, _ := isolateCredentials(t)
	cfg := filepath.Join(dc, "config.json")

	if err := os.WriteFile(cfg, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Keychain.Resolve(target(t, "quay.io/a/b")); err == nil || !strings.Contains(err.Error(), cfg) {
		t.Errorf("malformed file: %v, want an error naming %s", err, cfg)
	}

	writeJSON(t, cfg, map[string]any{"auths": map[string]any{"quay.io": map[string]string{"auth": "!!!"}}})
	if _, err := Keychain.Resolve(target(t, "quay.io/a/b")); err == nil || !strings.Contains(err.Error(), "quay.io") {
		t.Errorf("bad auth entry: %v", err)
	}
	if a, err := Keychain.Resolve(target(t, "ghcr.io/a/b")); err != nil || a != authn.Anonymous {
		t.Errorf("other registries must not suffer from a bad entry: %v, %v", a, err)
	}

	t.Setenv("PATH", t.TempDir())
	writeJSON(t, cfg, map[string]any{"credsStore": "missing"})
	if _, err := Keychain.Resolve(target(t, "quay.io/a/b")); err == nil || !strings.Contains(err.Error(), "docker-credential-missing") {
		t.Errorf("missing helper: %v, want an error naming docker-credential-missing", err)
	}
}
