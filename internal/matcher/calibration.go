package matcher

// The confidence model's weights (see calibrate.go), fitted by
// TestCalibration; rewrite with
//
//	go test ./internal/matcher -run TestCalibration -calibrate
var calibration = calibrationModel{
	// BEGIN FITTED
	bias: -3.5263,
	weights: [numFactors]float64{
		1.1654,  // lexical score
		0.3913,  // coverage
		-0.3088, // phrase
		-0.0813, // word vectors
		3.6482,  // word-vector lead
		4.5789,  // lead over the runner-up
		-1.5241, // unexplained words
		0.4972,  // a rare unexplained word
		-0.7851, // words met in its name or patterns
		2.4511,  // query length
		-0.0669, // word vectors on
		-1.4313, // doubt: only generic words
		0.0000,  // doubt: only its sources
		-1.7460, // doubt: only related words
		-0.6105, // doubt: not in its name or patterns
		-0.4055, // doubt: one word among unexplained ones
		-2.2075, // doubt: only word vectors
	},
	// END FITTED
}
