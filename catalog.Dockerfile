# The opm image: the static opm, opm-full, grpc_health_probe and opm-graphviz binaries on a
# distroless base, run as a non-root user. It is the base and builder image
# that `opm generate dockerfile` and `opm generate image` build catalog
# images on.
#
# Build the binaries (CGO_ENABLED=0, so static), then the image, from the
# repository root:
#
#   make build
#   docker build -f catalog.Dockerfile -t quay.io/example/opm:dev .
#
# For another architecture, build the binaries for it first, for example
# `GOARCH=arm64 make build`, and add `--platform linux/arm64`.
# catalog.Dockerfile.dockerignore keeps everything else out of the build
# context.
FROM gcr.io/distroless/static:nonroot

COPY bin/opm /bin/opm
COPY bin/grpc_health_probe /bin/grpc_health_probe
# Graphviz for the SVG drawings (render-graph -o svg, the HTTP side's
# graph.svg), a program of its own so that opm starts without it.
COPY bin/opm-graphviz /bin/opm-graphviz
# The opm that links every package: the lean /bin/opm runs it for the
# commands it leaves out (serve --http-addr, query, diff, hub, ...), so
# that serve and validate start small (docs/performance.md).
COPY bin/opm-full /bin/opm-full

# distroless's "nonroot" user (it has an /etc/passwd line there), given by
# number so that Kubernetes' runAsNonRoot can check it.
USER 65532:65532

ENTRYPOINT ["/bin/opm"]
