package httpserver

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// CertReloader serves a certificate and key from files, and reads them
// again when they change (cert-manager and service-serving certificates
// are renewed in place), checking at most every few seconds. A renewed
// pair that does not load leaves the previous one in use.
type CertReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]time.Time // the files' modification times when loaded
	checked time.Time
}

// certCheckInterval is how often the files are looked at.
const certCheckInterval = 5 * time.Second

// NewCertReloader loads the pair, or says why it cannot.
func NewCertReloader(certFile, keyFile string) (*CertReloader, error) {
	r := &CertReloader{certFile: certFile, keyFile: keyFile}
	stamp, err := r.stamps()
	if err == nil {
		err = r.load(stamp)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *CertReloader) stamps() ([2]time.Time, error) {
	var st [2]time.Time
	for i, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return st, fmt.Errorf("TLS: %w", err)
		}
		st[i] = fi.ModTime()
	}
	return st, nil
}

func (r *CertReloader) load(stamp [2]time.Time) error {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS: load certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert, r.stamp = &c, stamp
	return nil
}

// GetCertificate is tls.Config's GetCertificate.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.checked) >= certCheckInterval {
		r.checked = now
		if stamp, err := r.stamps(); err == nil && stamp != r.stamp {
			_ = r.load(stamp) // keep the previous pair when the new one is half-written
		}
	}
	return r.cert, nil
}

// TLSConfig is a server configuration serving the reloaded pair.
func (r *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}
