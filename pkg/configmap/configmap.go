// Package configmap writes a bundle directory into a ConfigMap, as
// `opm alpha bundle extract` does inside OLM's bundle-unpack Jobs: every
// file of manifests/ and metadata/ becomes a data key (gzipped and base64
// encoded into binaryData with -z), metadata/annotations.yaml becomes the
// ConfigMap's annotations.
//
// The rules are upstream's (operator-registry pkg/configmap): see Read and
// Apply. Write gets and updates the ConfigMap through client-go (Client:
// its REST client with a core/v1-only scheme; RESTConfig: a kubeconfig or
// the in-cluster configuration).
package configmap

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The annotations upstream's extract sets besides the bundle's.
const (
	// EnvContainerImage names the environment variable OLM sets to the
	// bundle image in the unpack Job; its value goes into the
	// SourceImageAnnotation.
	EnvContainerImage     = "CONTAINER_IMAGE"
	SourceImageAnnotation = "olm.sourceImage"
	// EncodingAnnotation is set to EncodingGzip when the data is in
	// binaryData, gzipped and base64 encoded.
	EncodingAnnotation = "olm.contentEncoding"
	EncodingGzip       = "gzip+base64"
)

// The bundle annotations copied from annotations.yaml.
const (
	annotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	annotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	annotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	annotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	annotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	annotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// annotationsFileName is the file, in either directory, that holds the
// bundle annotations rather than data.
const annotationsFileName = "annotations.yaml"

// subDirs are the directories read, in this order, relative to the bundle
// directory.
var subDirs = []string{"manifests/", "metadata/"}

// AnnotationsFile is what extract reads of annotations.yaml. The type and
// field names are upstream's, so that a decoding error reads the same.
type AnnotationsFile struct {
	Annotations struct {
		Resources      string `json:"operators.operatorframework.io.bundle.manifests.v1"`
		MediaType      string `json:"operators.operatorframework.io.bundle.mediatype.v1"`
		Metadata       string `json:"operators.operatorframework.io.bundle.metadata.v1"`
		Package        string `json:"operators.operatorframework.io.bundle.package.v1"`
		Channels       string `json:"operators.operatorframework.io.bundle.channels.v1"`
		ChannelDefault string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
	} `json:"annotations"`
}

// Logger receives extract's log lines (upstream logs them with logrus):
// a level ("info", "error"), a message and fields as key, value pairs.
type Logger func(level, msg string, fields ...string)

// Content is what a bundle directory puts into a ConfigMap.
type Content struct {
	// Data holds the files by key, plain or (Gzip) gzipped and base64
	// encoded.
	Data map[string][]byte
	Gzip bool
	// Annotations are the bundle annotations of annotations.yaml, all six
	// keys, empty values included; nil when there is no annotations.yaml.
	Annotations map[string]string
}

// unallowedKeyChars are the characters a ConfigMap key cannot hold; each
// is replaced by "-" (upstream's TranslateInvalidChars).
var unallowedKeyChars = regexp.MustCompile("[^-A-Za-z0-9_.]")

// Key is the data key of a file name: each character outside
// [-A-Za-z0-9_.] (each byte of an invalid UTF-8 sequence) replaced by "-".
func Key(name string) string {
	return unallowedKeyChars.ReplaceAllString(name, "-")
}

// LimitError is the error of a bundle whose data exceeds the limit.
type LimitError struct{ Limit uint64 }

func (e *LimitError) Error() string {
	return fmt.Sprintf("bundle files exceeded %v bytes limit", e.Limit)
}

// Read reads the bundle directory dir as upstream's extract does: the
// entries of dir+"manifests/" then dir+"metadata/" (dir is used as given,
// so it should end with a slash, as OLM's "/bundle/" does), in name order,
// hidden files included. annotations.yaml (in either) is decoded into
// Annotations; every other file is a data entry under Key(name), a later
// file replacing an earlier one of the same key. The data's total size
// (after encoding) may not exceed limit; annotations.yaml does not count.
//
// Unlike upstream, which reads a file whole before it checks the limit and
// blocks forever on a named pipe, Read stops a file as soon as it is
// over the limit and refuses files that are not regular (after links)
// with the error upstream gives for a directory's entry that is not a
// file ("read PATH: ...").
func Read(dir string, gz bool, limit uint64, log Logger) (*Content, error) {
	if log == nil {
		log = func(string, string, ...string) {}
	}
	c := &Content{Data: map[string][]byte{}, Gzip: gz}
	var total uint64
	for _, sub := range subDirs {
		completePath := dir + sub
		entries, err := os.ReadDir(completePath)
		if err != nil {
			log("error", fmt.Sprintf("read dir failed: %v", err))
			return nil, err
		}
		for _, e := range entries {
			path := completePath + e.Name()
			log("info", "Reading file", "file", path)
			if e.Name() == annotationsFileName {
				b, err := readRegular(path, -1)
				if err != nil {
					log("error", fmt.Sprintf("read failed: %v", err), "file", path)
					return nil, err
				}
				var af AnnotationsFile
				if err := yaml.Unmarshal(b, &af); err != nil {
					return nil, err
				}
				a := af.Annotations
				c.Annotations = map[string]string{
					annotationManifests:      a.Resources,
					annotationMediaType:      a.MediaType,
					annotationMetadata:       a.Metadata,
					annotationPackage:        a.Package,
					annotationChannels:       a.Channels,
					annotationDefaultChannel: a.ChannelDefault,
				}
				continue
			}
			remaining := int64(-1) // no limit
			if limit-total <= 1<<62 {
				remaining = int64(limit - total)
			}
			var content []byte
			if gz {
				content, err = readGzipBase64(path, remaining)
			} else {
				content, err = readRegular(path, remaining)
			}
			var over *overError
			if errors.As(err, &over) {
				log("error", fmt.Sprintf("Bundle files exceeded %v bytes limit", limit), "file", path)
				return nil, &LimitError{limit}
			}
			if err != nil {
				if gz && !errors.As(err, new(*fs.PathError)) {
					log("error", fmt.Sprintf("failed to gzip encode file %v: %v", e.Name(), err), "file", path)
				} else {
					log("error", fmt.Sprintf("read failed: %v", err), "file", path)
				}
				return nil, err
			}
			total += uint64(len(content))
			key := Key(e.Name())
			if key != e.Name() {
				log("info", "translated filename for configmap compatibility", "file.Name", e.Name(), "validConfigMapKey", key)
			}
			c.Data[key] = content
		}
	}
	return c, nil
}

// overError means a file would take the data over the limit.
type overError struct{}

func (*overError) Error() string { return "over the data limit" }

// open opens path for reading if it is a regular file (after links).
// Directories give the error reading one gives ("read PATH: is a
// directory"); other kinds of files are refused without being opened,
// since opening a named pipe blocks.
func open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		// Report what opening it reports ("open PATH: ..."), as upstream.
		f, oerr := os.Open(path)
		if oerr != nil {
			return nil, oerr
		}
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", kind(st.Mode()))}
	}
	return os.Open(path)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return m.Type().String()
}

