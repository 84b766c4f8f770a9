package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Keychain finds registry credentials the way docker, podman and upstream
// opm do. It reads, in this order, and takes the first credential found:
//
//  1. $REGISTRY_AUTH_FILE;
//  2. $DOCKER_CONFIG/config.json, or ~/.docker/config.json without
//     $DOCKER_CONFIG;
//  3. ${XDG_RUNTIME_DIR}/containers/auth.json (podman, skopeo, buildah);
//  4. ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json.
//
// The environment is read on every lookup, and missing files are skipped.
// A file that cannot be read or parsed is an error naming the file.
// Within a file, a credential helper (credHelpers for the registry, else
// credsStore) is asked first; then the "auths" entry with the longest
// match: "registry/namespace/repo" before "registry/namespace" before
// "registry". Keys may carry an http:// or https:// scheme, and docker.io,
// index.docker.io and registry-1.docker.io are one registry. Without any
// credential the registry is accessed anonymously.
var Keychain authn.Keychain = fileKeychain{files: AuthFiles}

// NewKeychain returns a keychain that reads only the given auth files
// (Docker config.json or containers auth.json format), with the lookup
// rules of Keychain.
func NewKeychain(files ...string) authn.Keychain {
	list := append([]string(nil), files...)
	return fileKeychain{files: func() []string { return list }}
}

// AuthFiles returns the credential files Keychain reads, in order, as the
// environment names them now. The files need not exist.
func AuthFiles() []string {
	var files []string
	add := func(f string) {
		for _, seen := range files {
			if seen == f {
				return
			}
		}
		files = append(files, f)
	}
	if f := os.Getenv("REGISTRY_AUTH_FILE"); f != "" {
		add(filepath.Clean(f))
	}
	home, _ := os.UserHomeDir()
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		add(filepath.Join(d, "config.json"))
	} else if home != "" {
		add(filepath.Join(home, ".docker", "config.json"))
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		add(filepath.Join(d, "containers", "auth.json"))
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		add(filepath.Join(d, "containers", "auth.json"))
	} else if home != "" {
		add(filepath.Join(home, ".config", "containers", "auth.json"))
	}
	return files
}

type fileKeychain struct {
	files func() []string
}

var _ authn.ContextKeychain = fileKeychain{}

// Resolve implements authn.Keychain.
func (k fileKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), target)
}

// ResolveContext implements authn.ContextKeychain.
func (k fileKeychain) ResolveContext(ctx context.Context, target authn.Resource) (authn.Authenticator, error) {
	for _, file := range k.files() {
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read credentials file %s: %w", file, err)
		}
		cfg, found, err := lookupAuth(ctx, data, target)
		if err != nil {
			return nil, fmt.Errorf("credentials file %s: %w", file, err)
		}
		if found {
			return authn.FromConfig(cfg), nil
		}
	}
	return authn.Anonymous, nil
}

// authFile is the part of a Docker config.json or containers auth.json
// that holds credentials.
type authFile struct {
	Auths       map[string]json.RawMessage `json:"auths"`
	CredHelpers map[string]string          `json:"credHelpers"`
	CredsStore  string                     `json:"credsStore"`
}

