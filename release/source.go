package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// source is what git says about the checkout. Only read-only git commands
// are used, with optional locks off, so a release never touches .git.
type source struct {
	commit   string    // full hash; "" without git
	modified bool      // tracked changes or untracked files (ignored ones aside)
	time     time.Time // the commit's time
	tags     []string  // tags on the commit
}

func readSource(root string) (source, error) {
	var s source
	commit, err := gitOut(root, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		// A source tarball, or a Docker build context without .git.
		logf("no git information (%v); the commit is recorded as unknown", err)
		return s, nil
	}
	s.commit = commit
	status, err := gitOut(root, "status", "--porcelain")
	if err != nil {
		return s, err
	}
	s.modified = status != ""
	ct, err := gitOut(root, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return s, fmt.Errorf("commit time %q: %v", ct, err)
	}
	s.time = time.Unix(sec, 0).UTC()
	tags, err := gitOut(root, "tag", "--points-at", "HEAD")
	if err != nil {
		return s, err
	}
	s.tags = strings.Fields(tags)
	return s, nil
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--no-optional-locks"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// stamp is what a build records: the version and commit `3gs version`
// prints, and the time every artifact is dated with.
type stamp struct {
	version  string // v1.2.0, or v0.0.0-snapshot+0123456789ab[.dirty]
	commit   string
	modified bool
	date     time.Time
}

// releaseVersion is a semantic version with Go's leading v, as tags are
// written and `go install ...@vX.Y.Z` reports.
var releaseVersion = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func stampFor(o options, src source, meta serverMeta) (stamp, error) {
	st := stamp{commit: src.commit, modified: src.modified, date: src.time}
	if st.commit == "" {
		st.commit = "unknown"
	}
	// SOURCE_DATE_EPOCH is the reproducible-builds convention for "the time
	// of the source"; by default it is the commit's time, the same on every
	// run. Without either, the Unix epoch.
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return st, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", v)
		}
		st.date = time.Unix(sec, 0).UTC()
	}
	if st.date.IsZero() {
		st.date = time.Unix(0, 0).UTC()
	}
	if o.snapshot {
		if o.version != "" {
			return st, fmt.Errorf("-version is for releases; a snapshot is versioned from its commit")
		}
		short := "unknown"
		if len(src.commit) >= 12 {
			short = src.commit[:12]
		}
		st.version = "v0.0.0-snapshot+" + short
		if src.modified {
			st.version += ".dirty"
		}
		return st, nil
	}

	// A release: from a clean tree, at a version server.json agrees with.
	st.version = o.version
	if st.version == "" {
		for _, t := range src.tags {
			if releaseVersion.MatchString(t) {
				if st.version != "" {
					return st, fmt.Errorf("HEAD has two version tags, %s and %s; choose one with -version", st.version, t)
				}
				st.version = t
			}
		}
	}
	switch {
	case st.version == "":
		return st, fmt.Errorf("HEAD has no version tag (vX.Y.Z): tag it, give -version, or build a snapshot with -snapshot")
	case !releaseVersion.MatchString(st.version):
		return st, fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH[-PRERELEASE]", st.version)
	case src.commit == "":
		return st, fmt.Errorf("a release needs the git checkout, to record its commit; build a snapshot with -snapshot")
	case src.modified:
		return st, fmt.Errorf("the tree has uncommitted changes or untracked files (git status); a release is built from a clean checkout, or use -snapshot")
	case strings.TrimPrefix(st.version, "v") != meta.Version:
		return st, fmt.Errorf("server.json says version %q but this release is %s: move it with: go run ./internal/mcpb/cmd/mcpbgen setversion -version %s", meta.Version, st.version, strings.TrimPrefix(st.version, "v"))
	}
	return st, nil
}

// serverMeta is what the image's labels and the SBOM take from server.json,
// so the names the MCP Registry knows are the ones the artifacts carry.
type serverMeta struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Version     string `json:"version"`
	WebsiteURL  string `json:"websiteUrl"`
	Repository  struct {
		URL string `json:"url"`
	} `json:"repository"`
	Meta struct {
		Publisher struct {
			License string `json:"license"`
		} `json:"io.modelcontextprotocol.registry/publisher-provided"`
	} `json:"_meta"`
}

func readServerJSON(root string) (serverMeta, error) {
	var m serverMeta
	data, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("server.json: %v", err)
	}
	if m.Name == "" || m.Repository.URL == "" {
		return m, fmt.Errorf("server.json names no server or repository")
	}
	return m, nil
}
