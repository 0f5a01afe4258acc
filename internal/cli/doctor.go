package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/bounded"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// Doctor checks a deployment the way serve would start it, without
// starting it or changing any file: it takes serve's flags and environment
// variables, so `3gs doctor` with the same settings as the server explains
// what the server would refuse or warn about, and how to fix each thing.

// verdict is the outcome of one check.
type verdict int

const (
	ok verdict = iota
	warn
	fail
)

func (v verdict) String() string { return [...]string{"OK", "WARN", "FAIL"}[v] }

// finding is one line of the report.
type finding struct {
	v          verdict
	check, msg string
	fix        string // how to fix it; empty for OK
}

type doctor struct {
	env      *Env
	o        *serveOptions
	findings []finding
	// verified: the registry's own signature verifies, so serve follows
	// its endorsements.
	verified bool
}

func (d *doctor) add(v verdict, check, msg, fix string) {
	// A finding may quote what a peer or a file sent (a fetch's error).
	d.findings = append(d.findings, finding{v, check, textnorm.TerminalLines(msg), fix})
}

func runDoctor(ctx context.Context, env *Env, f *Flags) int {
	d := &doctor{env: env, o: options[serveOptions](f)}
	cfg, err := parseServe(env, f)
	if err != nil {
		d.add(fail, "flags", err.Error(), "correct the flag or its environment variable (3gs help serve lists them)")
	} else {
		d.add(ok, "flags", "every flag and environment variable serve reads is valid", "")
	}
	for _, v := range unknownEnv(env) {
		d.add(warn, "environment", v.name+" is set, but no 3gs command reads it; the nearest one that is read is "+v.closest, "rename it "+v.closest+" if that is what it was meant to set, or unset it (3gs help all lists every variable)")
	}
	reg := d.registry()
	key := d.key(reg)
	d.tokens()
	d.editing(reg, key)
	d.sources(reg)
	d.proposals(f)
	if cfg != nil && cfg.httpAddr != "" {
		d.http(cfg.httpAddr)
	}
	if cfg != nil && reg != nil {
		// The registry doctor reads is the operator's own file.
		d.peers(ctx, reg, cfg.peers.Fetcher.AsOperator(true), cfg.peers.Parallel)
	}
	code := ExitOK
	for _, x := range d.findings {
		line := fmt.Sprintf("%-4s  %s: %s", x.v, x.check, x.msg)
		if x.fix != "" {
			line += ". Fix: " + x.fix
		}
		fmt.Fprintln(env.Stdout, line)
		if x.v == fail {
			code = ExitFail
		}
	}
	return code
}

// sources summarizes the health file of the registry's sources, when
// there is a registry file or --health-file.
func (d *doctor) sources(reg *registry.Registry) {
	regPath, path := d.o.registry, d.o.healthFile
	if path == "" && regPath != "" {
		path = sourcehealth.PathFor(regPath)
	}
	if path == "" || reg == nil {
		return
	}
	howTo := "3gs check " + signature.ShellQuote(regPath)
	if regPath == "" {
		howTo = "3gs check --health-file " + signature.ShellQuote(path)
	}
	doc, err := sourcehealth.Read(path)
	switch {
	case err != nil:
		d.add(warn, "sources", err.Error(), "run "+howTo+" to write it again")
	case doc == nil:
		d.add(ok, "sources", "not checked yet; "+howTo+" checks that every source still answers (or serve --check-sources 24h, in the background)", "")
	default:
		line := sourcehealth.SummaryLine(doc.Summary)
		line += " (checked " + sourcehealth.Ago(doc.CheckedAt, time.Now()) + ")"
		if doc.RegistryVersion != reg.Version() {
			line += ", of version " + doc.RegistryVersion + " (the registry is now " + reg.Version() + ")"
		}
		if doc.Summary.Gone+doc.Summary.Error > 0 {
			d.add(warn, "sources", line, howTo+" lists them; replace the gone ones and apply the redirects")
		} else {
			d.add(ok, "sources", line, "")
		}
	}
}