// lookupAuth finds the credential for target in the auth file data.
func lookupAuth(ctx context.Context, data []byte, target authn.Resource) (authn.AuthConfig, bool, error) {
	var f authFile
	if err := json.Unmarshal(data, &f); err != nil {
		return authn.AuthConfig{}, false, fmt.Errorf("parse: %w", err)
	}
	reg := canonicalHost(target.RegistryStr())

	helper := f.CredsStore
	for key, h := range f.CredHelpers {
		if canonicalHost(authKey(key)) == reg && h != "" {
			helper = h
			break
		}
	}
	if helper != "" {
		cfg, found, err := runCredentialHelper(ctx, helper, helperServerURL(reg))
		if err != nil || found {
			return cfg, found, err
		}
	}

	entries := make(map[string]string, len(f.Auths)) // normalised key -> raw key
	keys := make([]string, 0, len(f.Auths))
	for k := range f.Auths {
		keys = append(keys, k)
	}
	// Keys without a scheme first, so that "quay.io" wins over
	// "https://quay.io" when both are present; sorted for determinism.
	sort.Slice(keys, func(i, j int) bool {
		si, sj := strings.Contains(keys[i], "://"), strings.Contains(keys[j], "://")
		if si != sj {
			return !si
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		n := authKey(k)
		if i := strings.IndexByte(n, '/'); i >= 0 {
			n = canonicalHost(n[:i]) + n[i:]
		} else {
			n = canonicalHost(n)
		}
		if _, dup := entries[n]; !dup {
			entries[n] = k
		}
	}
	for _, cand := range authCandidates(reg, target) {
		raw, ok := entries[cand]
		if !ok {
			continue
		}
		var cfg authn.AuthConfig
		if err := json.Unmarshal(f.Auths[raw], &cfg); err != nil {
			return authn.AuthConfig{}, false, fmt.Errorf("auths entry %q: %w", raw, err)
		}
		cfg.Auth = "" // decoded into Username and Password by UnmarshalJSON
		if cfg == (authn.AuthConfig{}) {
			continue
		}
		return cfg, true, nil
	}
	return authn.AuthConfig{}, false, nil
}

// authCandidates lists the keys that may hold target's credential, most
// specific first: registry/ns/repo, registry/ns, registry.
func authCandidates(reg string, target authn.Resource) []string {
	repo := strings.TrimPrefix(target.String(), target.RegistryStr())
	repo = strings.Trim(repo, "/")
	cands := []string{}
	if repo != "" {
		parts := strings.Split(repo, "/")
		for i := len(parts); i > 0; i-- {
			cands = append(cands, reg+"/"+strings.Join(parts[:i], "/"))
		}
		if reg == "docker.io" && len(parts) == 2 && parts[0] == "library" {
			// podman stores "docker.io/busybox" for official images too.
			cands = append([]string{reg + "/" + parts[1]}, cands...)
		}
	}
	return append(cands, reg)
}

// authKey normalises an auths or credHelpers key: a key with a scheme is a
// URL of which only the host counts (docker's legacy
// "https://index.docker.io/v1/"); a key without one may name a
// repository ("quay.io/org/repo"), as podman allows.
func authKey(k string) string {
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
		if j := strings.IndexByte(k, '/'); j >= 0 {
			k = k[:j]
		}
		return k
	}
	return strings.TrimRight(k, "/")
}

// canonicalHost folds Docker Hub's aliases into "docker.io".
func canonicalHost(h string) string {
	switch h {
	case "docker.io", "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return h
}

// helperServerURL is the server URL credential helpers store a registry
// under: Docker Hub keeps its historical URL.
func helperServerURL(reg string) string {
	if reg == "docker.io" {
		return authn.DefaultAuthKey
	}
	return reg
}

// runCredentialHelper asks docker-credential-<helper> for serverURL's
// credential, following the docker credential helper protocol.
func runCredentialHelper(ctx context.Context, helper, serverURL string) (authn.AuthConfig, bool, error) {
	prog := "docker-credential-" + helper
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, "get")
	cmd.Stdin = strings.NewReader(serverURL)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		out := strings.TrimSpace(stdout.String() + " " + stderr.String())
		if strings.Contains(strings.ToLower(out), "credentials not found") {
			return authn.AuthConfig{}, false, nil
		}
		if out != "" {
			return authn.AuthConfig{}, false, fmt.Errorf("credential helper %s for %s: %w: %s", prog, serverURL, err, out)
		}
		return authn.AuthConfig{}, false, fmt.Errorf("credential helper %s for %s: %w", prog, serverURL, err)
	}
	var creds struct {
		Username string `json:"Username"`
		Secret   string `json:"Secret"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &creds); err != nil {
		return authn.AuthConfig{}, false, fmt.Errorf("credential helper %s for %s: parse its answer: %w", prog, serverURL, err)
	}
	if creds.Username == "" && creds.Secret == "" {
		return authn.AuthConfig{}, false, nil
	}
	if creds.Username == "<token>" {
		return authn.AuthConfig{IdentityToken: creds.Secret}, true, nil
	}
	return authn.AuthConfig{Username: creds.Username, Password: creds.Secret}, true, nil
}
