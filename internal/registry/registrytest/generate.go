// Package registrytest generates large registries that read like curated
// ones, for the tests and benchmarks that ask how 3gs behaves at 1,000,
// 10,000 or 100,000 categories.
//
// A real registry of that size is a few thousand products, projects and
// places, each with a handful of topics, written in ordinary English. The
// generator follows that shape: every category is a subject (a made-up
// proper noun, such as a database or a camera called "Vorlanix") of one
// of eighteen domains, crossed with one of that domain's topics
// ("replication", "white balance"), and its text comes from sentence
// templates that mix the two with the domain's other topics. So the
// vocabulary grows with the registry, as real text does, a topic word is
// shared by many categories, and no two categories read the same. Sizes
// are close to the registry 3gs ships: about 1.4 KB a category once
// encoded.
//
// The package depends on gen alone, so the registry package's own tests
// may use it.
package registrytest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/three-good-sources/3gs/gen"
)

// Generate returns a registry of n categories that passes every schema
// rule and registry rule, with no warnings. The same n and seed give the
// same registry. Its curator key is the placeholder; sign it by setting
// Curator.Pubkey first.
func Generate(n int, seed uint64) *gen.Registry {
	g := newGenerator(n, seed)
	doc := &gen.Registry{
		Version:      "1.0.0",
		Updated:      "2026-01-15",
		Curator:      gen.Curator{Name: "Generated curator", Pubkey: "pk:placeholder"},
		Endorsements: []gen.Endorsement{},
		Categories:   make(map[string]gen.Category, n),
	}
	for len(doc.Categories) < n {
		slug, c := g.category()
		if _, dup := doc.Categories[slug]; dup {
			continue // the same subject and topic drawn twice
		}
		doc.Categories[slug] = c
	}
	return doc
}

// Encode is Generate's registry as the bytes of a registry file.
func Encode(n int, seed uint64) []byte {
	return gen.EncodeRegistry(Generate(n, seed))
}

// WriteFile writes Encode(n, seed) to path.
func WriteFile(path string, n int, seed uint64) error {
	return os.WriteFile(path, Encode(n, seed), 0o644)
}

// Queries returns n questions about doc's categories, as an agent would
// ask them: a query pattern, cut short, reworded or with a typo, or
// a category's name; about one in eight is about nothing the registry
// covers, so a benchmark also pays for no-match answers.
func Queries(doc *gen.Registry, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	slugs := make([]string, 0, len(doc.Categories))
	for s := range doc.Categories {
		slugs = append(slugs, s)
	}
	// Map order is random; the same seed must give the same questions.
	slices.Sort(slugs)
	out := make([]string, n)
	for i := range out {
		c := doc.Categories[slugs[rng.IntN(len(slugs))]]
		switch rng.IntN(8) {
		case 0:
			out[i] = offTopic[rng.IntN(len(offTopic))]
		case 1:
			out[i] = strings.ToLower(c.Name)
		case 2: // a typo: two letters of the longest word swapped
			words := strings.Fields(c.QueryPatterns[rng.IntN(len(c.QueryPatterns))])
			long := 0
			for j, w := range words {
				if len(w) > len(words[long]) {
					long = j
				}
			}
			if w := []byte(words[long]); len(w) > 4 {
				w[1], w[2] = w[2], w[1]
				words[long] = string(w)
			}
			out[i] = strings.Join(words, " ")
		case 3: // the first few words only
			words := strings.Fields(c.QueryPatterns[rng.IntN(len(c.QueryPatterns))])
			out[i] = strings.Join(words[:min(len(words), 2+rng.IntN(2))], " ")
		default:
			out[i] = c.QueryPatterns[rng.IntN(len(c.QueryPatterns))]
		}
	}
	return out
}

// offTopic are questions no generated category is about.
var offTopic = []string{
	"how tall is the eiffel tower", "who won the 1998 world cup", "what is the capital of mongolia",
	"best sushi restaurant near me", "meaning of the word serendipity", "how long do cats live",
}

// subject is a named thing of a domain that several categories are about.
type subject struct {
	name   string // "Vorlanix"
	slug   string // "vorlanix"
	domain *domain
	head   string // what kind of thing it is: "database"
}

type generator struct {
	rng      *rand.Rand
	subjects []subject
}

// subjectsPer is how many categories a subject has on average: a real
// registry covers a product or a place under a few topics, not one.
const subjectsPer = 3

