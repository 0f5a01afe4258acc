package signature

import (
	"crypto/ed25519"
	"strings"

	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// Step is one shell command of a manual verification. Expect is text its
// output contains when all is well, or, for a step that only writes a file,
// starts with "no output".
type Step struct {
	What   string
	Run    string
	Expect string
}

// Files names the registry and signature files the way the reader will
// type them, and says where they come from. Empty names stand for
// registry.json and registry.json.sig.
type Files struct {
	Registry, Signature string
	// Builtin is set when the registry is the one compiled into 3gs:
	// `3gs verify` without paths checks that copy.
	Builtin bool
	// Where tells a reader without 3gs how to get the two files.
	Where string
	// URL, when set, is where a remote reader downloads them: the registry
	// at URL/registry and its signature at URL/registry.sig. The steps
	// then start with the downloads and name the local copies.
	URL string
	// Statement is set when the signature has an expiry, and so signs
	// the statement (see Statement) rather than the registry's bytes.
	Statement bool
}

// Names of the downloaded copies in remote instructions.
const (
	DownloadedRegistry  = "registry.json"
	DownloadedSignature = "registry.json.sig"
)

// download is the step that fetches url into file, failing on an HTTP
// error status rather than saving the error page.
func download(what, url, file string) Step {
	return Step{What: what, Run: "curl -fsS -o " + file + " " + ShellQuote(url), Expect: "no output; " + file + " holds the bytes served"}
}

// Instructions tell a reader how to check a signed registry: one 3gs
// command, and the same check done with common tools.
type Instructions struct {
	Command string
	Where   string
	Steps   []Step
}

// ed25519SPKIPrefix is the DER header of an Ed25519 SubjectPublicKeyInfo
// (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING (33
// bytes, 0 unused bits) }. The 32 key bytes follow it. Written as octal
// escapes, which every POSIX printf understands.
const ed25519SPKIPrefix = `\060\052\060\005\006\003\053\145\160\003\041\000`

// Output files the manual steps create in the current directory.
const (
	SignatureBinFile = "registry.sig.bin"
	PublicKeyDERFile = "curator.der"
	StatementFile    = "registry.statement"
)

// statementJQ is the jq program that prints the statement a signature
// document signs (Statement), built from the document's own fields.
const statementJQ = `"3gs registry signature v2\nsha256 " + .signed_sha256 + "\nexpires " + .expires + "\n" + (if .log_seq then "log \(.log_seq) " + .log_head + "\n" else "" end)`

// ExpiryJQ is the jq program that compares a signature document's expires
// with the current time, printing ExpiryInForce and the date while it is
// in force, else "EXPIRED at" and the date. 3gs writes expires in UTC
// with a Z, the form fromdateiso8601 reads.
const ExpiryJQ = `if (.expires | fromdateiso8601) > now then "` + ExpiryInForce + ` " + .expires else "EXPIRED at " + .expires end`

// ExpiryInForce starts ExpiryJQ's output for a signature in force.
const ExpiryInForce = "in force until"

// StandardBase32Alphabet is RFC 4648's base32 alphabet, onto which the
// manual steps map z-base-32 with tr so coreutils' base32 can decode it.
const StandardBase32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// SignedInstructions are the steps for a registry with digest sha256 signed
// by curator.
func SignedInstructions(curator ed25519.PublicKey, sha256 string, f Files) Instructions {
	f = f.withDefaults()
	z := curatorkey.Encode(curator)
	reg, sig := ShellQuote(f.Registry), ShellQuote(f.Signature)
	cmd := "3gs verify --pubkey " + z + " " + reg + " " + sig
	if f.Builtin {
		cmd = "3gs verify --pubkey " + z
	}
	var fetch []Step
	if f.URL != "" {
		fetch = []Step{
			download("Download the registry exactly as served.", f.URL+"/registry", DownloadedRegistry),
			download("Download its detached signature.", f.URL+"/registry.sig", DownloadedSignature),
		}
	}
	ins := Instructions{
		Command: cmd,
		Where:   f.Where,
		Steps: append(fetch, []Step{
			{
				What:   "Hash the registry file; the first field printed must be the digest expected.",
				Run:    "sha256sum " + reg,
				Expect: sha256,
			},
			{
				What:   "Read the digest the signature covers.",
				Run:    "jq -r .signed_sha256 " + sig,
				Expect: sha256,
			},
			{
				What:   "Decode the 64-byte Ed25519 signature.",
				Run:    "jq -r .signature " + sig + " | base64 -d > " + SignatureBinFile,
				Expect: "no output; " + SignatureBinFile + " holds 64 bytes",
			},
			{
				What: "Turn the curator's z-base-32 key into a DER public key for openssl (first compare " + z + " with the key you trust for this curator).",
				Run: "{ printf '" + ed25519SPKIPrefix + "'; printf '%s====' " + z +
					" | tr '" + curatorkey.Alphabet + "' '" + StandardBase32Alphabet + "' | base32 -d; } > " + PublicKeyDERFile,
				Expect: "no output; " + PublicKeyDERFile + " holds 44 bytes",
			},
		}...),
	}
	signed, what := reg, "the registry's exact bytes."
	if f.Statement {
		signed, what = StatementFile, "the statement."
		signed = StatementFile
		ins.Steps = append(ins.Steps, Step{
			What:   "Rebuild the statement the signature covers: the digest checked above, the expiry and the audit log head, as the signature file names them.",
			Run:    "jq -j '" + statementJQ + "' " + sig + " > " + StatementFile,
			Expect: "no output; " + StatementFile + " holds three or four lines, the second naming the digest",
		})
	}
	ins.Steps = append(ins.Steps, Step{
		What:   "Verify the signature over " + what,
		Run:    "openssl pkeyutl -verify -pubin -keyform DER -inkey " + PublicKeyDERFile + " -rawin -in " + signed + " -sigfile " + SignatureBinFile,
		Expect: "Signature Verified Successfully",
	})
	if f.Statement {
		// openssl says the statement is the curator's; only the clock
		// says whether it still vouches for the registry.
		ins.Steps = append(ins.Steps, Step{
			What:   "Compare the signed expiry with the current time: a signature past its expiry no longer vouches for the registry (an old signed copy put back looks exactly like this), however well it verifies.",
			Run:    "jq -r '" + ExpiryJQ + "' " + sig,
			Expect: ExpiryInForce,
		})
	}
	return ins
}

// UnsignedInstructions are what can still be checked without a signature:
// that the file at hand is the one being served.
func UnsignedInstructions(sha256 string, f Files) Instructions {
	f = f.withDefaults()
	var steps []Step
	if f.URL != "" {
		steps = append(steps, download("Download the registry exactly as served.", f.URL+"/registry", DownloadedRegistry))
	}
	return Instructions{
		Where: f.Where,
		Steps: append(steps, Step{
			What:   "Hash the registry file; the first field printed must be registry_sha256. This shows the file is the one served, not who wrote it.",
			Run:    "sha256sum " + ShellQuote(f.Registry),
			Expect: sha256,
		}),
	}
}

// Remote returns the files as a reader of the server at base (scheme and
// host, maybe a path prefix, no trailing slash) downloads them.
func Remote(base string) Files {
	return Files{
		Registry:  DownloadedRegistry,
		Signature: DownloadedSignature,
		Where:     "served at " + base + "/registry and " + base + "/registry.sig; the first steps download them into the current directory",
		URL:       base,
	}
}

func (f Files) withDefaults() Files {
	if f.Registry == "" {
		f.Registry = "registry.json"
	}
	if f.Signature == "" {
		f.Signature = f.Registry + Suffix
	}
	return f
}

// ShellQuote returns s as one POSIX shell word: unchanged when it holds
// only characters no shell treats specially, single-quoted otherwise.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
