package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/signature"
)

// A registry and its signature copied without the audit log they name,
// as the deployment instructions used to say: serve and doctor both say
// the log is missing and exactly how to recover, and following the fix
// (move the signature aside, sign again) gives a registry serve starts on.
func TestDeployWithoutTheLogSaysHowToRecover(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Tester")
	dir := t.TempDir()
	for _, name := range []string{"registry.json", "registry.json.sig"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(regPath), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	deployed := filepath.Join(dir, "registry.json")
	fetch := "3gs audit fetch --from REPLICA_OR_PUBLISHED_URL --registry " + deployed
	code, _, errOut := serveLines(t, nil, []string{"--registry", deployed})
	if code == ExitOK || !strings.Contains(errOut, "the log is empty or missing") || !strings.Contains(errOut, fetch) || !strings.Contains(errOut, "copy "+deployed+".audit.jsonl from where the registry was signed") {
		t.Errorf("serve: exit %d\n%s", code, errOut)
	}
	code, out, _ := run(t, nil, "doctor", "--registry", deployed)
	if code != ExitFail || !strings.Contains(lines(out)["audit log"], fetch) || !strings.Contains(lines(out)["audit log"], "move "+deployed+".sig aside and sign again") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	os.Rename(deployed+".sig", deployed+".sig.old")
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, deployed); code != ExitOK {
		t.Fatalf("sign: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := serveLines(t, nil, []string{"--registry", deployed}); code != ExitOK {
		t.Errorf("serve after the fix: exit %d\n%s", code, errOut)
	}
}

// The deployment instructions copy the log with the registry.
func TestDeployInstructionsCopyTheLog(t *testing.T) {
	for _, p := range []string{"docs/operating.md", "deploy/systemd/3gs.service"} {
		data, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "cp registry.json registry.json.sig") && !strings.Contains(line, "registry.json.audit.jsonl") {
				t.Errorf("%s copies the registry without its audit log: %s", p, line)
			}
		}
	}
}

// verify --audit-log, which says what a node serving the file needs,
// fails as serve would on a registry copied without its audit log.
func TestVerifyFailsWithoutTheLog(t *testing.T) {
	_, regPath, _, _ := initNode(t, "Tester")
	dir := t.TempDir()
	for _, name := range []string{"registry.json", "registry.json.sig"} {
		data, _ := os.ReadFile(filepath.Join(filepath.Dir(regPath), name))
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	deployed := filepath.Join(dir, "registry.json")
	if code, out, _ := run(t, nil, "verify", "--audit-log", deployed+".audit.jsonl", deployed); code != ExitFail || !strings.HasPrefix(out, "FAIL") || !strings.Contains(out, "the log is empty or missing") {
		t.Errorf("verify --audit-log without the log: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, nil, "verify", "--audit-log", deployed+".audit.jsonl", "--signature-only", deployed); code != ExitUsage || !strings.Contains(errOut, "contradict") {
		t.Errorf("verify --audit-log --signature-only: exit %d\n%s", code, errOut)
	}
	if code, out, _ := run(t, nil, "verify", "--signature-only", deployed); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify --signature-only without the log: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, nil, "verify", regPath); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify with the log: exit %d\n%s", code, out)
	}
}

// doctor on the origin checks what its replicas and peers will: a
// registry the log recorded at the same version with other content (here
// endorse --keep-version) fails, before every replica refuses it.
func TestDoctorChecksWhatReplicasCheck(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Tester")
	if code, out, _ := run(t, nil, "doctor", "--registry", regPath, "--key-file", keyPath); !strings.Contains(lines(out)["publish"], "OK    publish: peers and replicas can take it") {
		t.Fatalf("a fresh node: exit %d\n%s", code, out)
	}
	_, pub := mustKey(t)
	if code, _, errOut := run(t, nil, "endorse", "--registry", regPath, "--key-file", keyPath, "--pubkey", pub, "--url", "https://peer.example", "--name", "Peer", "--keep-version"); code != ExitOK {
		t.Fatalf("endorse --keep-version: exit %d\n%s", code, errOut)
	}
	code, out, _ := run(t, nil, "doctor", "--registry", regPath, "--key-file", keyPath)
	if code != ExitFail || !strings.Contains(lines(out)["publish"], "recorded version 0.1.0 with other content at seq 1") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// verify on a registry alone, as downloaded from a node's /registry,
// checks the signature, says the audit log was skipped and how to check
// one, and succeeds; a log that does lie beside it is checked, and a bad
// one fails.
func TestVerifyALoneRegistry(t *testing.T) {
	_, regPath, _, _ := initNode(t, "Tester")
	dir := t.TempDir()
	for _, name := range []string{"registry.json", "registry.json.sig"} {
		data, _ := os.ReadFile(filepath.Join(filepath.Dir(regPath), name))
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	lone := filepath.Join(dir, "registry.json")
	_, doc, _ := signature.ReadSigned(lone, 1<<20)
	sig, err := signature.Parse(doc)
	if err != nil || sig.LogSeq == nil {
		t.Fatalf("the signature names no log head: %+v %v", sig, err)
	}
	code, out, _ := run(t, nil, "verify", "--pubkey", sig.Pubkey, lone)
	if code != ExitOK || !strings.HasPrefix(out, "OK: signed by "+sig.Pubkey) ||
		!strings.Contains(out, "\naudit log: none beside the registry; skipped (pass --audit-log PATH to check one)") ||
		!strings.Contains(out, fmt.Sprintf("entry %d", *sig.LogSeq)) || !strings.Contains(out, "3gs audit fetch") {
		t.Errorf("verify --pubkey on a lone registry: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, nil, "verify", "--audit-log", regPath+".audit.jsonl", lone); code != ExitOK || !strings.HasPrefix(out, "OK") || strings.Contains(out, "skipped") {
		t.Errorf("verify --audit-log naming the curator's log: exit %d\n%s", code, out)
	}
	os.WriteFile(lone+".audit.jsonl", []byte("not a log\n"), 0o644)
	if code, out, _ := run(t, nil, "verify", lone); code != ExitFail || !strings.HasPrefix(out, "FAIL") {
		t.Errorf("verify with a bad log beside: exit %d\n%s", code, out)
	}
}
