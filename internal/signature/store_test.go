package signature

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
)

func TestWriteSignedThenRead(t *testing.T) {
	k := key(t, seedA)
	path := filepath.Join(t.TempDir(), "registry.json")
	data := registryFor(k)
	if _, err := WriteSigned(path, data, k, when, 0o644); err != nil {
		t.Fatal(err)
	}
	got, doc, err := ReadSigned(path, registry.MaxSize)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %v", err)
	}
	if _, err := Verify(got, doc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + pendingSuffix); !os.IsNotExist(err) {
		t.Error("a pending signature is left behind after a complete write")
	}
}

// Each point where WriteSigned can be interrupted leaves a pair that
// verifies: the old one, or the new one once ReadSigned completes the write.
func TestWriteSignedInterrupted(t *testing.T) {
	k := key(t, seedA)
	oldData := registryFor(k)
	newData := bytes.Replace(oldData, []byte(`"A"`), []byte(`"A2"`), 1)
	setup := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "registry.json")
		if _, err := WriteSigned(path, oldData, k, when, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	check := func(t *testing.T, path string, want []byte) {
		t.Helper()
		data, doc, err := ReadSigned(path, registry.MaxSize)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("read %q, want %q", data, want)
		}
		if _, err := Verify(data, doc, curatorkey.Public(k)); err != nil {
			t.Fatalf("the pair on disk does not verify: %v", err)
		}
		// Reading again changes nothing and still verifies.
		data2, doc2, _ := ReadSigned(path, registry.MaxSize)
		if !bytes.Equal(data, data2) || !bytes.Equal(doc, doc2) {
			t.Fatal("a second read differs")
		}
	}
	t.Run("after the pending signature", func(t *testing.T) {
		path := setup(t)
		safefile.Write(path+pendingSuffix, Sign(newData, k, when), 0o644)
		check(t, path, oldData)
	})
	t.Run("after the registry", func(t *testing.T) {
		path := setup(t)
		safefile.Write(path+pendingSuffix, Sign(newData, k, when), 0o644)
		safefile.Write(path, newData, 0o644)
		check(t, path, newData)
		if _, err := os.Stat(path + pendingSuffix); !os.IsNotExist(err) {
			t.Error("the interrupted write was not completed")
		}
	})
	t.Run("first signed write, after the registry", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "registry.json")
		safefile.Write(path, oldData, 0o644)
		safefile.Write(path+pendingSuffix, Sign(newData, k, when), 0o644)
		safefile.Write(path, newData, 0o644)
		check(t, path, newData)
	})
	// A pending signature that matches nothing on disk is ignored, so a
	// hand edit after an interrupted write is still caught.
	t.Run("stale pending and a hand edit", func(t *testing.T) {
		path := setup(t)
		safefile.Write(path+pendingSuffix, Sign(newData, k, when), 0o644)
		edited := bytes.Replace(oldData, []byte(`"B"`), []byte(`"B!"`), 1)
		os.WriteFile(path, edited, 0o644)
		data, doc, err := ReadSigned(path, registry.MaxSize)
		if err != nil || !bytes.Equal(data, edited) {
			t.Fatal(err)
		}
		if _, err := Verify(data, doc, nil); err == nil {
			t.Error("a hand-edited registry verifies")
		}
	})
}

func TestReadSignedLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	os.WriteFile(path, []byte("{}"), 0o644)
	if _, doc, err := ReadSigned(path, 10); err != nil || doc != nil {
		t.Errorf("no signature: %v %q", err, doc)
	}
	os.WriteFile(path+Suffix, make([]byte, MaxSize+1), 0o644)
	if _, _, err := ReadSigned(path, 10); err == nil {
		t.Error("an oversized signature file is read")
	}
	if _, _, err := ReadSigned(path, 1); err == nil {
		t.Error("an oversized registry is read")
	}
}
