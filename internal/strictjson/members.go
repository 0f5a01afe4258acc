package strictjson

import (
	"runtime"
	"sync"
)

// parallelMembersFrom is the number of members from which Map reads an
// object's members on every core. A registry's categories are the one
// map that gets there: at 100,000 of them, reading them one after the
// other was the longest single-core stretch of loading one.
const parallelMembersFrom = 2048

// Map reads the members of the object Object has just entered into a map,
// as the generated decoders' loop did: a key seen before is reported as a
// duplicate and its value skipped, and member reads every other value
// (checking its key too), into *v, with d positioned at it.
//
// For a large object, on a machine with more than one core, the members
// are read on every core, each a run of them, and the problems of the runs
// are joined in member order, so the report is the one a single pass makes.
// member must then only use the Decoder it is given and touch nothing
// shared but what it reads.
func Map[T any](d *Decoder, p *Path, member func(d *Decoder, key string, kp *Path, v *T)) map[string]T {
	workers := runtime.GOMAXPROCS(0)
	if workers > 1 {
		if m, ok := parallelMap(d, p, workers, member); ok {
			return m
		}
	}
	m := map[string]T{}
	for {
		key, more := d.NextKey()
		if !more {
			break
		}
		if _, dup := m[key]; dup {
			d.DuplicateKey(p, key)
			continue
		}
		kp := p.Key(key)
		var v T
		member(d, key, &kp, &v)
		m[key] = v
	}
	return m
}

// member is one member of an object read by parallelMap: its key and the
// position of its value, or dup for a repeated key, which is only reported.
type member struct {
	key string
	at  int
	dup bool
}

// parallelMap is Map on several cores; false (having read nothing) when the
// object has too few members to gain from it.
func parallelMap[T any](d *Decoder, p *Path, workers int, read func(d *Decoder, key string, kp *Path, v *T)) (map[string]T, bool) {
	// The members are listed first, one token per key and one step per
	// value (a value the tokenizer left lazy is a single token).
	pos := d.pos
	if !d.manyMembers(pos) {
		return nil, false
	}
	var members []member
	for d.toks[pos].kind != kindEnd {
		at := pos + 1
		members = append(members, member{key: d.tz.str(&d.toks[pos]), at: at})
		pos = d.after(at)
	}
	end := pos
	// Repeated keys are found once all are listed, in a set made at its
	// final size: grown one key at a time it was rehashed over and over,
	// most of this single-core stretch at 100,000 categories.
	seen := make(map[string]struct{}, len(members))
	for i := range members {
		m := &members[i]
		if _, dup := seen[m.key]; dup {
			m.dup = true
			continue
		}
		seen[m.key] = struct{}{}
	}
	seen = nil
	values := make([]T, len(members))
	runs := make([]Errors, workers)
	var wg sync.WaitGroup
	for w := range workers {
		from, to := w*len(members)/workers, (w+1)*len(members)/workers
		wg.Go(func() {
			r := &Decoder{toks: d.toks, nums: d.nums, tz: d.tz}
			for i := from; i < to; i++ {
				m := &members[i]
				if m.dup {
					kp := p.Key(m.key)
					r.Fail(&kp, "duplicate key")
					continue
				}
				r.pos = m.at
				kp := p.Key(m.key)
				read(r, m.key, &kp, &values[i])
				r.leave()
			}
			runs[w] = r.errs
		})
	}
	wg.Wait()
	for _, errs := range runs {
		for _, e := range errs[:min(len(errs), MaxErrors)] {
			d.record(e)
		}
	}
	out := make(map[string]T, len(members))
	for i, m := range members {
		if !m.dup {
			out[m.key] = values[i]
		}
	}
	d.pos = end + 1 // past the object's end, as NextKey leaves it
	return out, true
}

// manyMembers reports whether the object whose first key is at pos has at
// least parallelMembersFrom members.
func (d *Decoder) manyMembers(pos int) bool {
	n := 0
	for ; d.toks[pos].kind != kindEnd; pos = d.after(pos + 1) {
		if n++; n >= parallelMembersFrom {
			return true
		}
	}
	return false
}

// after is the position after the value at pos, in the current tokens.
func (d *Decoder) after(pos int) int {
	if t := &d.toks[pos]; t.kind == kindObject || t.kind == kindArray {
		return int(t.aux) + 1
	}
	return pos + 1
}

// leave returns from every lazy value entered and read, as cur does when
// reading goes on past one.
func (d *Decoder) leave() {
	for len(d.outer) > 0 {
		d.tz.release()
		f := d.outer[len(d.outer)-1]
		d.outer = d.outer[:len(d.outer)-1]
		d.toks, d.nums, d.pos, d.tz = f.toks, f.nums, f.pos, f.tz
	}
}
