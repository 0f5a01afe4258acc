package schema

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CheckoutAt writes the schema folder as it is at git revision rev into
// a new temporary directory and returns its path, and remove, which
// deletes it. schemaDir names the folder in the working
// tree; its path relative to the repository's top is looked up at rev.
func CheckoutAt(rev, schemaDir string) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp("", "3gs-schema-base-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	if err := extractAt(rev, schemaDir, dir); err != nil {
		remove()
		return "", nil, err
	}
	return dir, remove, nil
}

// extractAt writes the schema folder schemaDir as it is at git revision
// rev into dir.
func extractAt(rev, schemaDir, dir string) error {
	abs, err := filepath.Abs(schemaDir)
	if err != nil {
		return err
	}
	top, err := git(filepath.Dir(abs), "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("--base needs a git checkout: %v", err)
	}
	top = strings.TrimSpace(top)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not inside the git checkout %s", schemaDir, top)
	}
	rel = filepath.ToSlash(rel)
	archive, err := gitBytes(top, "archive", "--format=tar", rev, rel)
	if err != nil {
		return fmt.Errorf("reading %s at %s: %v", rel, rev, err)
	}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimPrefix(h.Name, rel+"/"))
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(name) {
			continue
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	// A revision from before the contract had a version counts as 0.0.0,
	// so the commit that introduces contract.json can be compared.
	if _, err := os.Stat(filepath.Join(dir, ContractFile)); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(filepath.Join(dir, ContractFile), []byte(`{"contractVersion": "0.0.0"}`), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func git(dir string, args ...string) (string, error) {
	out, err := gitBytes(dir, args...)
	return string(out), err
}

func gitBytes(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
