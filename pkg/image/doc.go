// Package image pulls, inspects, unpacks and pushes container images for
// opm: the catalog and bundle images that `opm render`, `opm alpha bundle
// unpack`, `opm serve` image builds and `opm generate` work with.
//
// It builds on go-containerregistry and adds what opm needs around it: a
// content-addressed pull cache, a keychain that reads Docker's and Podman's
// auth files, image classification by labels, and an unpacker that refuses
// hostile layers (paths or links that leave the destination, devices, size
// bombs). The functions take a reference string and functional options:
//
//	img, err := image.Pull(ctx, "quay.io/org/catalog:v1",
//		image.WithSkipTLSVerify(skipTLSVerify), // --skip-tls-verify
//		image.WithPlainHTTP(useHTTP),           // --use-http
//		image.WithCacheDir(cacheDir))           // optional layer cache
//	labels, err := image.Labels(img)
//	err = image.Unpack(ctx, img, dir, image.WithPaths("/configs"))
//
// Extract does the whole dance `opm render` needs for an image reference:
// it pulls the image, decides from its labels whether it is a catalog or a
// bundle image and unpacks the catalog's configs directory or the bundle's
// manifests/ and metadata/ directories.
//
// # Credentials
//
// Unless WithAuth says otherwise, credentials come from
// Keychain: $REGISTRY_AUTH_FILE, the Docker configuration
// ($DOCKER_CONFIG/config.json or ~/.docker/config.json), podman's
// ${XDG_RUNTIME_DIR}/containers/auth.json and
// ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json, in this order, with
// their credential helpers (credHelpers, credsStore).
//
// # Untrusted layers
//
// Unpack treats every layer as hostile. It applies layers in order with
// whiteouts and opaque directories honoured, writes only through an
// os.Root opened on the destination, and rejects, with an *EntryError
// naming the image, the layer digest and the entry:
//
//   - entries whose cleaned path climbs out of the destination (a leading
//     "/" is stripped, like Docker and containerd do, so "/etc/x" lands in
//     DEST/etc/x);
//   - symbolic links with an absolute target or a relative target that
//     leaves the destination, judged both lexically when the link is
//     created and by resolving every link once all layers are applied
//     (so chains of individually harmless links cannot point out either);
//   - hard links to paths outside the destination, to entries that do not
//     exist or to anything but a regular file;
//   - character and block devices, FIFOs and unknown entry types;
//   - content beyond the Limits (DefaultLimits: 1 GiB per file, 4 GiB in
//     total, 1,000,000 entries) against decompression bombs.
//
// Set-user-ID, set-group-ID and sticky bits are dropped, group and other
// write permission is removed, and the owner always gets read and write
// (and search on directories), like upstream opm does.
//
// # Cache
//
// Unpack streams every layer of a pulled image straight from the registry,
// several at once (one more than GOMAXPROCS), decompressing each as it
// arrives (gzip or zstd, by klauspost/compress), and applies them strictly
// in order: a layer read before its turn keeps the entries that will
// matter, and the content of the files wanted, in an unlinked temporary
// file until then (layers.go). Without WithCacheDir nothing is kept. With
// WithCacheDir(dir), manifests, configs and
// layers are kept content-addressed under dir/blobs/sha256/<hex>, written
// atomically after their digest has been verified, and re-verified when
// read. A second pull of the same content downloads no blob again; a pull
// by digest needs no network at all. Nothing is ever evicted: the caller
// owns the directory.
package image
