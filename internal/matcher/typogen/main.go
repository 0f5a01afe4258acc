// Command typogen writes the typo index (typo.Index, in its binary form)
// over the ordinary English word list, words.ByFrequency, for the matcher
// to embed: built here once, at go generate time, rather than in every
// server at its first misspelt question. The matcher's tests check that
// the file is the index its own rule builds (TestEnglishTyposEmbedded).
//
//	go run ./typogen -min 4 -out data/englishtypos.bin
package main

import (
	"flag"
	"log"
	"os"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
)

func main() {
	minLen := flag.Int("min", 4, "shortest word indexed")
	out := flag.String("out", "", "file to write")
	flag.Parse()
	if *out == "" {
		log.Fatal("typogen: -out is required")
	}
	list := words.ByFrequency()
	long := make([]bool, len(list))
	for i, w := range list {
		long[i] = len(w) >= *minLen
	}
	ix := typo.Build(list, long)
	if err := os.WriteFile(*out, ix.AppendBinary(nil), 0o644); err != nil {
		log.Fatal(err)
	}
}
