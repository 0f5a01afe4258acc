package httpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/httpserver"
)

// accessLines are the access-log lines (msg "http") and the lines that
// count those left out, read from the harness's JSON log.
func accessLines(t *testing.T, h *harness) (lines []map[string]any, skipped []int) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		if l == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("a log line is not JSON: %v: %.200s", err, l)
		}
		switch v["msg"] {
		case "http":
			lines = append(lines, v)
		case "http requests not logged":
			skipped = append(skipped, int(v["skipped"].(float64)))
		}
	}
	return lines, skipped
}

// A flood in one second costs N access-log lines and one line that counts
// the rest, however many requests it sends (issue 44, row 11).
func TestAccessLogRateCapsLines(t *testing.T) {
	h := newHarness(t, httpserver.Options{AccessLog: httpserver.AccessLog{PerSecond: 5}})
	const flood = 200
	for range flood {
		h.do(http.MethodGet, "/nope", "")
	}
	h.clock.Advance(time.Second) // the window ends; the next request reports it
	h.do(http.MethodGet, "/nope", "")
	h.ts.Close() // waits for every handler, and so every log line
	lines, skipped := accessLines(t, h)
	if len(lines) != 6 {
		t.Errorf("%d access-log lines for %d requests over two windows of 5 lines a second, want 6", len(lines), flood+1)
	}
	if len(skipped) != 1 || skipped[0] != flood-5 {
		t.Errorf("lines counting the requests left out: %v, want one counting %d", skipped, flood-5)
	}
}

// errors keeps only the answers of status 400 and above.
func TestAccessLogErrorsOnly(t *testing.T) {
	h := newHarness(t, httpserver.Options{AccessLog: httpserver.AccessLog{ErrorsOnly: true}})
	h.do(http.MethodGet, "/health", "")
	h.do(http.MethodGet, "/nope", "")
	h.ts.Close()
	lines, _ := accessLines(t, h)
	if len(lines) != 1 || lines[0]["status"] != float64(http.StatusNotFound) {
		t.Errorf("access-log lines %v, want only the 404", lines)
	}
}

// off writes no access log; the zero value writes a line per request.
func TestAccessLogOffAndAll(t *testing.T) {
	for _, c := range []struct {
		setting httpserver.AccessLog
		want    int
	}{{httpserver.AccessLog{Off: true}, 0}, {httpserver.AccessLog{}, 3}} {
		h := newHarness(t, httpserver.Options{AccessLog: c.setting})
		for range 3 {
			h.do(http.MethodGet, "/nope", "")
		}
		h.ts.Close()
		if lines, _ := accessLines(t, h); len(lines) != c.want {
			t.Errorf("--access-log %s: %d lines for 3 requests, want %d", c.setting, len(lines), c.want)
		}
	}
}

func TestParseAccessLog(t *testing.T) {
	for in, want := range map[string]httpserver.AccessLog{
		"all":          {},
		"":             {},
		"off":          {Off: true},
		"errors":       {ErrorsOnly: true},
		"50/s":         {PerSecond: 50},
		"errors, 10/s": {ErrorsOnly: true, PerSecond: 10},
		"ERRORS":       {ErrorsOnly: true},
	} {
		got, err := httpserver.ParseAccessLog(in)
		if err != nil || got != want {
			t.Errorf("ParseAccessLog(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := httpserver.ParseAccessLog(got.String()); err != nil || again != got {
			t.Errorf("ParseAccessLog(%q.String() = %q) = %+v, %v", in, got.String(), again, err)
		}
	}
	for _, in := range []string{"some", "0/s", "-3/s", "x/s", "off,errors", "all,errors", "5/s,6/s", "errors,errors"} {
		if _, err := httpserver.ParseAccessLog(in); err == nil {
			t.Errorf("ParseAccessLog(%q) was accepted", in)
		}
	}
}
