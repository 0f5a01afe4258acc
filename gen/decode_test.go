package gen_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// validRegistry is the smallest registry the schema accepts; each case below
// breaks it in one way by replacing text.
const validRegistry = `{"version":"1.0.0","updated":"2026-11-21","curator":{"name":"C","pubkey":"pk:placeholder"},"endorsements":[],` +
	`"categories":{"go":{"name":"Go","description":"D","query_patterns":["learn go","go tutorial","go modules"],"sources":[` +
	`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},` +
	`{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},` +
	`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}}`

const firstSource = `{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"}`

// goCategory is the text of the base document's only category.
var goCategory = validRegistry[strings.Index(validRegistry, `"go":`)+len(`"go":`) : len(validRegistry)-2]

// messages flattens an error from a generated decoder into its lines.
func messages(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs strictjson.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is %T, not strictjson.Errors: %v", err, err)
	}
	return errs.Lines()
}

func TestDecodeRegistryRejects(t *testing.T) {
	slugPattern := "^[a-z0-9]+(-[a-z0-9]+)*$"
	versionPattern := `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`
	cases := []struct {
		name     string
		old, new string // replace the first old with new in validRegistry
		want     []string
	}{
		{"unknown key", `"version":"1.0.0"`, `"version":"1.0.0","extra":1`,
			[]string{"extra: unknown field; allowed: version, updated, curator, endorsements, categories"}},
		{"case-variant key", `"name":"Go"`, `"name":"Go","Name":"Go"`,
			[]string{`categories.go.Name: unknown field; field names are case-sensitive, did you mean "name"?`}},
		{"case-variant key alone", `"name":"Go"`, `"NAME":"Go"`,
			[]string{`categories.go.NAME: unknown field; field names are case-sensitive, did you mean "name"?`, "categories.go.name: required field is missing"}},
		{"duplicate key", `"version":"1.0.0"`, `"version":"1.0.0","version":"2.0.0"`,
			[]string{"version: duplicate key"}},
		{"duplicate map key", `}}}`, `},"go":` + goCategory + `}}`,
			[]string{"categories.go: duplicate key"}},
		{"duplicate object key nested", `"rank":1,`, `"rank":1,"rank":1,`,
			[]string{"categories.go.sources[0].rank: duplicate key"}},
		{"fractional integer", `"rank":1,`, `"rank":1.5,`,
			[]string{"categories.go.sources[0].rank: must be an integer, got 1.5"}},
		{"string for integer", `"rank":1,`, `"rank":"1",`,
			[]string{"categories.go.sources[0].rank: must be an integer, got a string"}},
		{"wrong type", `"version":"1.0.0"`, `"version":1`,
			[]string{"version: must be a string, got a number"}},
		{"missing required", `,"why":"W"}`, `}`,
			[]string{"categories.go.sources[0].why: required field is missing"}},
		{"missing several", `"curator":{"name":"C","pubkey":"pk:placeholder"}`, `"curator":{}`,
			[]string{"curator.name: required field is missing", "curator.pubkey: required field is missing"}},
		{"null object", `"curator":{"name":"C","pubkey":"pk:placeholder"}`, `"curator":null`,
			[]string{"curator: must be an object, got null"}},
		{"null array", `"endorsements":[]`, `"endorsements":null`,
			[]string{"endorsements: must be an array, got null"}},
		{"null string", `"name":"Go"`, `"name":null`,
			[]string{"categories.go.name: must be a string, got null"}},
		{"above maximum", `"rank":1,`, `"rank":4,`,
			[]string{"categories.go.sources[0].rank: must be <= 3"}},
		{"below minimum", `"rank":1,`, `"rank":0,`,
			[]string{"categories.go.sources[0].rank: must be >= 1"}},
		{"empty string", `"name":"Go"`, `"name":""`,
			[]string{"categories.go.name: must not be empty"}},
		{"too long string", `"name":"Go"`, `"name":"` + strings.Repeat("é", 201) + `"`,
			[]string{"categories.go.name: must be at most 200 characters long"}},
		{"NUL in string", `"name":"Go"`, `"name":"G\u0000o"`,
			[]string{"categories.go.name: must not contain NUL characters"}},
		{"too few sources", firstSource + ",", "",
			[]string{"categories.go.sources: must have exactly 3 items, got 2"}},
		{"too many sources", firstSource, firstSource + "," + firstSource,
			[]string{"categories.go.sources: must have exactly 3 items, got 4"}},
		{"too few patterns", `,"go modules"`, ``,
			[]string{"categories.go.query_patterns: must have at least 3 items, got 2"}},
		{"bad slug", `"categories":{"go":`, `"categories":{"Go_Lang":`,
			[]string{"categories.Go_Lang: key must match the pattern " + slugPattern}},
		{"slug needing quotes", `"categories":{"go":`, `"categories":{"go lang":`,
			[]string{`categories["go lang"]: key must match the pattern ` + slugPattern}},
		{"bad version", `"version":"1.0.0"`, `"version":"1.0"`,
			[]string{"version: must match the pattern " + versionPattern + `, got "1.0"`}},
		{"unknown enum value", `"type":"tool"`, `"type":"videos"`,
			[]string{`categories.go.sources[0].type: must be one of documentation, tutorial, video, article, tool, repo, forum, book, course, api; got "videos"`}},
		{"URL with spaces", `"url":"https://a.example/"`, `"url":"not a url"`,
			[]string{`categories.go.sources[0].url: must be an absolute URL, got "not a url"`,
				`categories.go.sources[0].url: must match the pattern ^https?://, got "not a url"`}},
		{"URL without scheme", `"url":"https://a.example/"`, `"url":"a.example/docs"`,
			[]string{`categories.go.sources[0].url: must be an absolute URL with a scheme such as https://, got "a.example/docs"`,
				`categories.go.sources[0].url: must match the pattern ^https?://, got "a.example/docs"`}},
		{"URL without host", `"url":"https://a.example/"`, `"url":"https:///docs"`,
			[]string{`categories.go.sources[0].url: must be an absolute URL with a host, got "https:///docs"`}},
		{"URL of another scheme", `"url":"https://a.example/"`, `"url":"ftp://a.example/"`,
			[]string{`categories.go.sources[0].url: must match the pattern ^https?://, got "ftp://a.example/"`}},
		{"impossible date", `"updated":"2026-11-21"`, `"updated":"2026-02-30"`,
			[]string{`updated: must be a real date in YYYY-MM-DD form, got "2026-02-30"`}},
		{"date in another form", `"updated":"2026-11-21"`, `"updated":"21 Nov 2026"`,
			[]string{`updated: must be a date in YYYY-MM-DD form, got "21 Nov 2026"`}},
		{"empty categories", `"categories":{"go":`, `"categories":{},"x":{"go":`,
			[]string{"categories: must not be empty", "x: unknown field; allowed: version, updated, curator, endorsements, categories"}},
		{"several problems at once", `"rank":1,"name":"A"`, `"rank":9,"name":""`,
			[]string{"categories.go.sources[0].rank: must be <= 3", "categories.go.sources[0].name: must not be empty"}},
		{"long unknown key is shortened", `"version":"1.0.0"`, `"version":"1.0.0","` + strings.Repeat("k", 100) + `":1`,
			[]string{`["` + strings.Repeat("k", 40) + `"…]: unknown field; allowed: version, updated, curator, endorsements, categories`}},
		{"not an object", validRegistry, `[]`,
			[]string{"must be an object, got an array"}},
		{"not JSON", validRegistry, `{"version":`,
			[]string{"invalid JSON: unexpected end of input"}},
		{"trailing data", validRegistry, validRegistry + `x`,
			[]string{"invalid JSON: syntax error at byte " + strconv.Itoa(len(validRegistry))}},
		{"invalid UTF-8", `"name":"Go"`, "\"name\":\"G\xffo\"",
			[]string{"invalid UTF-8 at byte " + strconv.Itoa(strings.Index(validRegistry, `"name":"Go"`)+9)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(validRegistry, c.old) {
				t.Fatalf("case does not apply: %q not in the base document", c.old)
			}
			doc := strings.Replace(validRegistry, c.old, c.new, 1)
			_, err := DecodeRegistry([]byte(doc))
			if got := messages(t, err); !slices.Equal(got, c.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

func TestDecodeRegistryAccepts(t *testing.T) {
	r, err := DecodeRegistry([]byte(validRegistry))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Categories["go"]
	if len(c.Sources) != 3 || c.Sources[2].Rank != 3 || c.Sources[1].Type != SourceTypeBook || c.Sources[0].URL != "https://a.example/" {
		t.Errorf("decoded wrongly: %+v", c)
	}
	// JSON Schema counts 2.0 as an integer.
	r, err = DecodeRegistry([]byte(strings.Replace(validRegistry, `"rank":1,`, `"rank":1.0,`, 1)))
	if err != nil || r.Categories["go"].Sources[0].Rank != 1 {
		t.Errorf("rank 1.0: %v", err)
	}
	// Optional fields: an endorsement without a name, and one with.
	doc := strings.Replace(validRegistry, `"endorsements":[]`, `"endorsements":[{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"https://e.example/","since":"2026-01-01"},{"pubkey":"pk:47pjoycnsrfmxikm95jh13y88e8qnhzu5kungjpxyepgt7a8krpy","url":"https://f.example/","since":"2026-01-02","name":"F"}]`, 1)
	r, err = DecodeRegistry([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if r.Endorsements[0].Name != nil || r.Endorsements[1].Name == nil || *r.Endorsements[1].Name != "F" {
		t.Errorf("optional name decoded wrongly: %+v", r.Endorsements)
	}
}

func TestDecodeToolInputs(t *testing.T) {
	cases := []struct {
		name   string
		decode func([]byte) error
		in     string
		want   []string
	}{
		// get_sources takes exactly one of query or slug (the schema's
		// oneOf): the decoder refuses neither and both, saying how to
		// choose; explain_match requires query.
		{"query and slug missing", getSources, `{}`, []string{neither}},
		{"threshold only", getSources, `{"threshold":0.5}`, []string{neither}},
		{"query and slug both", getSources, `{"query":"learn rust","slug":"rust-learning"}`, []string{both}},
		{"both, and an unknown argument", getSources, `{"slug":"a","limit":3,"query":"b"}`, []string{"limit: unknown field; allowed: query, slug, threshold", both}},
		{"slug alone", getSources, `{"slug":"rust-learning","threshold":0.5}`, nil},
		// A key given counts, as in JSON Schema, even with a wrong value:
		// the one problem is the value.
		{"query null", getSources, `{"query":null}`, []string{"query: must be a string, got null"}},
		{"duplicate slug", getSources, `{"slug":"a","slug":"b"}`, []string{"slug: duplicate key"}},
		{"not an object", getSources, `["query"]`, []string{"must be an object, got an array"}},
		{"explain query missing", explainMatch, `{}`, []string{"query: required field is missing"}},
		{"slug empty", getSources, `{"slug":""}`, []string{"slug: must not be empty"}},
		// get_sources answers "" itself (as a blank query); explain_match
		// keeps the minimum length, so the decoder's rule is still tested.
		{"query empty", getSources, `{"query":""}`, nil},
		{"explain query empty", explainMatch, `{"query":""}`, []string{"query: must not be empty"}},
		{"threshold above 1", getSources, `{"query":"x","threshold":1.5}`, []string{"threshold: must be <= 1"}},
		{"threshold below 0", getSources, `{"query":"x","threshold":-0.1}`, []string{"threshold: must be >= 0"}},
		{"threshold as string", getSources, `{"query":"x","threshold":"high"}`, []string{"threshold: must be a number, got a string"}},
		{"case-variant argument", getSources, `{"query":"x","Query":"y"}`, []string{`Query: unknown field; field names are case-sensitive, did you mean "query"?`}},
		{"unknown argument", getSources, `{"query":"x","limit":3}`, []string{"limit: unknown field; allowed: query, slug, threshold"}},
		{"arguments null", getSources, `null`, []string{"must be an object, got null"}},
		{"valid", getSources, `{"query":"learn go","threshold":0.5}`, nil},
		{"no-parameter tool given one", getEndorsements, `{"x":1}`, []string{"x: unknown field; this object takes no fields"}},
		{"no-parameter tool", getEndorsements, `{}`, nil},
		{"list filter too long", listCategories, `{"filter":"` + strings.Repeat("a", 201) + `"}`, []string{"filter: must be at most 200 characters long"}},
		{"list limit 0", listCategories, `{"limit":0}`, []string{"limit: must be >= 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := messages(t, c.decode([]byte(c.in))); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// The reasons get_sources' oneOf gives, from its branches' descriptions.
const (
	neither = "needs exactly one of query or slug, got neither: query searches by topic; slug names a category from an earlier answer or list_categories"
	both    = "needs exactly one of query or slug, got both: query searches by topic; slug names a category from an earlier answer or list_categories"
)

func getSources(b []byte) error      { _, err := DecodeGetSourcesInput(b); return err }
func explainMatch(b []byte) error    { _, err := DecodeExplainMatchInput(b); return err }
func listCategories(b []byte) error  { _, err := DecodeListCategoriesInput(b); return err }
func getEndorsements(b []byte) error { _, err := DecodeGetEndorsementsInput(b); return err }
