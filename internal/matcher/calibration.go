package matcher

// The confidence model's weights (see calibrate.go), fitted by
// TestCalibration; rewrite with
//
//	go test ./internal/matcher -run TestCalibration -calibrate
var calibration = calibrationModel{
	// BEGIN FITTED
	bias: -3.9410,
	weights: [numFactors]float64{
		0.0000,  // lexical score
		0.0000,  // coverage
		0.0000,  // phrase
		0.0000,  // word vectors
		0.0000,  // word-vector lead
		4.6332,  // lead over the runner-up
		-0.7401, // unexplained words
		0.0000,  // a rare unexplained word
		0.0000,  // words met in its name or patterns
		3.0036,  // words the curator's own words explain
		0.0000,  // share of the query they carry
		-0.7444, // words far from it in meaning
		0.3399,  // word vectors on
		0.0000,  // doubt: only generic words
		0.0000,  // doubt: only its sources
		0.0000,  // doubt: only related words
		-0.0277, // doubt: not in its name or patterns
		-0.1128, // doubt: one word among unexplained ones
		0.0000,  // doubt: only word vectors
	},
	// END FITTED
}
