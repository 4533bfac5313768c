package trail

import "orderflow/model"

// Entry is one line of the operators' audit trail, as For and ForAll
// return it.
type Entry = model.AuditEntry
