package tools

// get_sources answers nearly every call, so its output is encoded by the
// code below rather than by sonic, whose JIT would otherwise compile an
// encoder at the first answer (mapping code, keeping programs on the heap
// and running an assembler a server need not touch). It writes exactly
// what sonic writes for the generated struct: members in field order,
// each one tagged omitempty left out when empty, floats and strings as
// sonic formats them. TestGetSourcesOutputJSON holds it to sonic, so a
// field added to the schema and not here fails there.

import (
	"time"

	"errors"
	"math"
	"strconv"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/toolcall"
)

func init() {
	toolcall.RegisterOutputEncoder(appendGetSourcesOutput)
	toolcall.RegisterTextAppender(appendGetSourcesText)
}

var errNotFinite = errors.New("json: unsupported value: a score is NaN or infinite")

func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, errNotFinite
	}
	return jsonrpc.AppendFloat(dst, f), nil
}

// appendGetSourcesOutput appends v as JSON.
func appendGetSourcesOutput(dst []byte, v *gen.GetSourcesOutput) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	// Every member but query and sources may be left out, so a comma goes
	// before each member after the first written.
	first := true
	key := func(k string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, k...)
	}
	if len(v.Alternatives) > 0 {
		key(`"alternatives":[`)
		if dst, err = appendAlternatives(dst, v.Alternatives); err != nil {
			return dst, err
		}
	}
	if len(v.AvailableCategories) > 0 {
		key(`"available_categories":[`)
		for i, s := range v.AvailableCategories {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendString(dst, s)
		}
		dst = append(dst, ']')
	}
	if len(v.Candidates) > 0 {
		key(`"candidates":[`)
		if dst, err = appendCandidates(dst, v.Candidates); err != nil {
			return dst, err
		}
	}
	if v.CategoryCount != nil {
		key(`"category_count":`)
		dst = strconv.AppendInt(dst, int64(*v.CategoryCount), 10)
	}
	if v.Closest != nil {
		key(`"closest":{"score":`)
		if dst, err = appendFloat(dst, v.Closest.Score); err != nil {
			return dst, err
		}
		dst = append(dst, `,"slug":`...)
		dst = jsonrpc.AppendString(dst, v.Closest.Slug)
		dst = append(dst, '}')
	}
	if v.Curator != nil {
		key(`"curator":{"name":`)
		dst = jsonrpc.AppendString(dst, v.Curator.Name)
		dst = append(dst, `,"pubkey":`...)
		dst = jsonrpc.AppendString(dst, v.Curator.Pubkey)
		dst = append(dst, '}')
	}
	if v.Description != nil {
		key(`"description":`)
		dst = jsonrpc.AppendString(dst, *v.Description)
	}
	if len(v.MoreCategories) > 0 {
		key(`"more_categories":[`)
		dst = appendMoreCategories(dst, v.MoreCategories)
	}
	if v.Name != nil {
		key(`"name":`)
		dst = jsonrpc.AppendString(dst, *v.Name)
	}
	key(`"query":`)
	dst = jsonrpc.AppendString(dst, v.Query)
	if v.RegistryVersion != nil {
		key(`"registry_version":`)
		dst = jsonrpc.AppendString(dst, *v.RegistryVersion)
	}
	if v.Score != nil {
		key(`"score":`)
		if dst, err = appendFloat(dst, *v.Score); err != nil {
			return dst, err
		}
	}
	if v.Slug != nil {
		key(`"slug":`)
		dst = jsonrpc.AppendString(dst, *v.Slug)
	}
	key(`"sources":`)
	if v.Sources == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendSources(dst, v.Sources)
	}
	return append(dst, '}'), nil
}

// appendAlternatives appends the members of the alternatives array.
func appendAlternatives(dst []byte, as []gen.AlternativeCategory) ([]byte, error) {
	var err error
	for i := range as {
		if i > 0 {
			dst = append(dst, ',')
		}
		a := &as[i]
		dst = append(dst, `{"name":`...)
		dst = jsonrpc.AppendString(dst, a.Name)
		dst = append(dst, `,"score":`...)
		if dst, err = appendFloat(dst, a.Score); err != nil {
			return dst, err
		}
		dst = append(dst, `,"slug":`...)
		dst = jsonrpc.AppendString(dst, a.Slug)
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendCandidates appends the members of the candidates array.
func appendCandidates(dst []byte, cs []gen.CandidateCategory) ([]byte, error) {
	var err error
	for i := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		c := &cs[i]
		dst = append(dst, `{"description":`...)
		dst = jsonrpc.AppendString(dst, c.Description)
		dst = append(dst, `,"name":`...)
		dst = jsonrpc.AppendString(dst, c.Name)
		dst = append(dst, `,"score":`...)
		if dst, err = appendFloat(dst, c.Score); err != nil {
			return dst, err
		}
		dst = append(dst, `,"slug":`...)
		dst = jsonrpc.AppendString(dst, c.Slug)
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendSources appends the sources array.
func appendSources(dst []byte, ss []gen.RankedSource) []byte {
	dst = append(dst, '[')
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		s := &ss[i]
		if s.Health != nil {
			dst = append(dst, `{"health":{"checked_at":`...)
			dst = jsonrpc.AppendString(dst, s.Health.CheckedAt.Format(time.RFC3339Nano)) // as encoding/json writes a time.Time
			dst = append(dst, `,"status":`...)
			dst = jsonrpc.AppendString(dst, string(s.Health.Status))
			dst = append(dst, `},"name":`...)
		} else {
			dst = append(dst, `{"name":`...)
		}
		dst = jsonrpc.AppendString(dst, s.Name)
		dst = append(dst, `,"rank":`...)
		dst = strconv.AppendInt(dst, int64(s.Rank), 10)
		dst = append(dst, `,"type":`...)
		dst = jsonrpc.AppendString(dst, s.Type)
		dst = append(dst, `,"url":`...)
		dst = jsonrpc.AppendString(dst, s.URL)
		dst = append(dst, `,"why":`...)
		dst = jsonrpc.AppendString(dst, s.Why)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	return dst
}

// appendMoreCategories appends the members of the more_categories array and its end.
func appendMoreCategories(dst []byte, ms []gen.ListedCategory) []byte {
	for i := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = jsonrpc.AppendString(dst, ms[i].Name)
		dst = append(dst, `,"slug":`...)
		dst = jsonrpc.AppendString(dst, ms[i].Slug)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	return dst
}