// registry checks the registry and its signature, as serve reads them but
// without completing an interrupted write (doctor changes nothing).
func (d *doctor) registry() *registry.Registry {
	path := d.o.registry
	if path == "" {
		reg, err := registry.Load(threegs.DefaultRegistry)
		if err != nil {
			d.add(fail, "registry", "the embedded registry does not load: "+err.Error(), "this is a build problem; rebuild 3gs from a clean checkout")
			return nil
		}
		d.add(ok, "registry", fmt.Sprintf("embedded registry.json, version %s, %d %s (set --registry PATH to serve your own)", reg.Version(), len(reg.Categories()), plural(len(reg.Categories()), "category", "categories")), "")
		d.signature(reg, threegs.DefaultSignature, "the embedded registry.json.sig", "")
		return reg
	}
	// A bad --max-registry-bytes is reported under "flags"; the registry
	// is still checked, against the default.
	limit, err := registryLimit(d.o.maxRegistry)
	if err != nil {
		limit = registry.MaxSize
	}
	data, err := signature.ReadLimited(path, limit, "registry")
	var reg *registry.Registry
	if err == nil {
		reg, err = registry.Load(data)
	}
	if err != nil {
		problem, fix := registryProblem(path, err, "serve the embedded registry")
		d.add(fail, "registry", problem, fix)
		return nil
	}
	d.add(ok, "registry", fmt.Sprintf("%s is valid: version %s, %d %s", path, reg.Version(), len(reg.Categories()), plural(len(reg.Categories()), "category", "categories")), "")
	doc, err := signature.ReadLimited(path+signature.Suffix, signature.MaxSize, "signature file")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc = nil
	case err != nil:
		d.add(fail, "signature", err.Error(), "make "+path+signature.Suffix+" readable by the user that runs 3gs")
		return reg
	}
	d.signature(reg, doc, path+signature.Suffix, path)
	return reg
}

// signature checks the registry's signature; regName is its file, "" for
// the embedded registry.
func (d *doctor) signature(reg *registry.Registry, doc []byte, sigName, regName string) {
	_, named := reg.CuratorKey()
	st := signature.Check(reg, doc)
	d.verified = st.Verified
	switch {
	case st.Verified:
		d.add(ok, "signature", fmt.Sprintf("%s verifies: signed by the curator %s at %s", sigName, curatorkey.URI(st.Signer), st.SignedAt.UTC().Format(time.RFC3339)), "")
		d.expiry(st, regName)
	case st.Signed() && d.o.allowUnsigned:
		d.add(warn, "signature", fmt.Sprintf("%s does not verify (%v); --allow-unsigned serves it marked not verified", sigName, st.Problem),
			"if the change is the curator's, re-sign: 3gs sign --key-file KEY "+signature.ShellQuote(shownFile(regName))+"; otherwise restore the registry")
	case st.Signed():
		d.add(fail, "signature", fmt.Sprintf("%s does not verify (%v): the registry was changed after signing, or signed by another key, and serve refuses it", sigName, st.Problem),
			"if the change is the curator's, re-sign: 3gs sign --key-file KEY "+signature.ShellQuote(shownFile(regName))+"; otherwise restore the registry from a trusted copy")
	case named && d.o.allowUnsigned:
		d.add(warn, "signature", "no "+sigName+": the registry names a curator key but is not signed; --allow-unsigned serves it marked not verified",
			"3gs sign --key-file KEY "+signature.ShellQuote(shownFile(regName)))
	case named:
		d.add(fail, "signature", "no "+sigName+": the registry names a curator key but is not signed, and serve refuses it",
			"3gs sign --key-file KEY "+signature.ShellQuote(shownFile(regName))+", or serve it marked not verified with --allow-unsigned")
	default:
		d.add(warn, "signature", "the registry's curator key is "+registry.Placeholder+", so it cannot be signed",
			"3gs keygen --out KEY, put the printed pk:... in curator.pubkey, then 3gs sign --key-file KEY "+signature.ShellQuote(shownFile(regName)))
	}
}

