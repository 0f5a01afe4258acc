package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Edit, then sign: the signed registry carries the next patch version,
// the rest of the file as the curator wrote it, so replicas and peers,
// which refuse a version they hold with other content, take it. Signing
// again changes nothing.
func TestSignRaisesTheVersionOfAnEditedRegistry(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Tester")
	data, _ := os.ReadFile(regPath)
	edited := bytes.Replace(data, []byte(`"description": "`), []byte(`"description": "Edited by hand. `), 1)
	os.WriteFile(regPath, edited, 0o644)

	code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitOK || !strings.Contains(out, "Raised the version of "+regPath+" from 0.1.0 to 0.1.1") || !strings.Contains(out, "version 0.1.1") {
		t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
	}
	got, _ := os.ReadFile(regPath)
	if want := bytes.Replace(edited, []byte(`"version": "0.1.0"`), []byte(`"version": "0.1.1"`), 1); !bytes.Equal(got, want) {
		t.Errorf("the file is not the curator's with only its version raised:\n%s", got)
	}
	if code, out, errOut := run(t, nil, "verify", regPath); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK || strings.Contains(out, "Raised") || !strings.Contains(out, "version 0.1.1") {
		t.Errorf("signing again: exit %d\n%s", code, out)
	}
}

// A registry set back to an older version than the log recorded is
// refused with the version to set, and nothing is written.
func TestSignRefusesAnOlderVersion(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Tester")
	data, _ := os.ReadFile(regPath)
	older := bytes.Replace(data, []byte(`"version": "0.1.0"`), []byte(`"version": "0.0.9"`), 1)
	os.WriteFile(regPath, older, 0o644)
	sig, _ := os.ReadFile(regPath + ".sig")
	code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitFail || !strings.Contains(errOut, "older than 0.1.0") || !strings.Contains(errOut, `Set "version": "0.1.1"`) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(regPath + ".sig"); !bytes.Equal(after, sig) {
		t.Error("the signature was rewritten")
	}
}
