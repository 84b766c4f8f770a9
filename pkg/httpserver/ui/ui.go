// Package ui is the web page of `opm serve --http-addr`: one HTML page, a
// script, a style sheet and an icon, embedded in the binary. The page
// searches the catalog's packages, shows a package's channels, bundles and
// upgrade graph, and asks where an installed version updates to, all
// through pkg/httpserver's JSON routes, with relative URLs, so that it
// works at "/" and at catalogd's "/catalogs/NAME/".
//
// Handler serves the page relative to where it is mounted (behind
// http.StripPrefix): the page at "" and "index.html", the assets at
// "ui/NAME". Every answer carries a Content-Security-Policy that allows
// only the server's own scripts, styles and images (and data: images), and
// X-Content-Type-Options: nosniff. Every file has a strong ETag, its
// content's hash, answered 304 on If-None-Match, and Cache-Control:
// no-cache: the assets' URLs carry no version, so a browser revalidates
// them (a cheap 304) rather than pair a new page with an old script.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every answer of Handler.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'"

// file is one embedded file, ready to serve.
type file struct {
	name        string // the asset's name, for ServeContent
	data        []byte
	contentType string
	etag        string
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".png":  "image/png",
}

// files maps request paths (relative to the mount point) to files.
var files = load()

func load() map[string]*file {
	m := map[string]*file{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		name := strings.TrimPrefix(p, "assets/")
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		f := &file{name: name, data: data, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		if name == "index.html" {
			m[""] = f
			m["index.html"] = f
		} else {
			m["ui/"+name] = f
		}
		return nil
	})
	if err != nil {
		// The files are compiled in: this cannot fail at run time.
		panic("ui: reading the embedded files: " + err.Error())
	}
	return m
}

// Handler serves the page at "" and "index.html" and its assets at
// "ui/NAME", relative to where it is mounted: mount it behind
// http.StripPrefix so that r.URL.Path is relative to the page's directory
// (a leading "/" is ignored). Anything else is a 404; methods other than
// GET and HEAD a 405.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	f, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "no-cache")
	// ServeContent answers HEAD, If-None-Match (304) and Range; the
	// embedded files have no modification time, the ETag stands for it.
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
}
