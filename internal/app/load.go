package app

import (
	"os"
	"path/filepath"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Served is a registry as the server will serve it: the snapshot, its
// signature check, and the file names that get_provenance's verification
// steps use.
type Served struct {
	Reg  *registry.Registry
	Name string // for messages: a path or "embedded registry.json"
	Path string // absolute path of the registry file; empty when embedded
	Sig  signature.Status
	// Files are the file names get_provenance's steps use.
	Files signature.Files
	// Modified is when the registry's bytes last changed: the file's
	// modification time, or for the embedded one when it was signed.
	Modified time.Time
}

// LoadError is a registry that did not load: Path ("" for the embedded
// one) and why.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Load loads the registry at path (the embedded one when empty), of at
// most limit bytes, and checks the signature file beside it. Both files
// are read together, and an interrupted signed write is completed first
// (signature.ReadSigned). The error is a *LoadError.
func Load(path string, limit int64) (*Served, error) {
	if path == "" {
		reg, err := registry.Load(threegs.DefaultRegistry)
		if err != nil {
			return nil, &LoadError{Err: err}
		}
		st := signature.Check(reg, threegs.DefaultSignature)
		return &Served{
			Reg: reg, Name: "embedded registry.json", Modified: st.SignedAt,
			Sig: st,
			Files: signature.Files{
				Registry: "registry.json", Signature: "registry.json.sig", Builtin: true,
				Where: "This registry is built into the 3gs binary; 3gs verify without file names checks that copy. The same two files are registry.json and registry.json.sig at the root of the 3gs source tree (module github.com/three-good-sources/3gs); run the steps there.",
			},
		}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, doc, err := signature.ReadSigned(abs, limit)
	var reg *registry.Registry
	if err == nil {
		reg, err = registry.Load(data)
	}
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	s := &Served{Reg: reg, Name: path, Path: abs, Sig: signature.Check(reg, doc)}
	if fi, err := os.Stat(abs); err == nil {
		s.Modified = fi.ModTime()
	}
	s.Files = signature.Files{
		Registry: abs, Signature: abs + signature.Suffix,
		Where: "The server reads " + abs + " and its signature " + abs + signature.Suffix + "; run the steps where you can read both files.",
	}
	if doc == nil {
		s.Files.Where = "The server reads " + abs + "; run the steps where you can read it."
	}
	return s, nil
}
