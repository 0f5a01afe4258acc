package tools

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// fakeMirror is a replica's mirror holding the log at path up to head.
type fakeMirror struct {
	path string
	head auditlog.Head
}

func (m fakeMirror) Mirrored() (string, auditlog.Head) { return m.path, m.head }

// replicaWithMirror serves a curator's signed registry (its signature
// covering seq 1 of its log) as a read replica whose mirror holds head.
func replicaWithMirror(t *testing.T, head func(n *curator.Node) auditlog.Head) *Handlers {
	t.Helper()
	n := curator.Signed(t)
	data, doc, err := signature.ReadSigned(n.Registry, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := serving(t, data, doc, Config{Origin: "http://127.0.0.1:1", AuditMirror: fakeMirror{n.Log, head(n)}})
	return h
}

func TestReplicaServesTheLogFromItsMirror(t *testing.T) {
	h := replicaWithMirror(t, func(n *curator.Node) auditlog.Head {
		line, err := os.ReadFile(n.Log)
		if err != nil {
			t.Fatal(err)
		}
		return auditlog.Head{Seq: 1, Hash: auditlog.HashLine([]byte(strings.TrimSuffix(string(line), "\n")))}
	})
	out, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{})
	if err != nil || out.Head.Seq != 1 || len(out.Entries) != 1 || out.Entries[0].Action != gen.AuditActionStart {
		t.Fatalf("get_audit_log on a replica with a mirror: %+v %v", out, err)
	}
}

func TestReplicaWhoseMirrorIsBehindPointsToTheOrigin(t *testing.T) {
	h := replicaWithMirror(t, func(*curator.Node) auditlog.Head { return auditlog.Head{} })
	_, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{})
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "not yet reached seq 1") || !strings.Contains(te.Text, "GET http://127.0.0.1:1/audit") {
		t.Fatalf("get_audit_log on a replica whose mirror is behind: %v", err)
	}
}
