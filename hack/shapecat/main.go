// Command shapecat writes the synthetic catalogs of internal/shapecat to
// disk, for `make bench`:
//
//	go run ./hack/shapecat -out /tmp/shapes            # every shape, at its N
//	go run ./hack/shapecat -out /tmp/shapes -n 100 chain
//
// Each shape goes to OUT/<shape>/shape/catalog.json; a shape whose
// directory exists is left as it is.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastopm/fastopm/internal/shapecat"
)

func main() {
	out := flag.String("out", "", "directory to write the catalogs into")
	n := flag.Int("n", 0, "size of each catalog (0: the shape's own N)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: shapecat -out DIR [-n N] [SHAPE...]\n\nshapes:\n")
		for _, s := range shapecat.Shapes {
			fmt.Fprintf(os.Stderr, "  %-14s %s (N=%d)\n", s.Name, s.Doc, s.N)
		}
		fmt.Fprintf(os.Stderr, "\nhostile shapes (named only; not written by default):\n")
		for _, s := range shapecat.Hostile {
			fmt.Fprintf(os.Stderr, "  %-16s %s (N=%d)\n", s.Name, s.Doc, s.N)
		}
	}
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	names := flag.Args()
	if len(names) == 0 {
		names = shapecat.Names()
	}
	for _, name := range names {
		s, ok := shapecat.LookupAny(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "shapecat: unknown shape %q (shapes: %s; hostile: %s)\n", name, strings.Join(shapecat.Names(), ", "), strings.Join(shapecat.HostileNames(), ", "))
			os.Exit(2)
		}
		if err := write(s, filepath.Join(*out, name), *n); err != nil {
			fmt.Fprintln(os.Stderr, "shapecat:", err)
			os.Exit(1)
		}
	}
}

func write(s shapecat.Shape, dir string, n int) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	file := filepath.Join(tmp, filepath.FromSlash(shapecat.File))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := s.Write(f, n); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
