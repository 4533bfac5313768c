package svc

import (
	"fmt"
	"strings"

	"orderflow/internal/infra/pay"
	paysimpay "orderflow/internal/infra/pay/paysim"
)

// NewPayRegistry builds the enabled providers (Validate has checked their
// settings). A provider that still cannot be built stops start-up with one
// line naming it.
func NewPayRegistry(c Config) (*pay.Registry, error) {
	var ps []pay.Provider
	for _, n := range c.Providers() {
		p, err := newProvider(c, n)
		if err != nil {
			return nil, fmt.Errorf("setting %sPAY_PROVIDERS: provider %s: %w", EnvPrefix, n, err)
		}
		ps = append(ps, p)
	}
	return pay.NewRegistry(ps...)
}

func newProvider(c Config, name string) (pay.Provider, error) {
	switch name {
	case pay.NamePaysim:
		return paysimpay.New(c.PayURL, c.PaySecret, c.PayTimeout.D()), nil
	}
	return nil, fmt.Errorf("not available in this build (have %s)", strings.Join([]string{pay.NamePaysim}, ", "))
}
