package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), strings.NewReader(`digraph g { a -> b [label="replaces"] }`), &out); err != nil {
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
	if err := run(t.Context(), strings.NewReader(`digraph g { a -> `), &out); err == nil || out.Len() != 0 {
		t.Errorf("bad DOT: %v, %d bytes written", err, out.Len())
	}
}
