package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"orderflow/model"
	"orderflow/model/sqlexec"

	"github.com/go-sql-driver/mysql"
)

// Open connects to a ledger for auditing: UTC, parsed times, read-only use.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := sqlexec.UTCConfig(dsn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(2)
	return db, nil
}

type order struct {
	ID            int64
	OrderNo       string
	UserID        int64
	ProductID     int64
	Kind          string
	Quantity      int
	AmountCents   int64
	RefundedCents int64
	Status        model.OrderStatus
	TradeNo       sql.NullString
	ExpireAt      time.Time
	UpdatedAt     time.Time
	ClosedAt      sql.NullTime
}

type product struct {
	ID          int64
	Kind        string
	CreditCents int64
	Stock       sql.NullInt64
}

type cardKey struct {
	ID        int64
	ProductID int64
	Status    model.CardStatus
	OrderID   sql.NullInt64
}

type payment struct {
	TradeNo     string
	OrderID     int64
	AmountCents int64
	Disposition model.Disposition
}

type refund struct {
	RefundNo    string
	BaseNo      string
	OrderID     int64
	OrderNo     string
	TradeNo     string
	AmountCents int64
	Reason      string
	Status      model.RefundStatus
	UpdatedAt   time.Time
}

type user struct {
	ID            int64
	BalanceCents  int64
	PendingOrders int
}

type walletEntry struct {
	UserID      int64
	Kind        string
	Ref         string
	AmountCents int64
}

type flow struct {
	OrderID  int64
	FlowType model.FlowKind
	Quantity int
}

type event struct {
	ID         int64
	ObjectType string
	ObjectNo   string
	From, To   string
	Reason     string
}

type notification struct {
	NotifyID, Kind, Subject, Message string
}

type group struct {
	ID         int64
	GroupNo    string
	PriceCents int64
	Deadline   time.Time
	Status     model.GroupStatus
	UpdatedAt  time.Time
}

type participant struct {
	GroupID, UserID int64
	Charged         bool
}

type outboxRow struct {
	TaskID    string
	CreatedAt time.Time
}

// ledger is the whole database, read in one pass.
type ledger struct {
	now           time.Time
	orders        map[int64]*order
	orderByNo     map[string]*order
	products      map[int64]*product
	keys          []cardKey
	payments      []payment
	refunds       []refund
	users         map[int64]*user
	entries       []walletEntry
	effects       map[int64][]string // order ID → effects
	flows         map[int64][]flow   // order ID → flows
	events        []event            // by ID
	notifications []notification
	groups        []*group
	participants  map[int64][]participant // group ID → members
	outbox        []outboxRow
	disputes      []dispute
	breaks        []statementBreak
}

