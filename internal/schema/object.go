package schema

import (
	"fmt"
	"maps"
	"slices"
)

// object fills the object keywords. Every object must say what it does with
// unlisted Keys: "additionalProperties": false for records, or a schema for
// maps keyed by name.
func (p *schemaParser) object(n *Node, o *Object) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", n.Where(), fmt.Sprintf(format, args...))
	}
	if pv, ok := o.get("properties"); ok {
		props, ok := pv.(*Object)
		if !ok {
			return fail("\"properties\" must be an object")
		}
		for _, name := range props.Keys {
			child, err := p.node(n.Ptr+"/properties/"+name, props.Vals[name], false)
			if err != nil {
				return err
			}
			n.Properties = append(n.Properties, &Property{Name: name, Schema: child})
		}
	}
	if len(n.Properties) > 64 {
		return fail("more than 64 properties; decoders track fields in a 64-bit set")
	}
	if rv, ok := o.get("required"); ok {
		list, _ := rv.([]any)
		for _, r := range list {
			s, ok := r.(string)
			if !ok || slices.Contains(n.Required, s) {
				return fail("\"required\" must be a list of distinct strings")
			}
			if !slices.ContainsFunc(n.Properties, func(p *Property) bool { return p.Name == s }) {
				return fail("required property %q is not declared in \"properties\"", s)
			}
			n.Required = append(n.Required, s)
		}
	}
	switch av := o.Vals["additionalProperties"].(type) {
	case bool:
		if av {
			return fail("\"additionalProperties\": true is not allowed; list the properties or give a schema for map values")
		}
		n.AdditionalFalse = true
	case *Object:
		if len(n.Properties) > 0 {
			return fail("an object with both \"properties\" and an \"additionalProperties\" schema is not supported")
		}
		child, err := p.node(n.Ptr+"/additionalProperties", av, false)
		if err != nil {
			return err
		}
		if child.Type == "object" {
			return fail("map values that are objects must be a $ref to #/$defs/NAME: go-jsonschema gives inline map values no Go type name")
		}
		n.AdditionalSchema = child
	default:
		return fail("objects must set \"additionalProperties\" to false (or to a schema, for maps)")
	}
	if pn, ok := o.get("propertyNames"); ok {
		if n.AdditionalSchema == nil {
			return fail("\"propertyNames\" is only supported on maps (objects with an \"additionalProperties\" schema)")
		}
		pno, ok := pn.(*Object)
		if !ok {
			return fail("\"propertyNames\" must be an object")
		}
		// Property names are always strings, so "type" may be left out.
		if _, ok := pno.get("type"); !ok {
			pno = &Object{Keys: append([]string{"type"}, pno.Keys...), Vals: withKey(pno.Vals, "type", "string")}
		}
		child, err := p.node(n.Ptr+"/propertyNames", pno, false)
		if err != nil {
			return err
		}
		if child.Type != "string" || child.Format != "" || len(child.Enum) > 0 || child.MinLength != nil {
			return fail("\"propertyNames\" supports only \"pattern\" and \"maxLength\"")
		}
		n.PropertyNames = child
	}
	if n.MinProperties != nil && n.AdditionalSchema == nil {
		return fail("\"minProperties\" is only supported on maps")
	}
	if ov, ok := o.get("oneOf"); ok {
		return p.oneOf(n, ov)
	}
	return nil
}

// oneOfKeys are the keywords a oneOf branch may hold: the set it requires,
// and annotations.
var oneOfKeys = []string{"required", "description", "$comment"}

// oneOf reads an object's "oneOf" of required sets. Any other oneOf (of
// types, of whole schemas) is refused: the decoders enforce this form only.
// A branch must be able to be the only one that holds, so none may require
// a property the object requires anyway, or all of another branch's.
func (p *schemaParser) oneOf(n *Node, v any) error {
	where := n.Where() + "/oneOf"
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if len(n.Properties) == 0 {
		return fail("\"oneOf\" is only supported on objects with listed properties")
	}
	const form = `"oneOf" must list two or more branches of the form {"required": ["NAME", ...], "description": "what it is for"}: exactly one branch's properties must all be present`
	list, ok := v.([]any)
	if !ok || len(list) < 2 {
		return fail("%s", form)
	}
	for i, bv := range list {
		b, ok := bv.(*Object)
		if !ok {
			return fail("%s", form)
		}
		for _, k := range b.Keys {
			if !slices.Contains(oneOfKeys, k) {
				return fail("branch %d: keyword %q is not supported in a oneOf branch; %s", i, k, form)
			}
		}
		var set RequiredSet
		if d, ok := b.Vals["description"]; ok {
			if set.Description, ok = d.(string); !ok {
				return fail("branch %d: \"description\" must be a string", i)
			}
		}
		names, _ := b.Vals["required"].([]any)
		if len(names) == 0 {
			return fail("branch %d: %s", i, form)
		}
		for _, nv := range names {
			name, ok := nv.(string)
			if !ok || slices.Contains(set.Required, name) {
				return fail("branch %d: \"required\" must be a list of distinct strings", i)
			}
			if !slices.ContainsFunc(n.Properties, func(p *Property) bool { return p.Name == name }) {
				return fail("branch %d: required property %q is not declared in \"properties\"", i, name)
			}
			if n.IsRequired(name) {
				return fail("branch %d: %q is required by the object itself, so the branch always holds", i, name)
			}
			set.Required = append(set.Required, name)
		}
		for j, prev := range n.OneOf {
			if subset(prev.Required, set.Required) || subset(set.Required, prev.Required) {
				return fail("branches %d and %d: one requires all the other does, so the other can never be the only one to hold", j, i)
			}
		}
		n.OneOf = append(n.OneOf, set)
	}
	return nil
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// withKey returns a copy of m with key set to v.
func withKey(m map[string]any, key string, v any) map[string]any {
	c := maps.Clone(m)
	c[key] = v
	return c
}
