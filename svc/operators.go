package svc

import "orderflow/internal/infra/operators"

// Operators is who may use the admin surfaces: ORDERFLOW_ADMIN_TOKENS'
// named operators and ORDERFLOW_ADMIN_TOKEN's admin. Validate has checked
// both, so it only fails on a configuration that was never validated, and
// then it admits nobody rather than start half-guarded.
func (c Config) Operators() *operators.Set {
	s, err := c.operatorSet()
	if err != nil {
		return &operators.Set{}
	}
	return s
}

func (c Config) operatorSet() (*operators.Set, error) {
	return operators.New(c.AdminToken, c.AdminTokens)
}