// expiryWarning is how long before its signature expires doctor warns.
const expiryWarning = 48 * time.Hour

// expiry checks when a verified signature stops vouching for the
// registry: serve refuses it after that, and peers refuse it too. The
// embedded registry (regName "") is exempt, as serve exempts it: it ships
// inside the binary, so no one can replay an old copy of it to this
// server, and a fresh install has no key to re-sign it with.
func (d *doctor) expiry(st signature.Status, regName string) {
	resign := "3gs sign --key-file KEY " + signature.ShellQuote(shownFile(regName))
	now := time.Now()
	switch left := st.Expires.Sub(now); {
	case regName == "" && st.Stale(now) != nil:
		d.add(ok, "expiry", "embedded, exempt from expiry: it is part of the binary, so no old copy can be replayed to it; a registry of your own must carry an unexpired signature", "")
	case st.Stale(now) != nil && d.o.allowExpired:
		d.add(warn, "expiry", st.Stale(now).Error()+"; --allow-expired serves it anyway, and peers refuse it", resign)
	case st.Stale(now) != nil:
		d.add(fail, "expiry", st.Stale(now).Error()+"; serve refuses it", resign+", or serve it anyway with --allow-expired")
	case left < expiryWarning:
		d.add(warn, "expiry", fmt.Sprintf("the signature expires on %s, in %s; after that serve and peers refuse the registry", st.Expires.UTC().Format(time.RFC3339), left.Round(time.Minute)), resign)
	case regName != "" && !d.holdsKey():
		// A server with the key signs again before the signature runs
		// out; one without it serves the registry until that moment and
		// then refuses it, and nothing on this machine renews it.
		d.add(warn, "expiry", fmt.Sprintf("the signature expires on %s, in %s, and this server has no curator key (--key-file, THREEGS_KEY_FILE or %s) to sign it again: from then on it refuses to serve the registry", st.Expires.UTC().Format(time.RFC3339), days(left), secretKeyEnv),
			"give the server the curator key (--key-file; under systemd, LoadCredential= as deploy/systemd/3gs.service does), or sign again before then where the key is ("+resign+" --expires SPAN) and bring the registry, its signature and its audit log here, or run this server as a read replica of a node that holds the key (--follow URL --follow-pubkey KEY)")
	default:
		d.add(ok, "expiry", "the signature is valid until "+st.Expires.UTC().Format(time.RFC3339), "")
	}
}

// holdsKey is whether serve, started with these settings, has a curator
// key to sign with: a key file or the key in the environment. Whether it
// is the right key is the key check's business.
func (d *doctor) holdsKey() bool {
	return d.o.key.file != "" || d.env.Getenv(secretKeyEnv) != ""
}

// days says a span of a day or more in days and hours, and a shorter one
// in hours and minutes.
func days(left time.Duration) string {
	if left < 24*time.Hour {
		return left.Round(time.Minute).String()
	}
	d := int(left / (24 * time.Hour))
	h := int((left % (24 * time.Hour)) / time.Hour)
	return fmt.Sprintf("%d %s %d %s", d, plural(d, "day", "days"), h, plural(h, "hour", "hours"))
}