func newGenerator(n int, seed uint64) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	seen := map[string]bool{}
	for len(g.subjects) < n/subjectsPer+50 {
		name := g.properNoun()
		if seen[name] {
			continue
		}
		seen[name] = true
		d := &domains[g.rng.IntN(len(domains))]
		g.subjects = append(g.subjects, subject{
			name: name, slug: strings.ToLower(name), domain: d,
			head: d.heads[g.rng.IntN(len(d.heads))],
		})
	}
	return g
}

// properNoun makes a name from two to four syllables, the way product and
// project names are coined.
func (g *generator) properNoun() string {
	var b strings.Builder
	for range 2 + g.rng.IntN(3) {
		b.WriteString(syllables[g.rng.IntN(len(syllables))])
	}
	r := []rune(b.String())
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

var syllables = strings.Fields("ka lo mi ne ru sa ti vo be da fi go hu je ko la mu ni po re si tu va wi ze bra cle dro fla gri plo sta tre vel mon tar ser lin dex nix qu ax or en is an ol um ys")

func (g *generator) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// others are k topics of d other than t, in random order.
func (g *generator) others(d *domain, t string, k int) []string {
	var out []string
	for _, i := range g.rng.Perm(len(d.topics)) {
		if d.topics[i] != t && len(out) < k {
			out = append(out, d.topics[i])
		}
	}
	return out
}

func (g *generator) category() (string, gen.Category) {
	s := &g.subjects[g.rng.IntN(len(g.subjects))]
	d := s.domain
	topic := g.pick(d.topics)
	more := g.others(d, topic, 3)
	minutes, year := strconv.Itoa(5+g.rng.IntN(40)), strconv.Itoa(2016+g.rng.IntN(10))
	r := strings.NewReplacer(
		"{S}", s.name, "{s}", s.slug, "{h}", s.head, "{t}", topic, "{T}", title(topic),
		"{t2}", more[0], "{t3}", more[1], "{t4}", more[2],
		"{v}", g.pick(verbs), "{n}", minutes, "{y}", year,
	)
	fill := r.Replace
	word := slugify(strings.Fields(topic)[0]) // "ai" of "AI opponents", for a repository name
	slug := s.slug + "-" + slugify(topic)
	c := gen.Category{
		Name:        fill(g.pick(nameTemplates)),
		Description: fill(g.pick(descriptions)),
	}
	if g.rng.IntN(3) > 0 {
		c.Description += " " + fill(g.pick(afterwords))
	}
	for _, i := range g.rng.Perm(len(patterns))[:4+g.rng.IntN(3)] {
		c.QueryPatterns = append(c.QueryPatterns, fill(patterns[i]))
	}
	tslug := slugify(topic)
	official := []gen.Source{
		{Name: fill("{S} documentation: {T}"), URL: "https://" + s.slug + ".org/docs/" + tslug + "/", Type: gen.SourceTypeDocumentation},
		{Name: fill("The {S} Handbook"), URL: "https://docs." + s.slug + ".io/handbook/" + tslug, Type: gen.SourceTypeBook},
		{Name: fill("{S} reference manual"), URL: "https://www." + s.slug + ".com/manual/" + tslug + ".html", Type: gen.SourceTypeDocumentation},
	}
	guide := []gen.Source{
		{Name: fill("{T} with {S}, step by step"), Type: gen.SourceTypeTutorial},
		{Name: fill("A field guide to {t} on the {S} {h}"), Type: gen.SourceTypeArticle},
		{Name: fill("{S} {t} in {n} minutes"), Type: gen.SourceTypeVideo},
		{Name: fill("{T}: a course for {S} users"), Type: gen.SourceTypeCourse},
	}
	community := []gen.Source{
		{Name: fill("{S} community forum: {T}"), URL: "https://forum." + s.slug + ".org/c/" + tslug, Type: gen.SourceTypeForum},
		{Name: s.slug + "-" + word + " on GitHub", URL: "https://github.com/" + s.slug + "/" + s.slug + "-" + word, Type: gen.SourceTypeRepo},
		{Name: fill("{S} {t} checker"), URL: "https://tools." + s.slug + ".dev/" + tslug, Type: gen.SourceTypeTool},
	}
	first, second, third := official[g.rng.IntN(len(official))], guide[g.rng.IntN(len(guide))], community[g.rng.IntN(len(community))]
	second.URL = "https://" + g.pick(publishers) + "/" + s.slug + "/" + tslug
	for i, src := range []gen.Source{first, second, third} {
		src.Rank = i + 1
		src.Why = fill(g.pick(whys[src.Type]))
		c.Sources = append(c.Sources, src)
	}
	return slug, c
}

// title capitalizes the first letter: "white balance" → "White balance".
func title(s string) string {
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// slugify keeps letters and digits, lower-cased, joined by single dashes.
func slugify(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}), "-")
}

