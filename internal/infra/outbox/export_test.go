package outbox

import "context"

// DrainBatch is drainBatch, for the external tests.
const DrainBatch = drainBatch

// Drain is one poller pass over the rows with an id up to upTo.
func (r *Relay) Drain(ctx context.Context, upTo int64) (int, error) { return r.drain(ctx, upTo) }
