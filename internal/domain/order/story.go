package order

import (
	"context"
	"fmt"

	"orderflow/internal/domain/trail"
	"orderflow/model"

	"go.uber.org/zap"
)

// Story is an order as the operator console tells it: the admin view (its
// payments among it), and the task generations that name the task holding
// it now.
type Story struct {
	*AdminView
	Kind     model.ProductKind
	CloseGen int
}

// Story returns an order's story; its card codes are masked (the Cards
// field holds how many there are as empty strings): RevealCards shows them.
func (s *Service) Story(ctx context.Context, orderNo string) (*Story, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return nil, err
	}
	av, err := s.adminView(ctx, o)
	if err != nil {
		return nil, err
	}
	av.Cards = make([]string, len(av.Cards))
	return &Story{AdminView: av, Kind: o.Kind, CloseGen: o.CloseGen}, nil
}

// RevealCards returns the codes sold to an order for an operator who asked
// to see them, after writing that look to the order's history: no code is
// shown without a trace. An order with no sold codes writes nothing.
func (s *Service) RevealCards(ctx context.Context, orderNo, who string) ([]string, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return nil, err
	}
	codes, err := s.store.SoldCodes(ctx, o.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s cards: %w", orderNo, err)
	}
	if len(codes) == 0 {
		return nil, nil
	}
	// The look is a note in the order's history and, when an operator
	// asked, an entry in the audit trail: a sensitive read is signed like
	// an action.
	note, now := fmt.Sprintf("card codes revealed to %s", who), s.clock.Now()
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		if err := tx.InsertNote(ctx, "order", o.OrderNo, o.Status.String(), note, now); err != nil {
			return err
		}
		return trail.Record(ctx, tx, now, trail.CardsReveal, o.OrderNo, trail.Detail{"codes": len(codes)})
	})
	if err != nil {
		return nil, fmt.Errorf("order %s reveal note: %w", orderNo, err)
	}
	s.log.Info("card codes revealed", zap.String("order_no", orderNo), zap.String("to", who), zap.Int("codes", len(codes)))
	return codes, nil
}
