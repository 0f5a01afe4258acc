package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// startNginx checks conf with nginx -t, then runs nginx (bin) on it in
// the foreground, its prefix and error log in dir, for as long as the
// test runs.
func startNginx(t *testing.T, bin, dir, conf string) *testkit.Proc {
	t.Helper()
	errLog := filepath.Join(dir, "error.log")
	if out, err := exec.Command(bin, "-t", "-p", dir, "-e", errLog, "-c", conf).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t on %s: %v\n%s", conf, err, out)
	}
	return testkit.Start(t, dir, "nginx", bin, "-p", dir, "-e", errLog, "-c", conf, "-g", "daemon off;")
}

// pinnedClient is a client for the public name host that reaches its
// ports 443 and 80 at httpsAddr and httpAddr on loopback and nowhere
// else, trusts only ca, and follows no redirect (the test reads them).
func pinnedClient(ca *x509.CertPool, host, httpsAddr, httpAddr string) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: ca},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				switch addr {
				case host + ":443":
					addr = httpsAddr
				case host + ":80":
					addr = httpAddr
				default:
					return nil, fmt.Errorf("the test reaches only %s, not %s", host, addr)
				}
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
