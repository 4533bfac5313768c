package backlog

import "orderflow/model"

// Activation is one delivered order's timing, as Activations returns it.
type Activation = model.Activation
