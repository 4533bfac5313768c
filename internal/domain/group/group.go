// Package group runs group-buys: create, join, settle at the deadline (OPEN →
// CLOSED → charge everyone in one transaction → SETTLED), resume a half-done
// settlement at the charge step, and tell the owner and admin when it fails.
package group

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// ExhaustedKey is the seed's pending set: groups whose retry budget ran out
// while the database was unreachable, written to the ledger when it returns.
const ExhaustedKey = "orderflow:groups:exhausted"

// Service runs the group use cases.
type Service struct {
	store *model.Store
	rdb   redis.UniversalClient
	clock clock.Clock
	log   *zap.Logger
}

// Deps are what the service needs.
type Deps struct {
	Store *model.Store
	Redis redis.UniversalClient
	Clock clock.Clock
	Log   *zap.Logger
}

// New returns the group service.
func New(d Deps) *Service {
	return &Service{store: d.Store, rdb: d.Redis, clock: d.Clock, log: d.Log}
}

// Errors.
var (
	ErrNotFound      = apperr.New(apperr.NotFound, "group_not_found", "no such group")
	ErrClosed        = apperr.New(apperr.Conflict, "group_closed", "the group is past its deadline or no longer open")
	ErrAlreadyJoined = apperr.New(apperr.Conflict, "already_joined", "this user already joined the group")
	ErrNotFailed     = apperr.New(apperr.Conflict, "invalid_status", "only a FAILED group can be retried")
	errBadTitle      = apperr.New(apperr.Invalid, "invalid_title", "title must be 1..255 characters")
	errBadDeadline   = apperr.New(apperr.Invalid, "invalid_deadline", "deadline must be an RFC 3339 time in the future, at most 365 days ahead")
)

func newGroupNo(now time.Time) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return "G" + now.Format("060102") + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// settleRow queues a settlement at the deadline (rounded up to asynq's whole
// second by the row builder: never settle while joining is still allowed).
func settleRow(groupNo string, gen int, manual bool, at, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeGroupSettle, groupNo, gen), tasks.TypeGroupSettle,
		tasks.Encode(tasks.GroupPayload{GroupNo: groupNo, Gen: gen, Manual: manual}), at, now)
}

// Create opens a group owned by the caller and schedules its settlement.
func (s *Service) Create(ctx context.Context, ownerID int64, title string, price int64, deadline time.Time) (*model.Group, error) {
	now := s.clock.Now()
	title = strings.TrimSpace(title)
	switch {
	case title == "" || len(title) > 255:
		return nil, errBadTitle
	case !deadline.After(now) || deadline.After(now.Add(bounds.MaxGroupLife)):
		return nil, errBadDeadline
	}
	if err := bounds.CheckGroupPrice(price); err != nil {
		return nil, err
	}
	g := &model.Group{GroupNo: newGroupNo(now), OwnerUserID: ownerID, Title: title, PriceCents: price,
		Deadline: deadline.UTC().Truncate(time.Millisecond), Status: model.GroupOpen, CreatedAt: now, UpdatedAt: now}
	row := settleRow(g.GroupNo, 1, false, g.Deadline, now)
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		if err := tx.InsertGroup(ctx, g); err != nil {
			return err
		}
		if err := tx.InsertEventLater(ctx, model.Event{ObjectType: "group", ObjectNo: g.GroupNo, FromStatus: "-", ToStatus: g.Status.String(), Reason: "created", CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertOutboxLater(ctx, row)
	})
	if err != nil {
		return nil, fmt.Errorf("create group: %w", err)
	}
	s.log.Info("group created", zap.String("group_no", g.GroupNo), zap.Time("deadline", g.Deadline))
	return g, nil
}

// Join adds a user, decided inside the joining transaction: the group row is
// written only while OPEN and before the deadline, so a join cannot race the
// close.
func (s *Service) Join(ctx context.Context, groupNo string, userID int64) error {
	g, err := s.load(ctx, groupNo)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		open, err := tx.LockOpenGroup(ctx, g.ID, now)
		if err != nil {
			return err
		}
		if !open {
			return ErrClosed
		}
		fresh, err := tx.InsertParticipant(ctx, g.ID, userID, now)
		if err == nil && !fresh {
			return ErrAlreadyJoined
		}
		return err
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return err
		}
		return fmt.Errorf("join group %s: %w", groupNo, err)
	}
	s.log.Info("user joined group", zap.String("group_no", groupNo), zap.Int64("user_id", userID))
	return nil
}

// View is a group as the API shows it.
type View struct {
	GroupNo      string            `json:"group_no"`
	OwnerUserID  int64             `json:"owner_user_id"`
	Title        string            `json:"title"`
	Status       string            `json:"status"`
	PriceCents   int64             `json:"price_cents"`
	Deadline     time.Time         `json:"deadline"`
	Participants []ParticipantView `json:"participants"`
	Failure      string            `json:"failure_reason,omitempty"`
}

// ParticipantView is one member.
type ParticipantView struct {
	UserID  int64 `json:"user_id"`
	Charged bool  `json:"charged"`
}

// Get returns a group with its participants.
func (s *Service) Get(ctx context.Context, groupNo string) (*View, error) {
	g, err := s.load(ctx, groupNo)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, g)
}

// view is g with its participants.
func (s *Service) view(ctx context.Context, g *model.Group) (*View, error) {
	ps, err := s.store.Participants(ctx, g.ID)
	if err != nil {
		return nil, fmt.Errorf("group %s participants: %w", g.GroupNo, err)
	}
	v := &View{GroupNo: g.GroupNo, OwnerUserID: g.OwnerUserID, Title: g.Title, Status: strings.ToLower(g.Status.String()),
		PriceCents: g.PriceCents, Deadline: g.Deadline, Participants: make([]ParticipantView, 0, len(ps)), Failure: g.FailureReason}
	for _, p := range ps {
		v.Participants = append(v.Participants, ParticipantView{UserID: p.UserID, Charged: p.ChargedAt != nil})
	}
	return v, nil
}

func (s *Service) load(ctx context.Context, groupNo string) (*model.Group, error) {
	g, err := s.store.GroupByNo(ctx, groupNo)
	return model.Found(g, err, ErrNotFound, "load group %s", groupNo)
}
