package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeDocs(t *testing.T, docs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range docs {
		if err := os.WriteFile(filepath.Join(dir, name+documentSuffix), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	thingDoc = `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}},"$defs":{"part":{"type":"object","additionalProperties":false,"properties":{"b":{"type":"string"}}}}}`
	// userDoc uses thingDoc's definition; named auser it sorts before it.
	userDoc = `{"type":"object","additionalProperties":false,"properties":{"p":{"$ref":"thing.schema.json#/$defs/part"}}}`
)

// A document may use another's $defs, whichever way their names sort:
// it is parsed, and listed by InOrder, after the one it uses.
func TestDocumentUsesAnothersDefs(t *testing.T) {
	for _, user := range []string{"auser", "zuser"} {
		docs, err := readDocuments(writeDocs(t, map[string]string{"thing": thingDoc, user: userDoc}))
		if err != nil {
			t.Fatalf("%s: %v", user, err)
		}
		d := docs.find(user)
		if p := d.Node.Properties[0].Schema; p.Ref != docs.find("thing").Node.Defs["part"] {
			t.Errorf("%s: p does not resolve to thing's part: %+v", user, p)
		}
		var order []string
		for _, x := range docs.InOrder() {
			order = append(order, x.Name)
		}
		if got := strings.Join(order, ","); got != "thing,"+user {
			t.Errorf("InOrder %v, want thing first", order)
		}
	}
}

// Two documents that use each other's definitions are refused, naming
// both; so is a reference to a document that does not exist.
func TestDocumentReferenceCycleRefused(t *testing.T) {
	a := `{"type":"object","additionalProperties":false,"properties":{"x":{"$ref":"bdoc.schema.json#/$defs/y"}},"$defs":{"x":{"type":"string"}}}`
	b := `{"type":"object","additionalProperties":false,"properties":{"y":{"$ref":"adoc.schema.json#/$defs/x"}},"$defs":{"y":{"type":"string"}}}`
	_, err := readDocuments(writeDocs(t, map[string]string{"adoc": a, "bdoc": b}))
	if err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "adoc") || !strings.Contains(err.Error(), "bdoc") {
		t.Errorf("a cycle: %v", err)
	}
	_, err = readDocuments(writeDocs(t, map[string]string{"adoc": a}))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing document: %v", err)
	}
}
