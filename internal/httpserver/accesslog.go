package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AccessLog says which requests get an access-log line. A public node
// answers whoever reaches it, so a flood of requests (bad tokens, 404s,
// a load test left running) would otherwise write one line each: the
// operator can keep only the failures, cap the lines per second, or both.
// The zero value logs every request.
type AccessLog struct {
	// Off writes no access log at all.
	Off bool
	// ErrorsOnly writes lines only for answers of status 400 and above
	// and for aborted handlers.
	ErrorsOnly bool
	// PerSecond, when above zero, is the most lines written in one
	// second; the requests past it are counted, and one line at the end
	// of that second says how many went unlogged.
	PerSecond int
}

// AccessLogUsage is the flag's help, shared by the CLI and the docs.
const AccessLogUsage = "HTTP: which requests get an access-log line on stderr: all, errors (status 400 and above), off, or N/s (at most N lines a second, then one line counting the rest); errors,N/s does both"

// ParseAccessLog reads the --access-log value: "all" (or nothing), "off",
// "errors", "N/s", or "errors,N/s".
func ParseAccessLog(s string) (AccessLog, error) {
	var a AccessLog
	if strings.TrimSpace(s) == "" {
		return a, nil
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(strings.ToLower(strings.TrimSpace(s)), ",") {
		part = strings.TrimSpace(part)
		kind := part
		if strings.HasSuffix(part, "/s") {
			kind = "N/s"
		}
		if seen[kind] {
			return AccessLog{}, fmt.Errorf("%q names %s twice", s, kind)
		}
		seen[kind] = true
		switch kind {
		case "all":
		case "off":
			a.Off = true
		case "errors":
			a.ErrorsOnly = true
		case "N/s":
			n, err := strconv.Atoi(strings.TrimSuffix(part, "/s"))
			if err != nil || n < 1 {
				return AccessLog{}, fmt.Errorf("%q: the rate must be a whole number of lines a second, at least 1, such as 50/s", s)
			}
			a.PerSecond = n
		default:
			return AccessLog{}, fmt.Errorf("%q is not an access-log setting: write all, errors, off, N/s (such as 50/s) or errors,N/s", s)
		}
	}
	if a.Off && (seen["all"] || a.ErrorsOnly || a.PerSecond > 0) || seen["all"] && a.ErrorsOnly {
		return AccessLog{}, fmt.Errorf("%q combines settings that contradict each other: off and all stand alone; errors may be combined with N/s", s)
	}
	return a, nil
}

// String is the setting as ParseAccessLog reads it.
func (a AccessLog) String() string {
	var parts []string
	switch {
	case a.Off:
		return "off"
	case a.ErrorsOnly:
		parts = append(parts, "errors")
	case a.PerSecond == 0:
		return "all"
	}
	if a.PerSecond > 0 {
		parts = append(parts, strconv.Itoa(a.PerSecond)+"/s")
	}
	return strings.Join(parts, ",")
}

// accessLimiter applies AccessLog.PerSecond: fixed one-second windows,
// the first PerSecond lines of each written, the rest counted and reported
// in one line when the window ends, so a flood costs PerSecond+1 lines a
// second however fast it comes.
type accessLimiter struct {
	mu      sync.Mutex
	start   time.Time // the current window's start
	written int       // lines written in the window
	skipped int       // lines not written in the window, reported at its end
	timer   *time.Timer
}

// admitAccessLine reports whether the access-log line of a request that
// ended with status (or aborted) may be written now.
func (s *Server) admitAccessLine(status int, aborted bool) bool {
	p := s.opt.AccessLog
	if p.Off || p.ErrorsOnly && status < 400 && !aborted {
		return false
	}
	if p.PerSecond <= 0 {
		return true
	}
	l := &s.accessLimit
	now := s.opt.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= time.Second || now.Before(l.start) {
		if l.skipped > 0 {
			s.reportSkipped(l)
		}
		l.start, l.written = now, 0
	}
	if l.written < p.PerSecond {
		l.written++
		return true
	}
	l.skipped++
	if l.timer == nil {
		l.timer = time.AfterFunc(time.Second-now.Sub(l.start), s.flushSkipped)
	}
	return false
}

// flushSkipped reports the lines a window left unwritten, if admit has not
// already done so.
func (s *Server) flushSkipped() {
	l := &s.accessLimit
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if l.skipped > 0 {
		s.reportSkipped(l)
	}
}

// reportSkipped writes the count of unwritten lines; l.mu is held.
func (s *Server) reportSkipped(l *accessLimiter) {
	s.opt.Log.LogAttrs(context.Background(), slog.LevelInfo, "http requests not logged",
		slog.Int("skipped", l.skipped),
		slog.Time("since", l.start),
		slog.String("access_log", s.opt.AccessLog.String()),
		slog.String("note", "at most "+strconv.Itoa(s.opt.AccessLog.PerSecond)+" access-log lines a second (--access-log); the rest are counted here"))
	l.skipped = 0
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}
