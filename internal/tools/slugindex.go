package tools

import (
	"hash/maphash"

	"github.com/three-good-sources/3gs/internal/registry"
)

// slugIndex finds a registry's category by slug in a probe or two, for
// the listing of a not-confident answer, which looks up each category it
// shows (some 150 of them in a large registry): registry.Category's
// binary search took a cache miss at most of its 17 steps over 100,000
// slugs, most of the listing's time there (BenchmarkNoMatch). It is an
// open-addressing table of positions in registry.Categories, made once
// per snapshot: 4 bytes a slot, a power of two of them and at least 5/4
// a category, so 5 to 10 bytes a category: 512 KiB at 100,000.
type slugIndex struct {
	seed maphash.Seed
	cats []registry.Category
	// at holds a category's position plus one in the slot its slug's
	// hash names, or the next free one after it; 0 is an empty slot.
	at []int32
}

func newSlugIndex(cats []registry.Category) *slugIndex {
	size := 1
	for size < len(cats)+len(cats)/4+1 {
		size <<= 1
	}
	ix := &slugIndex{seed: maphash.MakeSeed(), cats: cats, at: make([]int32, size)}
	mask := uint64(size - 1)
	for i := range cats {
		h := maphash.String(ix.seed, cats[i].Slug) & mask
		for ix.at[h] != 0 {
			h = (h + 1) & mask
		}
		ix.at[h] = int32(i + 1)
	}
	return ix
}

// category is the category of slug, or nil.
func (ix *slugIndex) category(slug string) *registry.Category {
	mask := uint64(len(ix.at) - 1)
	for h := maphash.String(ix.seed, slug) & mask; ix.at[h] != 0; h = (h + 1) & mask {
		if c := &ix.cats[ix.at[h]-1]; c.Slug == slug {
			return c
		}
	}
	return nil
}
