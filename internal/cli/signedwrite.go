package cli

import (
	"crypto/ed25519"
	"fmt"
	"time"
)

// signedWrite are the flags every command that changes a registry and
// signs it shares (sign, audit migrate, proposals accept and reject,
// endorse): the registry file and its size limit, the key, the new
// signature's validity and the audit log.
type signedWrite struct {
	registryFile
	key      keyOptions
	expires  durationFlag
	auditLog string
}

// flags declares them, each with its usage text; auditLogUsage "" is
// --audit-log's usual text.
func (o *signedWrite) flags(f *Flags, registryUsage, keyUsage, expiresUsage, auditLogUsage string) {
	o.registryFile.flags(f, registryUsage)
	keyFlag(f, &o.key, keyUsage)
	expiresFlag(f, &o.expires, expiresUsage)
	if auditLogUsage == "" {
		auditLogFlag(f, &o.auditLog)
	} else {
		f.StringVar(&o.auditLog, "audit-log", "THREEGS_AUDIT_LOG", "", auditLogUsage)
	}
}

// signer is what a signedWrite's flags come to: the key (nil when none
// was given), where it came from, the validity and the size limit.
type signer struct {
	key      ed25519.PrivateKey
	from     string
	validity time.Duration
	limit    int64
}

// signer checks --expires and --max-registry-bytes and reads the key,
// writing what the key's reading warns of to stderr as "3gs CMD: warning:".
func (o *signedWrite) signer(env *Env, cmd string) (signer, error) {
	var s signer
	var err error
	if s.validity, err = validity(o.expires); err != nil {
		return s, err
	}
	if s.limit, err = registryLimit(o.maxRegistry); err != nil {
		return s, err
	}
	s.key, s.from, err = signingKey(env, o.key, func(msg string) { fmt.Fprintf(env.Stderr, "3gs %s: warning: %s\n", cmd, msg) })
	return s, err
}