// key checks the curator key, when one is configured.
func (d *doctor) key(reg *registry.Registry) []byte {
	path := d.o.key.file
	if path == "" && d.env.Getenv(secretKeyEnv) == "" {
		return nil
	}
	var exposed string
	key, from, err := signingKey(d.env, d.o.key, func(msg string) { exposed = msg })
	var ek *exposedKeyError
	if errors.As(err, &ek) {
		key, from, err, exposed = ek.key, "--key-file "+path, nil, ek.Error()
	}
	if err != nil {
		fix := "point --key-file (THREEGS_KEY_FILE) at the file 3gs keygen wrote"
		if strings.Contains(err.Error(), "both") {
			fix = "unset one of them"
		}
		d.add(fail, "key", err.Error(), fix)
		return nil
	}
	if exposed != "" {
		d.add(fail, "key", "the curator's secret key in "+path+" is readable by other users", "chmod 600 "+signature.ShellQuote(path))
	}
	pub := curatorkey.Public(key)
	if reg != nil {
		if err := signature.CheckCurator(reg, pub); err != nil {
			d.add(fail, "key", fmt.Sprintf("the key from %s is %s, but the registry names curator %s, so serve refuses it", from, curatorkey.URI(pub), reg.Curator().Pubkey),
				"use the curator's key, or make this one the curator's: set curator.pubkey to "+curatorkey.URI(pub)+" and run 3gs sign")
			return nil
		}
	}
	if exposed == "" {
		d.add(ok, "key", "the curator key from "+from+" is "+curatorkey.URI(pub)+", the key the registry names", "")
	}
	return key
}

// tokens checks the tokens file, when one is configured, and the stdio
// session token (THREEGS_TOKEN) against it, as serve does at start.
func (d *doctor) tokens() {
	path := d.o.tokens
	session := d.env.Getenv(stdioTokenEnv)
	if session != "" && d.o.http != "" {
		d.add(warn, "tokens", stdioTokenEnv+" is set but only a stdio server reads it", "over HTTP each client sends its own token as Authorization: Bearer; unset "+stdioTokenEnv)
		session = ""
	}
	if path == "" {
		if session != "" {
			d.add(warn, "tokens", stdioTokenEnv+" is set but no --tokens file is given, so the token cannot be checked and every caller is public", "add --tokens FILE (THREEGS_TOKENS)")
		}
		return
	}
	q := signature.ShellQuote(path)
	k, err := auth.LoadKeyring(path)
	if err != nil {
		problem, fix := app.TokensProblem(path, err)
		d.add(fail, "tokens", problem, fix)
		return
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		d.add(warn, "tokens", path+" does not exist, so no token is accepted and every caller is public", "check --tokens (THREEGS_TOKENS), or create the file: 3gs token new --tokens "+q+" --tier admin --name NAME")
		return
	}
	counts := k.Count()
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		d.add(warn, "tokens", fmt.Sprintf("%s has mode %04o: others can read the token hashes", path, fi.Mode().Perm()), "chmod 600 "+q)
	}
	msg := fmt.Sprintf("%s holds %d admin and %d user tokens", path, counts[gen.TierAdmin], counts[gen.TierUser])
	switch {
	case counts[gen.TierAdmin]+counts[gen.TierUser] == 0:
		d.add(warn, "tokens", msg+": every caller is public", "3gs token new --tokens "+q+" --tier admin --name NAME")
	case session != "" && !k.Identify(session).Authenticated():
		d.add(warn, "tokens", msg+", but "+stdioTokenEnv+" matches none of them, so a stdio session is public", "check the value of "+stdioTokenEnv+"; 3gs token list --tokens "+q+" names the tokens the file holds")
	default:
		d.add(ok, "tokens", msg, "")
	}
}

// http checks that the address can be bound and that what is exposed is
// meant to be.
func (d *doctor) http(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		d.add(fail, "http", "cannot listen on "+addr+": "+err.Error(), app.ListenFix(err))
		return
	}
	ln.Close()
	if !httpserver.IsLoopbackAddr(addr) {
		d.add(warn, "http", addr+" can be bound and reaches beyond this machine", "put TLS in front (a reverse proxy), give tokens only over it, and list its Host names with --allow-host")
	} else {
		d.add(ok, "http", addr+" can be bound (loopback only)", "")
	}
	list := list(d.o.allowOrigin)
	sane := true
	for _, origin := range list {
		// parseServe refused anything that is not scheme://host[:port].
		host, _, err := net.SplitHostPort(strings.TrimPrefix(origin, "http://") + ":0")
		if strings.HasPrefix(origin, "http://") && err == nil && host != "localhost" && !httpserver.IsLoopbackAddr(host+":0") {
			d.add(warn, "origins", origin+" is plain HTTP: anyone on its network path can pose as it", "allow its https:// origin instead")
			sane = false
		}
	}
	if len(list) > 0 && sane {
		d.add(ok, "origins", "browser pages allowed besides loopback ones: "+strings.Join(list, ", "), "")
	}
}