// domain is a field of knowledge: the kinds of thing its subjects are,
// and the topics a category about one of them can take.
type domain struct {
	heads  []string
	topics []string
}

var domains = []domain{
	{[]string{"database", "query engine", "key-value store"}, []string{"indexes", "replication", "backups", "query plans", "schema migrations", "connection pooling", "vacuuming", "sharding", "transactions", "locking"}},
	{[]string{"web framework", "web server", "HTTP router"}, []string{"routing", "middleware", "templates", "sessions", "authentication", "caching", "form handling", "static files", "websockets", "rate limiting"}},
	{[]string{"programming language", "compiler", "language runtime"}, []string{"generics", "error handling", "concurrency", "memory management", "modules", "unit testing", "macros", "pattern matching", "profiling", "build tooling"}},
	{[]string{"container orchestrator", "deployment tool", "container runtime"}, []string{"rolling updates", "secrets", "health checks", "autoscaling", "overlay networking", "persistent volumes", "service discovery", "log shipping", "metrics", "ingress rules"}},
	{[]string{"firewall", "password manager", "VPN service"}, []string{"threat modeling", "hardening", "audit logging", "key rotation", "two-factor login", "disk encryption", "access control", "incident response", "phishing defence", "encrypted backups"}},
	{[]string{"camera", "lens system", "photo editor"}, []string{"exposure", "white balance", "autofocus", "raw processing", "night photography", "portraits", "composition", "color grading", "firmware updates", "flash photography"}},
	{[]string{"regional cuisine", "bakery style", "cooking tradition"}, []string{"braising", "fermentation", "knife skills", "sauces", "bread dough", "spice blends", "meal prep", "grilling", "pastry", "pickling"}},
	{[]string{"rose variety", "fruit tree", "greenhouse system"}, []string{"pruning", "composting", "pest control", "watering schedules", "soil testing", "propagation", "mulching", "seed starting", "grafting", "overwintering"}},
	{[]string{"synthesizer", "guitar model", "music workstation"}, []string{"chord voicings", "sound design", "tuning", "home recording", "mixing", "scales", "effects pedals", "MIDI mapping", "practice routines", "live setup"}},
	{[]string{"boiler", "heat pump", "window system"}, []string{"installation", "maintenance", "leaks", "insulation", "wiring", "error codes", "noise problems", "energy efficiency", "filter changes", "seasonal checks"}},
	{[]string{"brokerage", "budgeting app", "pension plan"}, []string{"fees", "tax forms", "rebalancing", "index funds", "dividends", "withdrawals", "record keeping", "risk tolerance", "account transfers", "retirement income"}},
	{[]string{"hiking trail", "national park", "mountain range"}, []string{"route planning", "permits", "camping", "weather forecasts", "water sources", "navigation", "wildlife safety", "gear lists", "elevation gain", "winter travel"}},
	{[]string{"microcontroller board", "single-board computer", "3D printer"}, []string{"firmware flashing", "GPIO pins", "power supplies", "bed leveling", "sensor wiring", "serial console", "cooling", "calibration", "enclosures", "soldering"}},
	{[]string{"language", "regional dialect", "writing system"}, []string{"pronunciation", "grammar", "vocabulary building", "listening practice", "verb conjugation", "reading practice", "handwriting", "idioms", "exam preparation", "conversation practice"}},
	{[]string{"training plan", "team sport", "martial art"}, []string{"warm-ups", "injury prevention", "strength work", "sports nutrition", "recovery", "technique drills", "endurance", "flexibility", "race preparation", "beginner programs"}},
	{[]string{"notebook tool", "plotting library", "machine learning library"}, []string{"data cleaning", "feature engineering", "model evaluation", "visualization", "data pipelines", "hyperparameter tuning", "model deployment", "time series", "clustering", "explainability"}},
	{[]string{"game engine", "board game", "strategy game"}, []string{"physics", "shaders", "level design", "openings", "multiplayer", "modding", "scripting", "asset pipelines", "AI opponents", "frame rate"}},
	{[]string{"home router", "mesh network", "DNS server"}, []string{"port forwarding", "VLANs", "IPv6", "DHCP leases", "firmware upgrades", "Wi-Fi channels", "VPN tunnels", "DNS records", "traffic shaping", "troubleshooting"}},
}

var verbs = []string{"set up", "configure", "fix", "improve", "learn", "understand", "automate", "test", "speed up", "check", "plan", "get started with"}

