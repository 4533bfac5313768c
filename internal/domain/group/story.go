package group

import (
	"context"
	"fmt"

	"orderflow/model"
)

// Story is a group as an operator reads it: the view, its moves oldest
// first, and the settle generation whose task holds it while it is not
// settled.
type Story struct {
	*View
	Events    []model.Event
	Settled   bool
	SettleGen int
}

// Story returns a group with its history.
func (s *Service) Story(ctx context.Context, groupNo string) (*Story, error) {
	g, err := s.load(ctx, groupNo)
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx, g)
	if err != nil {
		return nil, err
	}
	evs, err := s.store.EventsFor(ctx, "group", groupNo)
	if err != nil {
		return nil, fmt.Errorf("group %s history: %w", groupNo, err)
	}
	return &Story{View: v, Events: evs, Settled: g.Status == model.GroupSettled, SettleGen: g.SettleGen}, nil
}
