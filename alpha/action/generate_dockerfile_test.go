package action

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// defaultDockerfile is upstream opm's output for `opm generate dockerfile
// catalog` with default flags (compat.md §5), byte for byte.
const defaultDockerfile = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM quay.io/operator-framework/opm:latest as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM quay.io/operator-framework/opm:latest
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
`

// scratchDockerfile is upstream's output with -i scratch -b my/builder:v1
// and two labels given out of order.
const scratchDockerfile = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM my/builder:v1 as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD my-catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL "a.b"="x=y"
LABEL "z"="last, "quoted""
`

func TestGenerateDockerfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		dir     string
		gen     GenerateDockerfile
		want    string
		wantErr string
		wantIs  error
	}{
		{name: "defaults", dir: "catalog", gen: GenerateDockerfile{BaseImage: DefaultOpmImage, BuilderImage: DefaultOpmImage}, want: defaultDockerfile},
		{name: "trailing slash", dir: "catalog/", gen: GenerateDockerfile{BaseImage: DefaultOpmImage, BuilderImage: DefaultOpmImage}, want: defaultDockerfile},
		{name: "scratch with labels", dir: "my-catalog", gen: GenerateDockerfile{BaseImage: "scratch", BuilderImage: "my/builder:v1",
			ExtraLabels: map[string]string{"z": `last, "quoted"`, "a.b": "x=y"}}, want: scratchDockerfile},
		{name: "scratch builder", dir: "catalog", gen: GenerateDockerfile{BaseImage: DefaultOpmImage, BuilderImage: "scratch"}, wantErr: `invalid builder image: "scratch"`},
		{name: "no base image", dir: "catalog", gen: GenerateDockerfile{BuilderImage: DefaultOpmImage}, wantErr: "base image is unset"},
		{name: "missing directory", dir: "", gen: GenerateDockerfile{BaseImage: DefaultOpmImage, BuilderImage: DefaultOpmImage}, wantIs: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir := filepath.Join(parent, "missing")
			if tt.dir != "" {
				dir = filepath.Join(parent, tt.dir)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(tt.dir, "/") {
					dir += "/"
				}
			}
			tt.gen.Dir = dir
			err := tt.gen.Run()
			switch {
			case tt.wantIs != nil:
				if !errors.Is(err, tt.wantIs) {
					t.Fatalf("error %v, want %v", err, tt.wantIs)
				}
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}
			if tt.want == "" {
				ents, _ := os.ReadDir(parent)
				for _, e := range ents {
					if strings.HasSuffix(e.Name(), ".Dockerfile") {
						t.Errorf("failed run left %s behind", e.Name())
					}
				}
				return
			}
			got, err := os.ReadFile(filepath.Join(parent, strings.TrimSuffix(tt.dir, "/")+".Dockerfile"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Dockerfile:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestGenerateDockerfileRefusesToOverwrite(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "catalog")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(parent, "catalog.Dockerfile")
	if err := os.WriteFile(existing, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := GenerateDockerfile{Dir: dir, BaseImage: DefaultOpmImage, BuilderImage: DefaultOpmImage}
	err := gen.Run()
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), existing) {
		t.Fatalf("error %v, want one naming %s that matches fs.ErrExist", err, existing)
	}
	if data, _ := os.ReadFile(existing); string(data) != "mine" {
		t.Errorf("existing Dockerfile was changed to %q", data)
	}
	// A dangling symlink counts as existing too: never write through it.
	link := filepath.Join(parent, "other.Dockerfile")
	if err := os.Symlink(filepath.Join(parent, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(parent, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	gen.Dir = filepath.Join(parent, "other")
	if err := gen.Run(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("error %v, want fs.ErrExist", err)
	}
	if _, err := os.Lstat(filepath.Join(parent, "elsewhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("wrote through a symbolic link")
	}
}

func TestParseLabels(t *testing.T) {
	t.Parallel()
	got, err := ParseLabels([]string{"a=1", "b=x=y", "a=2", "c="})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["a"] != "2" || got["b"] != "x=y" || got["c"] != "" {
		t.Errorf("labels %v", got)
	}
	if _, err := ParseLabels([]string{"novalue"}); err == nil || err.Error() != `invalid label "novalue"` {
		t.Errorf("error %v", err)
	}
}
