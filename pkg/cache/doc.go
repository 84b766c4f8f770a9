// Package cache is the serve snapshot of a catalog: every bundle answer of
// the Registry API encoded once as protobuf, in segments that pkg/server
// joins with the per-channel fields when it sends them, plus the serialized
// query index (package registry) and the catalog's fingerprint, in one
// file.
//
// The package is the storage format only; the load that fills it (one pass
// over the catalog with package registry) and its memory policy belong to
// the serve action (alpha/action: LoadServeTemp, LoadServeDir).
//
// A Writer stores answers as the load produces them: into scratch storage
// that is served as it is (Writer.Snapshot: the cold start), or, through a
// DirBuild, into a cache file in a directory (opm serve --cache-dir,
// --cache-only), byte for byte the same for the same catalog and opm (its
// records are put in the index's order once the parallel load is done),
// renamed into place when complete. OpenDir and Open load a saved cache by
// reading its small index; Verify checks every stored answer (opm serve
// runs it before it serves); answers are read from the file when a request
// needs them, and checked again then. A cache that is missing, from
// another format version, corrupt (CRC-32C of the index and of every
// answer) or stale (Fingerprint.Check) is reported as a *RejectedError
// with the precise reason.
//
// The catalog's JSON lines (lines.go), which the HTTP side of opm serve
// serves, are in a saved cache only when its build asked for them
// (DirBuild.KeepLines); for a cache without them, LineBuilder and
// Snapshot.AddLines give a snapshot the same lines read from the catalog.
package cache
