package cli

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flags is a command's flag set. Each command binds its flags to the
// fields of its own options struct (options), so a flag is read through
// a field the compiler checks, never by its name. Each flag may have an
// environment twin that supplies its value when the flag is not given; an
// explicit flag wins. The twins are applied in one place, applyEnv.
type Flags struct {
	fs    *pflag.FlagSet
	name  string // "3gs COMMAND", for messages
	env   *Env
	args  []string             // the arguments other than flags
	twins map[string]string    // flag name → environment variable
	defs  map[string]string    // flag name → built-in default, for help
	bools map[string]bool      // the boolean flags, whose twins strconv.ParseBool reads
	opts  map[reflect.Type]any // the command's options structs, made by options
}

func newFlags(c command, env *Env) *Flags {
	f := &Flags{fs: pflag.NewFlagSet("3gs "+c.name, pflag.ContinueOnError), name: "3gs " + c.name, env: env,
		twins: map[string]string{}, defs: map[string]string{}, bools: map[string]bool{}}
	f.fs.SetOutput(io.Discard) // errors are reported once, by usageError
	if c.flags != nil {
		c.flags(f)
	}
	f.applyEnv()
	return f
}

// options is f's options struct of type T, made on first use: the
// command's flags function binds its fields, and its run function reads
// them. A command may have several (serve's flags and those a feature
// adds in a file of its own), one of each type.
func options[T any](f *Flags) *T {
	k := reflect.TypeFor[T]()
	if p, ok := f.opts[k]; ok {
		return p.(*T)
	}
	if f.opts == nil {
		f.opts = map[reflect.Type]any{}
	}
	p := new(T)
	f.opts[k] = p
	return p
}

// applyEnv makes each set environment twin its flag's default, so that a
// flag given on the command line still wins. A boolean twin is true when
// set to 1, t, true (any case), as strconv.ParseBool reads it, and false
// otherwise.
func (f *Flags) applyEnv() {
	f.fs.VisitAll(func(fl *pflag.Flag) {
		twin := f.twins[fl.Name]
		v := ""
		if twin != "" {
			v = f.env.Getenv(twin)
		}
		if v == "" {
			return
		}
		if f.bools[fl.Name] {
			b, _ := strconv.ParseBool(v)
			v = strconv.FormatBool(b)
		}
		if fl.Value.Set(v) == nil {
			fl.DefValue = v
		}
	})
}

func (f *Flags) declare(name, twin, def string) {
	f.twins[name], f.defs[name] = twin, def
}

// StringVar binds a string flag with an environment twin to p.
func (f *Flags) StringVar(p *string, name, twin, def, usage string) {
	f.declare(name, twin, def)
	f.fs.StringVar(p, name, def, usage)
}

// BoolVar binds a boolean flag with an environment twin to p.
func (f *Flags) BoolVar(p *bool, name, twin, usage string) {
	f.declare(name, twin, "false")
	f.bools[name] = true
	f.fs.BoolVar(p, name, false, usage)
}

// flagText is a flag whose value is kept as given and checked when the
// command reads it, so that a bad value is reported by the command, in
// words naming the flag and its twin: a number, a duration, a threshold.
type flagText struct {
	text, name, twin string
}

func (f *Flags) textVar(p *flagText, name, twin, def, usage string) {
	p.name, p.twin = name, twin
	f.declare(name, twin, def)
	f.fs.StringVar(&p.text, name, def, usage)
}

// given reports whether the flag has a value (an optional one may not).
func (v *flagText) given() bool { return v.text != "" }

// flag names the flag and its twin for messages: "--name (TWIN)".
func (v *flagText) flag() string { return "--" + v.name + " (" + v.twin + ")" }

// intFlag is a whole-number flag of at least min.
type intFlag struct {
	flagText
	min int
}

// IntVar binds a whole-number flag of at least min to p; def "" makes it
// optional (see given).
func (f *Flags) IntVar(p *intFlag, name, twin, def string, min int, usage string) {
	p.min = min
	f.textVar(&p.flagText, name, twin, def, usage)
}

// get is the flag's value, checked.
func (v *intFlag) get() (int, error) {
	n, err := strconv.Atoi(v.text)
	if err != nil || n < v.min {
		return 0, fmt.Errorf("--%s (%s) must be a whole number of at least %d, got %q", v.name, v.twin, v.min, v.text)
	}
	return n, nil
}

// durationFlag is a positive duration flag, such as 30s or 5m.
type durationFlag struct{ flagText }

// DurationVar binds a duration flag to p; def "" makes it optional.
func (f *Flags) DurationVar(p *durationFlag, name, twin, def, usage string) {
	f.textVar(&p.flagText, name, twin, def, usage)
}

// get is the flag's value, checked.
func (v *durationFlag) get() (time.Duration, error) {
	d, err := time.ParseDuration(v.text)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--%s (%s) must be a positive duration such as 30s or 5m, got %q", v.name, v.twin, v.text)
	}
	return d, nil
}

// thresholdFlag is a match-threshold flag: a number from 0 to 1.
type thresholdFlag struct{ flagText }

// ThresholdVar binds a threshold flag to p.
func (f *Flags) ThresholdVar(p *thresholdFlag, name, twin string, def float64, usage string) {
	f.textVar(&p.flagText, name, twin, strconv.FormatFloat(def, 'f', -1, 64), usage)
}

// get is the flag's value, checked.
func (v *thresholdFlag) get() (float64, error) {
	n, err := strconv.ParseFloat(v.text, 64)
	if err != nil || n < 0 || n > 1 {
		return 0, fmt.Errorf("--%s (%s) must be a number from 0 to 1, got %q", v.name, v.twin, v.text)
	}
	return n, nil
}

// list is a comma-separated flag's items, blanks dropped.
func list(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Args are the arguments other than the flags.
func (f *Flags) Args() []string { return f.args }

func (f *Flags) usage(w io.Writer, c command) {
	fmt.Fprintf(w, "Usage: 3gs %s %s\n\n%s.\n", c.name, strings.TrimSpace("[flags] "+c.args), capitalize(c.summary))
	first := true
	f.fs.VisitAll(func(fl *pflag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		def := f.defs[fl.Name]
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  --%s (env %s; default %s)\n        %s\n", fl.Name, f.twins[fl.Name], def, fl.Usage)
	})
}