// load reads every table the rules need. It runs in one REPEATABLE READ
// read-only transaction so the rules see one consistent snapshot even if
// something still writes.
func load(ctx context.Context, db *sql.DB) (*ledger, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	l := &ledger{
		orders: map[int64]*order{}, orderByNo: map[string]*order{}, products: map[int64]*product{},
		users: map[int64]*user{}, effects: map[int64][]string{}, flows: map[int64][]flow{},
		participants: map[int64][]participant{},
	}
	if err := tx.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(3)`).Scan(&l.now); err != nil {
		return nil, fmt.Errorf("clock: %w", err)
	}
	type query struct {
		sql  string
		scan func(*sql.Rows) error
	}
	queries := []query{
		{`SELECT id, order_no, user_id, product_id, kind, quantity, amount_cents, refunded_cents, status, trade_no, expire_at, updated_at, closed_at FROM orders`,
			func(r *sql.Rows) error {
				o := &order{}
				err := r.Scan(&o.ID, &o.OrderNo, &o.UserID, &o.ProductID, &o.Kind, &o.Quantity, &o.AmountCents, &o.RefundedCents, &o.Status,
					&o.TradeNo, &o.ExpireAt, &o.UpdatedAt, &o.ClosedAt)
				l.orders[o.ID], l.orderByNo[o.OrderNo] = o, o
				return err
			}},
		{`SELECT id, kind, credit_cents, stock FROM products`, func(r *sql.Rows) error {
			p := &product{}
			err := r.Scan(&p.ID, &p.Kind, &p.CreditCents, &p.Stock)
			l.products[p.ID] = p
			return err
		}},
		{`SELECT id, product_id, status, order_id FROM card_keys ORDER BY id`,
			appendTo(&l.keys, func(k *cardKey) []any { return []any{&k.ID, &k.ProductID, &k.Status, &k.OrderID} })},
		{`SELECT trade_no, order_id, amount_cents, disposition FROM payments ORDER BY id`,
			appendTo(&l.payments, func(p *payment) []any { return []any{&p.TradeNo, &p.OrderID, &p.AmountCents, &p.Disposition} })},
		{`SELECT refund_no, base_no, order_id, order_no, trade_no, amount_cents, reason, status, updated_at FROM refunds ORDER BY id`,
			appendTo(&l.refunds, func(x *refund) []any {
				return []any{&x.RefundNo, &x.BaseNo, &x.OrderID, &x.OrderNo, &x.TradeNo, &x.AmountCents, &x.Reason, &x.Status, &x.UpdatedAt}
			})},
		{`SELECT id, balance_cents, pending_orders FROM users`, func(r *sql.Rows) error {
			u := &user{}
			err := r.Scan(&u.ID, &u.BalanceCents, &u.PendingOrders)
			l.users[u.ID] = u
			return err
		}},
		{`SELECT user_id, kind, ref, amount_cents FROM wallet_entries ORDER BY id`,
			appendTo(&l.entries, func(e *walletEntry) []any { return []any{&e.UserID, &e.Kind, &e.Ref, &e.AmountCents} })},
		{`SELECT order_id, effect FROM order_effects`, func(r *sql.Rows) error {
			var id int64
			var eff string
			err := r.Scan(&id, &eff)
			l.effects[id] = append(l.effects[id], eff)
			return err
		}},
		{`SELECT order_id, flow_type, quantity FROM stock_flows ORDER BY id`, func(r *sql.Rows) error {
			var f flow
			err := r.Scan(&f.OrderID, &f.FlowType, &f.Quantity)
			l.flows[f.OrderID] = append(l.flows[f.OrderID], f)
			return err
		}},
		{`SELECT id, object_type, object_no, from_status, to_status, reason FROM events ORDER BY id`,
			appendTo(&l.events, func(e *event) []any { return []any{&e.ID, &e.ObjectType, &e.ObjectNo, &e.From, &e.To, &e.Reason} })},
		{`SELECT notify_id, kind, subject, message FROM notifications ORDER BY id`,
			appendTo(&l.notifications, func(n *notification) []any { return []any{&n.NotifyID, &n.Kind, &n.Subject, &n.Message} })},
		{"SELECT id, group_no, price_cents, deadline, status, updated_at FROM `groups` ORDER BY id", func(r *sql.Rows) error {
			g := &group{}
			err := r.Scan(&g.ID, &g.GroupNo, &g.PriceCents, &g.Deadline, &g.Status, &g.UpdatedAt)
			l.groups = append(l.groups, g)
			return err
		}},
		{`SELECT group_id, user_id, charged_at IS NOT NULL FROM group_participants ORDER BY group_id, user_id`, func(r *sql.Rows) error {
			var p participant
			err := r.Scan(&p.GroupID, &p.UserID, &p.Charged)
			l.participants[p.GroupID] = append(l.participants[p.GroupID], p)
			return err
		}},
		{`SELECT dispute_id, trade_no, order_id, order_no, status, amount_cents, lost_cents, flag, closed_at IS NOT NULL FROM disputes ORDER BY id`,
			appendTo(&l.disputes, func(d *dispute) []any {
				return []any{&d.DisputeID, &d.TradeNo, &d.OrderID, &d.OrderNo, &d.Status, &d.AmountCents, &d.LostCents, &d.Flag, &d.Closed}
			})},
		{`SELECT provider, day, kind, ref, trade_no, order_no, refund_no, provider_amount_cents, ledger_amount_cents, status, action, resolved_by
			FROM statement_breaks ORDER BY id`,
			appendTo(&l.breaks, func(b *statementBreak) []any {
				return []any{&b.Provider, &b.Day, &b.Kind, &b.Ref, &b.TradeNo, &b.OrderNo, &b.RefundNo, &b.ProviderCents, &b.LedgerCents,
					&b.Status, &b.Action, &b.ResolvedBy}
			})},
		{`SELECT task_id, created_at FROM outbox ORDER BY id`,
			appendTo(&l.outbox, func(o *outboxRow) []any { return []any{&o.TaskID, &o.CreatedAt} })},
	}
	for _, q := range queries {
		if err := scanAll(ctx, tx, q.sql, q.scan); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// appendTo scans each row into a fresh T, whose fields in column order are
// what fields returns, and appends it to dst.
func appendTo[T any](dst *[]T, fields func(*T) []any) func(*sql.Rows) error {
	return func(r *sql.Rows) error {
		var v T
		err := r.Scan(fields(&v)...)
		*dst = append(*dst, v)
		return err
	}
}

func scanAll(ctx context.Context, tx *sql.Tx, query string, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1146 {
		return fmt.Errorf("%s (is the ledger migrated? run `api migrate`): %w", me.Message, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", query, err)
		}
	}
	return rows.Err()
}
