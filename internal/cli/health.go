package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/three-good-sources/3gs/internal/textnorm"
)

// The container image is FROM scratch: no shell, no curl. Its health check
// is therefore the binary itself asking the server it runs beside.
// healthOptions are health's flags.
type healthOptions struct {
	url, allowHost string
	timeout        durationFlag
}

func healthFlags(f *Flags) {
	o := options[healthOptions](f)
	f.StringVar(&o.url, "url", "THREEGS_HEALTH_URL", "http://127.0.0.1:8080/health", "the /health URL to ask; the default is where the container image serves")
	f.StringVar(&o.allowHost, "allow-host", "THREEGS_ALLOW_HOST", "", "serve's --allow-host: when the URL names this machine, the first name is sent as the Host header, since a server bound beyond loopback with --allow-host answers to those names only")
	f.DurationVar(&o.timeout, "timeout", "THREEGS_HEALTH_TIMEOUT", "5s", "how long the whole check may take")
}

// healthAnswer is the part of /health the check reads. It is decoded
// leniently: a check run against a newer server must not fail on a field
// it does not know.
type healthAnswer struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Registry *struct {
		Version    string `json:"version"`
		Categories int    `json:"categories"`
		Verified   bool   `json:"verified"`
	} `json:"registry"`
}

// runHealth exits 0 when /health answers 200 with status ok, and 1
// otherwise (unreachable, still loading, anything else), printing one line
// either way, which is what Docker keeps as the health check's output.
func runHealth(ctx context.Context, env *Env, f *Flags) int {
	o := options[healthOptions](f)
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(env.Stderr, "3gs health: --url (THREEGS_HEALTH_URL) must be an http:// or https:// URL, got %q\n", o.url)
		return ExitUsage
	}
	timeout, err := o.timeout.get()
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs health: %v\n", err)
		return ExitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs health: %v\n", err)
		return ExitUsage
	}
	if hosts := list(o.allowHost); len(hosts) > 0 && isLocalHost(u.Hostname()) {
		req.Host = hosts[0]
	}
	client := &http.Client{
		// A redirect is not health: the check asks one server.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs health: %s: %v\n", u, err)
		return ExitFail
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs health: %s: reading the answer: %v\n", u, err)
		return ExitFail
	}
	var h healthAnswer
	if err := json.Unmarshal(body, &h); err != nil {
		fmt.Fprintf(env.Stderr, "3gs health: %s: HTTP %d, not a 3gs /health answer: %s\n", u, resp.StatusCode, textnorm.Terminal(fmt.Sprintf("%.200s", strings.TrimSpace(string(body)))))
		return ExitFail
	}
	if resp.StatusCode != http.StatusOK || h.Status != "ok" {
		fmt.Fprintf(env.Stderr, "3gs health: %s: HTTP %d, status %q\n", u, resp.StatusCode, h.Status)
		return ExitFail
	}
	line := fmt.Sprintf("ok: %s answers, 3gs %s", u, h.Version)
	if r := h.Registry; r != nil {
		signed := "signature not verified"
		if r.Verified {
			signed = "signature verified"
		}
		line += fmt.Sprintf(", registry %s (%d categories, %s)", r.Version, r.Categories, signed)
	}
	fmt.Fprintln(env.Stdout, textnorm.Terminal(line)) // the versions are the server's words
	return ExitOK
}

// isLocalHost says whether host names this machine: loopback, or the
// unspecified address a server may be bound to (0.0.0.0, ::).
func isLocalHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
