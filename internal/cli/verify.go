package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	auditLog      string
}

func verifyFlags(f *Flags) {
	o := options[verifyOptions](f)
	f.StringVar(&o.pubkey, "pubkey", "THREEGS_PUBKEY", "", "the curator key you trust (pk:Z32 or Z32); without it the key named in the registry is used, which proves integrity but not identity")
	o.registryFile.flags(f, "registry file to verify when no PATH is given; none means the embedded registry.json")
	f.BoolVar(&o.signatureOnly, "signature-only", "THREEGS_VERIFY_SIGNATURE_ONLY", "check the signature alone, even when an audit log lies beside the registry")
	f.StringVar(&o.auditLog, "audit-log", "THREEGS_VERIFY_AUDIT_LOG", "", "the audit log to check against the head the signature names, failing when it is missing, as serve does; without it the log beside the registry (REGISTRY.audit.jsonl) is checked when there is one, and skipped when there is none, as for a copy downloaded from a node's /registry")
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
	if o.signatureOnly && o.auditLog != "" {
		fmt.Fprintln(env.Stderr, "3gs verify: --signature-only and --audit-log contradict each other; give one")
		return ExitUsage
	}
	if o.auditLog != "" && len(args) == 0 {
		fmt.Fprintln(env.Stderr, "3gs verify: --audit-log needs a registry file: the embedded registry has no audit log")
		return ExitUsage
	}
	p, ok := readVerifyPair(env, args, limit)
	if !ok {
		return ExitFail
	}
	v, reg, ok := verifyPairSigned(env, p, trusted)
	if !ok {
		return ExitFail
	}
	// The audit log the signature names: checked when asked for
	// (--audit-log, failing when missing, as serve does) or when one lies
	// beside the file; a registry alone, as downloaded from a node's
	// /registry, is checked by its signature and the log is skipped.
	skipped := false
	if v.Log != nil && p.file && !o.signatureOnly && (len(args) == 1 || o.auditLog != "") {
		logPath, strict := o.auditLog, true
		if logPath == "" {
			logPath, strict = p.regName+".audit.jsonl", false
		}
		if _, err := os.Stat(logPath); !strict && errors.Is(err, fs.ErrNotExist) {
			skipped = true
		} else if !verifyLog(env, p.regName, logPath, reg, v) {
			return ExitFail
		}
	}
	until := ""
	if !v.Expires.IsZero() {
		until = ", in force until " + v.Expires.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(env.Stdout, "OK: signed by %s (curator %s)%s\n", curatorkey.Encode(v.Signer), reg.Curator().Name, until)
	if skipped {
		fmt.Fprintf(env.Stdout, "audit log: none beside the registry; skipped (pass --audit-log PATH to check one). The signature names its entry %d (%s): a node serving this file needs that log beside it; 3gs audit fetch --from NODE_URL --registry %s gets it and checks it.\n",
			v.Log.Seq, v.Log.Hash, signature.ShellQuote(p.regName))
	}
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

// verifyLog checks the audit log at logPath against the head the
// signature of the registry file regName names, printing the FAIL line
// when it does not match.
func verifyLog(env *Env, regName, logPath string, reg *registry.Registry, v *signature.Verified) bool {
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