var nameTemplates = []string{
	"{S} {T}", "{T} in {S}", "{S}: {T}", "{T} for the {S} {h}", "Learning {t} with {S}", "{S} {h}: {t}",
}

var descriptions = []string{
	"{T} in {S}, the {h}: {t2}, {t3} and {t4}, with the mistakes people make the first time and how to recover from them.",
	"Getting {t} right on {S}: what the defaults do, when to change them, and how {t2} and {t3} interact with it.",
	"Everything about {t} for the {S} {h}, from a first working setup to {t2} and {t3} when things get serious.",
	"A practical look at {t} with {S}: the ideas behind it, the settings that matter, and a checklist for {t2}.",
	"How {S} handles {t}, why it differs from other tools of its kind, and where {t2} and {t4} come in.",
	"Day-to-day {t} on {S} and what to do when it goes wrong, including {t2}, {t3} and the common error messages.",
	"Understanding {t} on the {S} {h} well enough to explain it to someone else, with {t2} as the worked example.",
}

var afterwords = []string{
	"Covers releases from {y} on.",
	"Aimed at people who already use {S} every day.",
	"Includes worked examples and the questions beginners ask most.",
	"Skips the history and goes straight to what works.",
	"Useful before a migration or an upgrade.",
	"Written for readers coming from other tools.",
}

var patterns = []string{
	"how to {v} {t} in {s}",
	"{s} {t} tutorial",
	"{s} {t} not working",
	"best practices for {t} with {s}",
	"{s} {h} {t} guide",
	"what is {t} in {s}",
	"{s} {t} for beginners",
	"{t} {s} example",
	"{v} {s} {t}",
	"{s} {t} vs {t2}",
	"why does {s} {t} fail",
}

var publishers = []string{
	"learnwithkai.com", "practicalnotes.net", "fieldguides.org", "thecraftsman.blog", "weekendprojects.io",
	"deepdives.dev", "stepwise.academy", "clearlyexplained.com", "handsonlab.org", "nerdnotebook.net",
	"slowcraft.co", "makersjournal.com", "plainguides.org", "thetinkerer.net", "quietexpert.io",
}

var whys = map[gen.SourceType][]string{
	gen.SourceTypeDocumentation: {
		"Written by the {S} maintainers and kept current with each release; the {t} chapter is the one the other guides quote.",
		"The authoritative page for {t} on {S}, for when the exact option or default matters more than an overview.",
		"Complete and precise about {t}, if dry; read it after a tutorial, when the details start to matter.",
	},
	gen.SourceTypeBook: {
		"The whole book is free online; its {t} part explains the reasoning, so later surprises make sense.",
		"A thorough book by people who build {S}, with a chapter on {t} and another on {t2} that pair well.",
	},
	gen.SourceTypeTutorial: {
		"Walks through {t} on a real {h} and explains each step instead of just listing commands.",
		"A patient, hands-on start: by the end a working {t} setup exists and the reader knows why it works.",
	},
	gen.SourceTypeArticle: {
		"A long article from someone who ran {S} for years; strongest on {t2} and on the trade-offs nobody documents.",
		"Compares the approaches to {t} honestly, with numbers, and says which one to choose when.",
	},
	gen.SourceTypeVideo: {
		"A {n}-minute video that shows {t} and {t2} side by side, useful when the written docs feel abstract.",
		"Recorded at a user conference; the demo of {t} on a live {S} {h} answers most first questions.",
	},
	gen.SourceTypeCourse: {
		"A free course with exercises after each lesson; the {t} module alone is worth the sign-up.",
		"Structured and paced for beginners, with quizzes that catch the usual misunderstandings about {t}.",
	},
	gen.SourceTypeForum: {
		"Where people post the {t} problems the manual does not cover; most questions there already have an answer.",
		"Active and friendly; searching it for an error message about {t} is usually the fastest fix.",
	},
	gen.SourceTypeRepo: {
		"Small, readable examples of {t} that can be copied and adapted; the issue tracker shows which still work.",
		"The community's collection of {t} recipes for {S}, reviewed before they are merged.",
	},
	gen.SourceTypeTool: {
		"Checks {S} setups for the usual {t} mistakes and says how to fix each one it finds.",
		"A small tool that automates the tedious part of {t}, with a dry-run mode to see what it would change.",
	},
}

// Describe says what Generate(n, seed) holds, for benchmark output.
func Describe(n int) string {
	return fmt.Sprintf("%d generated categories (registrytest: %d domains, about %d named subjects, English templates)", n, len(domains), n/subjectsPer+50)
}
