//go:build corpus

package testutil

// Corpus is true in the corpus build (-tags corpus): the differential
// tests run over their whole corpora.
const Corpus = true
