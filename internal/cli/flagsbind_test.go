package cli

import (
	"strings"
	"testing"
)

// testOptions and otherOptions are two options structs of one command.
type testOptions struct {
	name  string
	on    bool
	count intFlag
}

type otherOptions struct{ wait durationFlag }

func testFlags(f *Flags) {
	o := options[testOptions](f)
	f.StringVar(&o.name, "name", "T_NAME", "none", "a name")
	f.BoolVar(&o.on, "on", "T_ON", "a switch")
	f.IntVar(&o.count, "count", "T_COUNT", "3", 1, "a count")
	f.DurationVar(&options[otherOptions](f).wait, "wait", "T_WAIT", "1s", "a wait")
}

// parsed is the options of testFlags after parsing args with env.
func parsed(t *testing.T, env map[string]string, args ...string) (*testOptions, *otherOptions) {
	t.Helper()
	f := newFlags(command{name: "test", flags: testFlags}, &Env{Getenv: func(k string) string { return env[k] }})
	if err := f.fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return options[testOptions](f), options[otherOptions](f)
}

// A flag's field holds its default, else its environment twin, else the
// flag given; a boolean twin counts only as strconv.ParseBool reads it.
func TestFlagsBindAndTwins(t *testing.T) {
	o, w := parsed(t, nil)
	if n, err := o.count.get(); o.name != "none" || o.on || err != nil || n != 3 || w.wait.text != "1s" {
		t.Errorf("defaults: %+v %v %+v", o, err, w)
	}
	o, w = parsed(t, map[string]string{"T_NAME": "env", "T_ON": "1", "T_COUNT": "7", "T_WAIT": "2m"})
	if n, _ := o.count.get(); o.name != "env" || !o.on || n != 7 || w.wait.text != "2m" {
		t.Errorf("twins: %+v %+v", o, w)
	}
	o, _ = parsed(t, map[string]string{"T_NAME": "env", "T_ON": "1"}, "--name", "flag", "--on=false")
	if o.name != "flag" || o.on {
		t.Errorf("flags over twins: %+v", o)
	}
	if o, _ = parsed(t, map[string]string{"T_ON": "yes"}); o.on {
		t.Error(`T_ON=yes turned --on on; strconv.ParseBool does not read "yes"`)
	}
	o, w = parsed(t, map[string]string{"T_COUNT": "0"}, "--wait", "soon")
	if _, err := o.count.get(); err == nil || !strings.Contains(err.Error(), "--count (T_COUNT) must be a whole number of at least 1, got \"0\"") {
		t.Errorf("a count below its minimum: %v", err)
	}
	if _, err := w.wait.get(); err == nil || !strings.Contains(err.Error(), "--wait (T_WAIT) must be a positive duration") {
		t.Errorf("a wait that is no duration: %v", err)
	}
}
