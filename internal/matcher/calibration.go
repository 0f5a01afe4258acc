package matcher

// The confidence model's weights (see calibrate.go), fitted by
// TestCalibration; rewrite with
//
//	go test ./internal/matcher -run TestCalibration -calibrate
var calibration = calibrationModel{
	// BEGIN FITTED
	bias: -4.3615,
	weights: [numFactors]float64{
		0.0000,  // lexical score
		0.0000,  // coverage
		0.0000,  // phrase
		0.0000,  // word vectors
		1.1497,  // word-vector lead
		5.4454,  // lead over the runner-up
		-0.1499, // unexplained words
		0.0000,  // a rare unexplained word
		0.0000,  // words met in its name or patterns
		2.3515,  // words the curator's own words explain
		0.0000,  // share of the query they carry
		-1.2812, // words far from it in meaning
		0.4268,  // word vectors on
		0.0000,  // doubt: only generic words
		0.0000,  // doubt: only its sources
		0.0000,  // doubt: only related words
		-0.1398, // doubt: not in its name or patterns
		0.0000,  // doubt: one word among unexplained ones
		0.0000,  // doubt: only word vectors
	},
	// END FITTED
}
