package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), strings.NewReader(`digraph g { a -> b [label="replaces"] }`), &out, 0); err != nil {
		t.Fatal(err)
	}
	var svg struct{ XMLName xml.Name }
	if err := xml.Unmarshal(out.Bytes(), &svg); err != nil || svg.XMLName.Local != "svg" {
		t.Fatalf("not SVG (%v): %.200s", err, out.String())
	}
	for _, want := range []string{"<title>a</title>", "<title>b</title>", "<title>a&#45;&gt;b</title>", "replaces"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	out.Reset()
	if err := run(t.Context(), strings.NewReader(`digraph g { a -> `), &out, 0); err == nil || out.Len() != 0 {
		t.Errorf("bad DOT: %v, %d bytes written", err, out.Len())
	}
	// Past the bound opm passes, nothing is written: the WebAssembly
	// runtime alone is more than 1 MB.
	if peakMemory() == 0 {
		t.Skip("no /proc/self/status: the bound is not checked here")
	}
	if err := run(t.Context(), strings.NewReader(`digraph g { a -> b }`), &out, 1<<20); !errors.Is(err, errTooLarge) || out.Len() != 0 {
		t.Errorf("past the memory bound: %v, %d bytes written", err, out.Len())
	}
}
