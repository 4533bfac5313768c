package pay

import (
	"fmt"
	"sort"
)

// Registry is the set of enabled providers (ORDERFLOW_PAY_PROVIDERS), by name.
type Registry struct {
	byName map[string]Provider
}

// NewRegistry holds the given providers; two with one name is a mistake.
func NewRegistry(ps ...Provider) (*Registry, error) {
	r := &Registry{byName: map[string]Provider{}}
	for _, p := range ps {
		if _, dup := r.byName[p.Name()]; dup {
			return nil, fmt.Errorf("pay: provider %q enabled twice", p.Name())
		}
		r.byName[p.Name()] = p
	}
	return r, nil
}

// Get returns an enabled provider.
func (r *Registry) Get(name string) (Provider, bool) {
	if r == nil {
		return nil, false
	}
	p, ok := r.byName[name]
	return p, ok
}

// Names lists the enabled providers, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
