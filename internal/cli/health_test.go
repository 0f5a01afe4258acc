package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// 3gs health passes only a 200 with status ok; a loading server, an
// error page, a redirect and a closed port all fail with exit 1.
func TestHealthCommand(t *testing.T) {
	var mu sync.Mutex
	status, body, lastHost := 200, `{"status":"ok","version":"v1.2.3","registry":{"version":"1.1.0","categories":16,"verified":true},"new_field":1}`, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		lastHost = r.Host
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/health", http.StatusFound)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	set := func(s int, b string) { mu.Lock(); status, body = s, b; mu.Unlock() }
	url := srv.URL + "/health"

	code, out, errOut := run(t, nil, "health", "--url", url)
	if code != ExitOK || !strings.Contains(out, "3gs v1.2.3, registry 1.1.0 (16 categories, signature verified)") {
		t.Errorf("ok: exit %d\n%s%s", code, out, errOut)
	}
	// The environment twin, and the Host an --allow-host server needs.
	code, _, errOut = run(t, map[string]string{"THREEGS_HEALTH_URL": url, "THREEGS_ALLOW_HOST": "mcp.example.com,other.example"}, "health")
	mu.Lock()
	host := lastHost
	mu.Unlock()
	if code != ExitOK || host != "mcp.example.com" {
		t.Errorf("allow-host: exit %d, Host %q\n%s", code, host, errOut)
	}

	set(503, `{"status":"loading","version":"v1.2.3"}`)
	if code, out, errOut := run(t, nil, "health", "--url", url); code != ExitFail || out != "" || !strings.Contains(errOut, `HTTP 503, status "loading"`) {
		t.Errorf("loading: exit %d\n%s%s", code, out, errOut)
	}
	set(200, `<html>proxy error</html>`)
	if code, _, errOut := run(t, nil, "health", "--url", url); code != ExitFail || !strings.Contains(errOut, "not a 3gs /health answer") {
		t.Errorf("not JSON: exit %d\n%s", code, errOut)
	}
	set(200, `{"status":"ok"}`)
	if code, _, errOut := run(t, nil, "health", "--url", srv.URL+"/moved"); code != ExitFail || !strings.Contains(errOut, "HTTP 302") {
		t.Errorf("redirect: exit %d\n%s", code, errOut)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/health"
	ln.Close()
	if code, _, errOut := run(t, nil, "health", "--url", closed, "--timeout", "2s"); code != ExitFail || !strings.Contains(errOut, "3gs health: "+closed) {
		t.Errorf("closed port: exit %d\n%s", code, errOut)
	}
	if code, _, _ := run(t, nil, "health", "--url", "ftp://example.com/health"); code != ExitUsage {
		t.Errorf("ftp URL: exit %d", code)
	}
	if code, _, _ := run(t, nil, "health", "--timeout", "soon"); code != ExitUsage {
		t.Errorf("bad timeout: exit %d", code)
	}
}