// readRegular reads the regular file at path, or fails with *overError as
// soon as it holds more than max bytes (max < 0: no limit).
func readRegular(path string, max int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		if max >= 0 && st.Size() > max {
			return nil, &overError{}
		}
		buf.Grow(int(st.Size()))
	}
	if err := copyCapped(&buf, f, max); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readGzipBase64 returns the file at path gzipped (default level, no name,
// no time) and base64 encoded, as upstream's GzipBase64Encode does, or
// fails with *overError as soon as the encoding is longer than max bytes.
func readGzipBase64(path string, max int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	var out io.Writer = &buf
	if max >= 0 {
		out = &cappedWriter{w: &buf, left: max}
	}
	b64 := base64.NewEncoder(base64.StdEncoding, out)
	zw := gzip.NewWriter(b64)
	if _, err := io.Copy(zw, f); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := b64.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyCapped copies r to w, failing with *overError past max bytes
// (max < 0: no limit).
func copyCapped(w io.Writer, r io.Reader, max int64) error {
	if max < 0 {
		_, err := io.Copy(w, r)
		return err
	}
	n, err := io.Copy(w, io.LimitReader(r, max+1))
	if err != nil {
		return err
	}
	if n > max {
		return &overError{}
	}
	return nil
}

// cappedWriter fails with *overError once more than left bytes were
// written.
type cappedWriter struct {
	w    io.Writer
	left int64
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, &overError{}
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}

// Apply puts c into cm as upstream does: data and binaryData are replaced
// (the one not used emptied), the annotations replaced by the bundle's
// when there is an annotations.yaml (and kept otherwise), then
// SourceImageAnnotation set to sourceImage when it is not empty and
// EncodingAnnotation to EncodingGzip when the data is gzipped. Labels,
// owner references and the rest of cm stay as they are.
func Apply(cm *corev1.ConfigMap, c *Content, sourceImage string) {
	cm.Data = map[string]string{}
	cm.BinaryData = map[string][]byte{}
	for k, v := range c.Data {
		if c.Gzip {
			cm.BinaryData[k] = v
		} else {
			cm.Data[k] = string(v)
		}
	}
	if c.Annotations != nil {
		a := make(map[string]string, len(c.Annotations)+2)
		for k, v := range c.Annotations {
			a[k] = v
		}
		cm.Annotations = a
	}
	if sourceImage != "" {
		setAnnotation(cm, SourceImageAnnotation, sourceImage)
	}
	if c.Gzip {
		setAnnotation(cm, EncodingAnnotation, EncodingGzip)
	}
}

func setAnnotation(cm *corev1.ConfigMap, k, v string) {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[k] = v
}