// peers fetches every endorsed curator's registry once, with serve's
// bounds, and checks it as serve would (never a cached copy: the question
// is whether the peer works now). A peer that fails is a warning: serve
// runs without it.
func (d *doctor) peers(ctx context.Context, reg *registry.Registry, fetcher *peer.Fetcher, parallel int) {
	if n := len(reg.Endorsements()); n > 0 && !d.verified {
		d.add(warn, "peers", fmt.Sprintf("the registry endorses %d curators, but serve follows endorsements only from a registry whose own signature verifies", n),
			"sign it: 3gs sign --key-file KEY REGISTRY")
		return
	}
	// Fetched as serve fetches them, a few at once, and reported in
	// endorsement order.
	type outcome struct {
		c      *peer.Copy
		err    error
		badKey bool // the endorsement itself is wrong; nothing was fetched
	}
	list := reg.Endorsements()
	results := make([]outcome, len(list))
	keys := make([]ed25519.PublicKey, len(list))
	var fetch []int
	for i, e := range list {
		key, err := curatorkey.ParsePublicKey(e.Pubkey)
		if err == nil && e.Pubkey == reg.Curator().Pubkey {
			err = errors.New("this is the registry's own curator key")
		}
		if err != nil {
			results[i] = outcome{err: err, badKey: true}
			continue
		}
		keys[i] = key
		fetch = append(fetch, i)
	}
	bounded.Each(fetch, parallel, func(i int) {
		c, err := fetcher.Fetch(ctx, keys[i], list[i].URL, nil, time.Now())
		results[i] = outcome{c: c, err: err}
	})
	for i, e := range list {
		name := who(e)
		c, err := results[i].c, results[i].err
		switch {
		case results[i].badKey:
			d.add(warn, "peers", name+": "+err.Error(), "remove the endorsement with 3gs endorse --remove "+e.Pubkey)
		case err != nil && peer.IsRefusal(err):
			d.add(warn, "peers", name+" at "+e.URL+" is refused: "+peerProblem(err), "ask that curator to re-sign their registry, or check the endorsed key and URL")
		case err != nil:
			d.add(warn, "peers", name+" at "+e.URL+" cannot be reached: "+peerProblem(err), "check the URL; serve keeps answering from its last verified copy")
		case registry.Confusable(reg.Curator().Name, c.Registry.Curator().Name):
			d.add(warn, "peers", fmt.Sprintf("%s verifies, but its curator name %s reads as this registry's %s, so serve refuses it", name, strconv.QuoteToASCII(c.Registry.Curator().Name), strconv.QuoteToASCII(reg.Curator().Name)),
				"one of the two curators takes a name that cannot be mistaken for the other's")
		default:
			d.add(ok, "peers", fmt.Sprintf("%s verifies: version %s, %d %s", name, c.Registry.Version(), len(c.Registry.Categories()), plural(len(c.Registry.Categories()), "category", "categories")), "")
		}
	}
}

// peerProblem is err, a peer's copy not taken, with what serve's operator
// can do about it (app.PeerFix): doctor fetches with serve's bounds.
func peerProblem(err error) string {
	if fix := app.PeerFix(err); fix != "" {
		return err.Error() + "; " + fix
	}
	return err.Error()
}

func cwd() string {
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "the current directory"
}

// shownFile is the registry file doctor's advice names: the embedded
// registry's is the repository's registry.json.
func shownFile(regName string) string {
	if regName == "" {
		return "registry.json"
	}
	return regName
}
