package statement

import "orderflow/model"

// The statement vocabulary the API and the console read: a run, a break
// (a line the ledger and the provider disagree on) and their statuses.
type (
	// Run is one statement run.
	Run = model.StatementRun
	// RunStatus is a run's status.
	RunStatus = model.StatementRunStatus
	// Break is one statement break.
	Break = model.StatementBreak
	// BreakStatus is a break's status.
	BreakStatus = model.BreakStatus
)

// BreakOpen is a break nobody has resolved yet.
const BreakOpen = model.BreakOpen
