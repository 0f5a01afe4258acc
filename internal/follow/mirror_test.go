package follow

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// originLog is an origin's audit log of n entries signed with key, the
// registry of entry i digesting to digest(tag+i), as its lines.
func originLog(t *testing.T, key ed25519.PrivateKey, n int, tag string) [][]byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "origin.audit.jsonl")
	l := auditlog.Open(path, &auditlog.Report{})
	for i := 1; i <= n; i++ {
		e := &gen.AuditEntry{Time: clock.Add(time.Duration(i) * time.Minute).UTC().Truncate(time.Second), Action: gen.AuditActionUpsert,
			Actor: "ada", Version: fmt.Sprintf("1.0.%d", i), After: digest(fmt.Sprint(tag, i))}
		if i == 1 {
			e.Action = gen.AuditActionStart
		} else {
			before := digest(fmt.Sprint(tag, i-1))
			e.Before = &before
		}
		if _, err := l.Append(key, e); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:n]
}

// headOf is the head at seq of log.
func headOf(log [][]byte, seq int) auditlog.Head {
	return auditlog.Head{Seq: seq, Hash: auditlog.HashLine(bytes.TrimSuffix(log[seq-1], []byte("\n")))}
}

// serving reads log as an origin publishes it, recording what was asked.
func serving(log [][]byte, asked *[]int) reader {
	return func(after, until int) (io.ReadCloser, error) {
		*asked = append(*asked, after)
		return io.NopCloser(bytes.NewReader(bytes.Join(log[after:], nil))), nil
	}
}

func mirrorKey(t *testing.T, seed byte) ed25519.PrivateKey {
	t.Helper()
	k, err := curatorkey.ParseSeed(strings.Repeat(fmt.Sprintf("%02x", seed), 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// openTestMirror opens a mirror in a new cache directory for key.
func openTestMirror(t *testing.T, key ed25519.PrivateKey) *Mirror {
	t.Helper()
	m, note, err := OpenMirror(MirrorPath(t.TempDir(), curatorkey.Public(key)), curatorkey.Public(key))
	if err != nil || note != "" {
		t.Fatalf("OpenMirror: %q %v", note, err)
	}
	return m
}

// synced is a new mirror of key's log, synced up to its entry seq (whose
// registry digest is digest(tag+seq)), and where the origin's log was
// read from.
func synced(t *testing.T, key ed25519.PrivateKey, log [][]byte, tag string, seq int) (*Mirror, *[]int) {
	t.Helper()
	m := openTestMirror(t, key)
	asked := new([]int)
	if _, err := m.Sync(headOf(log, seq), digest(tag+strconv.Itoa(seq)), serving(log, asked)); err != nil {
		t.Fatal(err)
	}
	return m, asked
}

func mirrorHolds(t *testing.T, m *Mirror, want [][]byte) {
	t.Helper()
	path, head := m.Mirrored()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, bytes.Join(want, nil)) {
		t.Fatalf("mirror holds %q (%v), want %q", got, err, bytes.Join(want, nil))
	}
	if head != headOf(want, len(want)) {
		t.Fatalf("mirror head %v, want %v", head, headOf(want, len(want)))
	}
}

func TestMirrorAppendsWhatTheOriginAdds(t *testing.T) {
	key := mirrorKey(t, 1)
	log := originLog(t, key, 3, "a")
	m, asked := synced(t, key, log, "a", 2)
	mirrorHolds(t, m, log[:2])
	if _, err := m.Sync(headOf(log, 3), digest("a3"), serving(log, asked)); err != nil {
		t.Fatal(err)
	}
	mirrorHolds(t, m, log)
	if fmt.Sprint(*asked) != "[0 2]" {
		t.Fatalf("the origin's log was read after seqs %v, want [0 2]: the second sync reads only what is new", *asked)
	}
}

func TestMirrorCutsATornTailWhenOpened(t *testing.T) {
	key := mirrorKey(t, 1)
	log := originLog(t, key, 3, "a")
	m, _ := synced(t, key, log, "a", 2)
	path, _ := m.Mirrored()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(log[2][:20]) // a crash part way through the next append
	f.Close()
	again, note, err := OpenMirror(path, curatorkey.Public(key))
	if err != nil || !strings.Contains(note, "partial line (20 bytes)") {
		t.Fatalf("OpenMirror over a torn tail: %q %v", note, err)
	}
	mirrorHolds(t, again, log[:2])
}

func TestMirrorIsBuiltAgainForARewrittenLog(t *testing.T) {
	key := mirrorKey(t, 1)
	first := originLog(t, key, 2, "a")
	m, asked := synced(t, key, first, "a", 2)
	// The curator's log now tells another history (the same key, so the
	// follower took the copy): the mirror does not graft onto it.
	second := originLog(t, key, 3, "b")
	restarted, err := m.Sync(headOf(second, 3), digest("b3"), serving(second, asked))
	if err != nil || !restarted {
		t.Fatalf("Sync onto a rewritten log: restarted %v, %v", restarted, err)
	}
	mirrorHolds(t, m, second)
}

func TestMirrorRefusesALogItCannotVerify(t *testing.T) {
	key := mirrorKey(t, 1)
	log := originLog(t, key, 2, "a")
	m, asked := synced(t, key, log, "a", 1)
	for name, c := range map[string]struct {
		log  [][]byte
		head auditlog.Head
		sha  string
	}{
		"another curator's log":          {originLog(t, mirrorKey(t, 2), 2, "a"), headOf(originLog(t, mirrorKey(t, 2), 2, "a"), 2), digest("a2")},
		"a head the log does not hold":   {log, auditlog.Head{Seq: 2, Hash: digest("other")}, digest("a2")},
		"a head for another registry":    {log, headOf(log, 2), digest("other")},
		"a log short of the signed head": {log[:1], headOf(log, 2), digest("a2")},
	} {
		_, err := m.Sync(c.head, c.sha, serving(c.log, asked))
		var p *auditlog.Problem
		if !errors.As(err, &p) {
			t.Errorf("%s: Sync = %v, want a *auditlog.Problem", name, err)
		}
		mirrorHolds(t, m, log[:1])
		path, _ := m.Mirrored()
		if _, err := os.Lstat(path + ".new"); !os.IsNotExist(err) {
			t.Errorf("%s: the rebuilt mirror was left beside it (%v)", name, err)
		}
	}
}

func TestMirrorThatDoesNotVerifyIsFetchedAgain(t *testing.T) {
	key := mirrorKey(t, 1)
	path := MirrorPath(t.TempDir(), curatorkey.Public(key))
	if err := os.WriteFile(path, bytes.Join(originLog(t, mirrorKey(t, 2), 2, "a"), nil), 0o600); err != nil {
		t.Fatal(err)
	}
	m, note, err := OpenMirror(path, curatorkey.Public(key))
	if err != nil || !strings.Contains(note, "did not check out") {
		t.Fatalf("OpenMirror of another key's log: %q %v", note, err)
	}
	if p, head := m.Mirrored(); head.Seq != 0 {
		t.Fatalf("the mirror starts at %v, want empty", head)
	} else if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("the file that did not check out is still there (%v)", err)
	}
}
