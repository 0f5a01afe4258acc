package curatorkey

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tv42/zbase32"
)

// Known answers, each from outside this project: the z-base-32 examples of
// the zbase32 library documentation (which follow Zimmermann's paper), a
// key pair from PKARR's own tests, and RFC 8032's first Ed25519 test key
// encoded by GNU coreutils (base32, then tr into the z-base-32 alphabet).
func TestZBase32KnownAnswers(t *testing.T) {
	for _, v := range []struct {
		in   []byte
		want string
	}{
		{[]byte{240, 191, 199}, "6n9hq"},
		{[]byte{0x10, 0x11, 0x10}, "nyety"},
		{[]byte("Hello world\n"), "jb1sa5dxrb5s6huccofy"},
	} {
		if got := zbase32.EncodeToString(v.in); got != v.want {
			t.Errorf("z-base-32 of %x = %s, want %s", v.in, got, v.want)
		}
	}
}

func TestPublicKeyKnownAnswers(t *testing.T) {
	for _, v := range []struct{ seed, pubHex, z32 string }{
		{ // PKARR's test key
			"5aa93b299a343aa2691739771f2b5b85e740ca14c685793d67870f88fa89dc51",
			"3326b0f07db3ab1f085adf52f5928e7fda002dd4c2c5822146865ed6ba1ec4bf",
			"gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o",
		},
		{ // RFC 8032, section 7.1, test 1
			"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
			"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
			"47pjoycnsrfmxikm95jh13y88e8qnhzu5kungjpxyepgt7a8krpy",
		},
	} {
		key, err := ParseSeed(v.seed)
		if err != nil {
			t.Fatal(err)
		}
		pub := Public(key)
		if hex.EncodeToString(pub) != v.pubHex {
			t.Errorf("seed %s: public key %x, want %s", v.seed, pub, v.pubHex)
		}
		if got := Encode(pub); got != v.z32 {
			t.Errorf("seed %s: z-base-32 %s, want %s", v.seed, got, v.z32)
		}
		if got := URI(pub); got != "pk:"+v.z32 {
			t.Errorf("URI %s", got)
		}
		for _, form := range []string{v.z32, "pk:" + v.z32} {
			back, err := ParsePublicKey(form)
			if err != nil || !bytes.Equal(back, pub) {
				t.Errorf("ParsePublicKey(%s) = %x, %v; want %s", form, back, err, v.pubHex)
			}
		}
		if SeedHex(key) != v.seed {
			t.Errorf("SeedHex = %s, want %s", SeedHex(key), v.seed)
		}
	}
}

func TestParsePublicKeyRejects(t *testing.T) {
	good := "gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"
	// A 52-character string whose last character carries non-zero padding
	// bits: only the top bit of the last character is key data, and 'n'
	// is 2 = 0b00010 (the canonical 'o' is 16 = 0b10000).
	nonCanonical := good[:51] + "n"
	// 32 bytes that are not a point: y = 2 has no x on the curve.
	notPoint := Encode(append([]byte{2}, make([]byte, 31)...))
	for in, want := range map[string]string{
		"":                                  "is 0 characters long",
		"pk:placeholder":                    "is 11 characters long",
		good[:51]:                           "is 51 characters long",
		good + "y":                          "is 53 characters long",
		strings.ToUpper(good):               "not in the z-base-32 alphabet",
		"pk:" + good[:10] + "l" + good[11:]: "has 'l' at position 14",
		good[:20] + "0" + good[21:]:         "has '0' at position 21",
		nonCanonical:                        "not canonical",
		notPoint:                            "not a point on the curve",
	} {
		_, err := ParsePublicKey(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePublicKey(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestParseSeedRejectsWithoutEchoing(t *testing.T) {
	secretish := strings.Repeat("zz", 32)
	for in, want := range map[string]string{
		"":                       "found 0 characters",
		strings.Repeat("ab", 31): "found 62 characters",
		secretish:                "not 0-9 or a-f",
		strings.Repeat("ab", 33): "found 66 characters",
	} {
		_, err := ParseSeed(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSeed(%q) = %v, want %q", in, err, want)
		}
		if err != nil && in != "" && strings.Contains(err.Error(), in) {
			t.Errorf("error repeats the secret: %v", err)
		}
	}
	if _, err := ParseSeed("  " + strings.Repeat("AB", 32) + "\n"); err != nil {
		t.Errorf("upper-case hex with white space: %v", err)
	}
}

func TestKeyFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "curator.key")
	key, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(path, key); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	kf, err := ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !kf.Key.Equal(key) || kf.Exposed {
		t.Errorf("read back a different key or exposed=%v", kf.Exposed)
	}
	// Never overwritten.
	other, _ := Generate()
	if err := WriteKeyFile(path, other); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second WriteKeyFile: %v, want a refusal", err)
	}
	if kf, _ := ReadKeyFile(path); !kf.Key.Equal(key) {
		t.Error("the key file changed")
	}
	// A readable-by-others file is reported, not silently accepted.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if kf, _ := ReadKeyFile(path); !kf.Exposed || kf.Mode != 0o644 {
		t.Errorf("mode 0644: exposed=%v mode=%v", kf.Exposed, kf.Mode)
	}
}

func TestReadKeyFileRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for path, want := range map[string]string{
		write("short", "abcd\n"):                                                "is not a key file",
		write("big", strings.Repeat("a", 5000)):                                 "one line of 64 hex characters",
		write("pub", "pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"): "is not a key file",
		filepath.Join(dir, "missing"):                                           "no such file",
		dir:                                                                     "not a regular file",
	} {
		_, err := ReadKeyFile(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadKeyFile(%s) = %v, want %q", filepath.Base(path), err, want)
		}
	}
}

// Every key round-trips through its text form, and no other spelling of
// it parses.
func FuzzParsePublicKey(f *testing.F) {
	f.Add("gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o")
	f.Add("pk:47pjoycnsrfmxikm95jh13y88e8qnhzu5kungjpxyepgt7a8krpy")
	f.Add("pk:placeholder")
	f.Fuzz(func(t *testing.T, s string) {
		pub, err := ParsePublicKey(s)
		if err != nil {
			return
		}
		if len(pub) != ed25519.PublicKeySize {
			t.Fatalf("%q parsed to %d bytes", s, len(pub))
		}
		if z := strings.TrimPrefix(s, Prefix); Encode(pub) != z {
			t.Fatalf("%q parsed, but encodes back as %s", s, Encode(pub))
		}
	})
}
