package refund

// What the rules' tests (package refund_test, which the harness's imports
// keep outside) read of the package's insides.
var NumberGen = numberGen

const (
	ManualMoney = manualMoney
	MaxNote     = maxNote
)
