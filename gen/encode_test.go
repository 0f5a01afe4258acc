package gen_test

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	. "github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// Our registry.json is written the way the encoder writes: members in
// schema order, categories sorted, two-space indent. So a registry the
// server rewrites after an admin change differs from the curator's file
// only where the change is.
func TestEncodeRegistryRoundTrip(t *testing.T) {
	doc, err := DecodeRegistry(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if got := EncodeRegistry(doc); !bytes.Equal(got, threegs.DefaultRegistry) {
		t.Errorf("encoding registry.json does not reproduce it byte for byte:\n%s", firstDiff(got, threegs.DefaultRegistry))
	}
}

// Whatever the layout of the input, encoding keeps every value.
func TestEncodeKeepsValues(t *testing.T) {
	path, ok := testkit.SharedRegistryPath()
	if !ok {
		t.Skip("../shared/fixtures/3gs-registry.json is not here (a fresh clone); the embedded registry round trip still runs")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeRegistry(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeRegistry(EncodeRegistry(doc))
	if err != nil || !reflect.DeepEqual(doc, again) {
		t.Errorf("round trip changed the document: %v", err)
	}
	name := "Ana <\"the\" & curator>\n\ttab \u2028 é"
	doc.Endorsements = []Endorsement{{Pubkey: "pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o", URL: "https://e.example/", Since: "2026-01-01", Name: &name}}
	enc := EncodeRegistry(doc)
	if !strings.Contains(string(enc), `"name": "Ana <\"the\" & curator>\n\ttab \u2028 é"`) {
		t.Errorf("string escaping: %s", enc[:400])
	}
	again, err = DecodeRegistry(enc)
	if err != nil || *again.Endorsements[0].Name != name {
		t.Errorf("escaped string does not round trip: %v", err)
	}
}

func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			lo := max(0, i-80)
			return "got:  ..." + string(a[lo:min(len(a), i+80)]) + "\nwant: ..." + string(b[lo:min(len(b), i+80)])
		}
	}
	return "lengths differ"
}

// A date-time is decoded into a time.Time in UTC and encoded as RFC 3339
// in UTC to the nanosecond: a time 3gs wrote (UTC, no trailing zeros in
// the fraction) is written back byte for byte, which the audit log's
// one-spelling rule and hash chain rely on, and one written with an
// offset decodes, encodes and decodes again to the same value.
func TestDateTimeRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, written string }{
		{"2026-11-25T10:00:00Z", "2026-11-25T10:00:00Z"},
		{"2026-11-25T10:00:00.123456789Z", "2026-11-25T10:00:00.123456789Z"},
		{"2026-11-25T10:00:00.5Z", "2026-11-25T10:00:00.5Z"},
		{"2026-11-25T11:30:00.25+01:30", "2026-11-25T10:00:00.25Z"},
	} {
		line := `{"time":"` + c.in + `","outcome":"slug","registry_version":"1"}`
		v, err := DecodeQueryLog([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if v.Time.Location() != time.UTC {
			t.Errorf("%s: decoded in %v, not UTC", c.in, v.Time.Location())
		}
		enc := EncodeQueryLog(v)
		if want := `"time": "` + c.written + `"`; !bytes.Contains(enc, []byte(want)) {
			t.Errorf("%s: written as %s, want %s", c.in, enc, want)
		}
		again, err := DecodeQueryLog(enc)
		if err != nil || !reflect.DeepEqual(v, again) {
			t.Errorf("%s: decoded again as %+v, %v; first %+v", c.in, again, err, v)
		}
	}
}
