package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// verifyOptions are verify's flags.
type verifyOptions struct {
	pubkey string
	registryFile
	signatureOnly bool
}

func verifyFlags(f *Flags) {
	o := options[verifyOptions](f)
	f.StringVar(&o.pubkey, "pubkey", "THREEGS_PUBKEY", "", "the curator key you trust (pk:Z32 or Z32); without it the key named in the registry is used, which proves integrity but not identity")
	o.registryFile.flags(f, "registry file to verify when no PATH is given; none means the embedded registry.json")
	f.BoolVar(&o.signatureOnly, "signature-only", "THREEGS_VERIFY_SIGNATURE_ONLY", "check the signature alone, not the audit log beside the registry that serve also needs: for a copy you read but will not serve, such as one downloaded from a node's /registry")
}

// verifyPair is the registry and signature verify checks, read.
type verifyPair struct {
	data, doc        []byte
	regName, sigName string
	file             bool // a file, not the embedded registry
}

// runVerify checks a registry against its signature file and prints one
// line: OK with the signer, curator and expiry, or FAIL with the first
// thing wrong, an expired signature among them (but for the embedded
// registry, whose freshness is the binary's).
func runVerify(_ context.Context, env *Env, f *Flags) int {
	o := options[verifyOptions](f)
	var trusted ed25519.PublicKey
	if z := o.pubkey; z != "" {
		k, err := curatorkey.ParsePublicKey(z)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs verify: --pubkey %v\n", err)
			return ExitUsage
		}
		trusted = k
	}
	limit, ok := o.sizeLimit(f)
	if !ok {
		return ExitUsage
	}
	args := f.Args()
	if len(args) > 2 {
		fmt.Fprintf(env.Stderr, "3gs verify: expected REGISTRY [SIGNATURE], got %d arguments\n", len(args))
		return ExitUsage
	}
	if len(args) == 0 && o.registry != "" {
		args = []string{o.registry}
	}
	p, ok := readVerifyPair(env, args, limit)
	if !ok {
		return ExitFail
	}
	v, reg, ok := verifyPairSigned(env, p, trusted)
	if !ok {
		return ExitFail
	}
	// serve also needs the audit log the signature names, beside the file:
	// a registry copied without it verifies, but no server starts on it.
	if v.Log != nil && len(args) == 1 && !o.signatureOnly && !verifyLogBeside(env, p.regName, reg, v) {
		return ExitFail
	}
	until := ""
	if !v.Expires.IsZero() {
		until = ", in force until " + v.Expires.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(env.Stdout, "OK: signed by %s (curator %s)%s\n", curatorkey.Encode(v.Signer), reg.Curator().Name, until)
	if trusted == nil {
		fmt.Fprintf(env.Stderr, "Note: checked against the key the files name themselves. To prove who signed, pass the curator key you trust: 3gs verify --pubkey %s ...\n", curatorkey.Encode(v.Signer))
	}
	return ExitOK
}

// readVerifyPair reads the registry and signature args name (the
// embedded pair when none), printing the FAIL line when it cannot.
func readVerifyPair(env *Env, args []string, limit int64) (verifyPair, bool) {
	if len(args) == 0 {
		return verifyPair{data: threegs.DefaultRegistry, doc: threegs.DefaultSignature, regName: "embedded registry.json", sigName: "embedded registry.json.sig"}, true
	}
	p := verifyPair{regName: args[0], sigName: args[0] + signature.Suffix, file: true}
	if len(args) == 2 {
		p.sigName = args[1]
	}
	var err error
	var pending bool
	if len(args) == 1 {
		// The pair as a reader should see it: after an interrupted
		// signed write, the new registry with its pending signature.
		if p.data, p.doc, pending, err = signature.ReadPair(p.regName, limit); err != nil {
			fmt.Fprintf(env.Stdout, "FAIL: cannot read the registry or its signature: %v\n", err)
			return p, false
		}
		if pending {
			fmt.Fprintf(env.Stderr, "Note: %s.\n", signature.FinishHint(p.regName))
		}
		if p.doc == nil {
			err = fs.ErrNotExist
		}
	} else if p.data, err = signature.ReadLimited(p.regName, limit, "registry"); err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: cannot read the registry: %v\n", err)
		return p, false
	} else {
		p.doc, err = signature.ReadLimited(p.sigName, signature.MaxSize, "signature file")
	}
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(env.Stdout, "FAIL: %s is not signed: there is no %s. Its curator signs it with: 3gs sign --key-file KEY %s\n", p.regName, p.sigName, signature.ShellQuote(p.regName))
		return p, false
	} else if err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: cannot read the signature: %v\n", err)
		return p, false
	}
	return p, true
}

// verifyPairSigned checks p's signature, the registry and its curator,
// and, for a file, the signature's expiry, printing the FAIL line when
// one is wrong.
func verifyPairSigned(env *Env, p verifyPair, trusted ed25519.PublicKey) (*signature.Verified, *registry.Registry, bool) {
	v, err := signature.Verify(p.data, p.doc, trusted)
	if err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: %s does not verify against %s: %v\n", p.regName, p.sigName, err)
		return nil, nil, false
	}
	reg, err := registry.Load(p.data)
	if err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: the signature is valid, but %s is not a valid registry: %v\n", p.regName, loadProblem(err))
		return nil, nil, false
	}
	if err := signature.CheckCurator(reg, v.Signer); err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: %s: %v\n", p.regName, err)
		return nil, nil, false
	}
	// The embedded registry's freshness is the binary's
	// (docs/provenance.md); a file's signature must still be in force.
	if exp := v.Expires; p.file && signature.Expired(exp, time.Now()) {
		fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but the signature expired at %s: servers, peers and replicas refuse it, since an old signed copy put back looks exactly like this. Its curator signs it again: 3gs sign --key-file KEY %s\n",
			p.regName, curatorkey.Encode(v.Signer), reg.Curator().Name, exp.UTC().Format(time.RFC3339), signature.ShellQuote(p.regName))
		return nil, nil, false
	}
	return v, reg, true
}

// verifyLogBeside checks the audit log beside the registry file regName
// against the head its signature names, printing the FAIL line when it
// does not match.
func verifyLogBeside(env *Env, regName string, reg *registry.Registry, v *signature.Verified) bool {
	logPath := regName + ".audit.jsonl"
	rep, err := auditlog.Read(logPath, auditlog.Options{Key: v.Signer, Mark: v.Log.Seq})
	if err == nil {
		_, err = auditlog.Match(rep, reg.SHA256(), v.Log)
	}
	switch {
	case errors.Is(err, auditlog.ErrMissing):
		fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but its %s; serve refuses it. To fix: %s. (To check the signature alone, of a copy you will not serve: --signature-only.)\n",
			regName, curatorkey.Encode(v.Signer), reg.Curator().Name, strings.TrimPrefix(err.Error(), "the registry's "), auditlog.MissingFix(logPath, regName))
		return false
	case err != nil:
		fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but its audit log %s does not verify: %v; serve refuses it. 3gs audit verify %s shows the whole log.\n",
			regName, curatorkey.Encode(v.Signer), reg.Curator().Name, logPath, err, signature.ShellQuote(regName))
		return false
	}
	return true
}
