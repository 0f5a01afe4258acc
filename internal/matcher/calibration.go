package matcher

// The confidence model's weights (see calibrate.go), fitted by
// TestCalibration; rewrite with
//
//	go test ./internal/matcher -run TestCalibration -calibrate
var calibration = calibrationModel{
	// BEGIN FITTED
	bias: -3.1732,
	weights: [numFactors]float64{
		0.9226,  // lexical score
		0.3227,  // coverage
		-0.3427, // phrase
		-0.2370, // word vectors
		3.8637,  // word-vector lead
		4.3908,  // lead over the runner-up
		-1.4306, // unexplained words
		0.4685,  // a rare unexplained word
		-0.7115, // words met in its name or patterns
		2.2339,  // query length
		-0.0392, // word vectors on
		-1.0094, // doubt: only generic words
		0.0000,  // doubt: only its sources
		-1.7612, // doubt: only related words
		-0.6020, // doubt: not in its name or patterns
		-0.4163, // doubt: one word among unexplained ones
		-1.6034, // doubt: only word vectors
	},
	// END FITTED
}
