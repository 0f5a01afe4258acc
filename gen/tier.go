package gen

// Written by hand: reading and printing tiers does not depend on the
// schemas. The tiers themselves (Tier, TierPublic..., tierNames) are
// generated in tools_tiers_gen.go from the generator's one list of them.

// String is the tier's name as schemas and tokens files spell it.
func (t Tier) String() string {
	if t < 0 || t >= NumTiers {
		return "unknown"
	}
	return tierNames[t]
}

// ParseTier reads a tier name, exactly as spelled (names are lower case).
func ParseTier(s string) (Tier, bool) {
	for i, name := range tierNames {
		if name == s {
			return Tier(i), true
		}
	}
	return 0, false
}
