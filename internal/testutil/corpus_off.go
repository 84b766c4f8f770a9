//go:build !corpus

package testutil

// Corpus is false in the default build: the differential tests run over
// a representative sample of their corpora (Sample).
const Corpus = false
