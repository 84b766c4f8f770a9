// Package cache is the serve snapshot of a catalog: every bundle answer of
// the Registry API encoded once as protobuf, in segments that pkg/server
// joins with the per-channel fields when it sends them, plus the serialized
// query index (package registry) and the catalog's fingerprint, in one
// file.
//
// Build (the cold start) reads the catalog once and writes the answers to
// an unlinked temporary file as they are produced; BuildDir writes a cache
// into a directory (opm serve --cache-dir, --cache-only), byte for byte the
// same for the same catalog and opm (its records are put in the index's
// order once the parallel load is done); OpenDir and Open
// load a saved cache by reading its small index only, and answers are read
// from the file when a request needs them. A cache that is missing, from
// another format version, corrupt (checked by CRC-32C: the index at start,
// each answer when it is read) or stale (Fingerprint.Check) is reported as
// a *RejectedError with the precise reason.
package cache
