package registry

import "testing"

// A peer's curator name that reads as ours is caught however it is
// disguised; a name that only shares words with ours is not.
func TestConfusable(t *testing.T) {
	const ours = "Ada's picks"
	for _, theirs := range []string{
		"Ada's picks",
		"ada's PICKS",
		"Adas picks",
		"Ada’s  picks.",
		"A.d.a.s-p.i.c.k.s",
		"Аda's picks",       // Cyrillic А
		"Ada's piсks",       // Cyrillic с
		"Ada's p1cks",       // digit one
		"Ada's pícks",       // accent
		"Ada's pi\u0301cks", // combining accent
		"Ａｄａ's ｐｉｃｋｓ",       // full width
		"𝐀𝐝𝐚'𝐬 𝐩𝐢𝐜𝐤𝐬",       // mathematical bold
		"Ada's picks\u200b", // zero-width space
		"ΑDA'S PICKS",       // Greek Alpha
	} {
		if !Confusable(ours, theirs) {
			t.Errorf("%q is not confusable with %q (skeletons %q, %q)", theirs, ours, Skeleton(theirs), Skeleton(ours))
		}
	}
	for _, theirs := range []string{"Ada's other picks", "Bob's picks", "Ada", "picks", "Adam's picks", ""} {
		if Confusable(ours, theirs) {
			t.Errorf("%q is confusable with %q (skeleton %q)", theirs, ours, Skeleton(theirs))
		}
	}
	if !Confusable("modern", "rnodern") || !Confusable("www", "vvww") || !Confusable("Oslo", "0sl0") {
		t.Error("rn, vv or 0 are not read as m, w, o")
	}
	if Confusable("...", "!!!") {
		t.Error("names with nothing to read are confusable")
	}
}
