package paysim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The statement (对账单): GET /statements?date=YYYY-MM-DD&cursor=…&limit=…
// lists what moved money on one UTC calendar day — every payment the
// simulator took and every refund that succeeded, at the simulator's own
// time for it — in the order it happened, a page at a time. The answer is
// JSON signed like the simulator's callbacks (X-Signature, the HMAC of the
// raw body). A day is published once it is over by the simulator's clock;
// before that the answer is 409 statement_not_ready.
//
// The cursor is the position in the day's list where the next page starts
// (empty: the first page). The synthetic lines of a day (Synthesize) come
// first, then the recorded ones, so lines recorded late are still found by
// a walk under way.

// Statement line kinds.
const (
	KindPayment = "payment"
	KindRefund  = "refund"
)

// MaxStatementLimit is the most lines one statement page holds (and the
// page size when the request names none).
const MaxStatementLimit = 2000

// dayLayout is how a statement day is written.
const dayLayout = "2006-01-02"

// Statement is one page of a day's statement, the answer to GET /statements.
type Statement struct {
	Date  string          `json:"date"`
	Lines []StatementLine `json:"lines"`
	// NextCursor is the cursor of the next page; empty when HasMore is false.
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// StatementLine is one payment or refund on the statement.
type StatementLine struct {
	Kind    string `json:"kind"` // Kind*
	TradeNo string `json:"trade_no"`
	OrderNo string `json:"order_no"`
	// RefundNo is orderflow's out_request_no; empty for a payment and for a
	// refund made in the dashboard.
	RefundNo string `json:"refund_no"`
	// Ref is the simulator's id of the line: the trade number of a payment,
	// the out_request_no of orderflow's refund, the DR… id of a dashboard one.
	Ref         string    `json:"ref"`
	AmountCents int64     `json:"amount_cents"`
	FeeCents    int64     `json:"fee_cents"`
	At          time.Time `json:"at"`
}

// book holds the statement lines (Sim.StatementKnobs bend them). Guarded
// by Sim.mu.
type book struct {
	days  map[string][]StatementLine // by UTC day, in the order recorded
	synth map[string]synthetic       // days with generated payments (Synthesize)
}

func newBook() book {
	return book{
		days:  map[string][]StatementLine{},
		synth: map[string]synthetic{},
	}
}

// add enters a line on the statement of its day.
func (b *book) add(l StatementLine) {
	day := l.At.UTC().Format(dayLayout)
	b.days[day] = append(b.days[day], l)
}

// synthetic is a day's generated payment lines: n of them, numbered from 0,
// never stored — each page computes its own from the cursor.
type synthetic struct {
	n      int
	prefix string
}

// line is the synthetic payment number seq of the day starting at start:
// trade and order number <prefix><9-digit seq>, 100+seq%900 cents, spread
// over the day a second apart (wrapping after 86400).
func (sy synthetic) line(start time.Time, seq int) StatementLine {
	no := fmt.Sprintf("%s%09d", sy.prefix, seq)
	amount := int64(100 + seq%900)
	return StatementLine{
		Kind: KindPayment, TradeNo: no, OrderNo: no, Ref: no,
		AmountCents: amount, FeeCents: feeCents(amount),
		At: start.Add(time.Duration(seq%86400) * time.Second),
	}
}

// feeCents is the simulator's fee on a payment: 0.6%, rounded half up.
func feeCents(amount int64) int64 {
	return (amount*6 + 500) / 1000
}

// maxSynthesize is the most synthetic lines a day can have: the sequence
// number has nine digits.
const maxSynthesize = 999_999_999

// Synthesize makes the statement of day (YYYY-MM-DD) list n generated
// payments before its recorded lines: trade and order numbers
// <prefix><9-digit seq> for seq 0…n-1, amount 100+seq%900 cents. They are
// computed per page, never stored, so a day of a million costs no memory;
// they exist only on the statement (the simulator took no such payment).
// A later call for the same day replaces the earlier one; n = 0 removes them.
func (s *Sim) Synthesize(day string, n int, prefix string) error {
	if _, err := time.Parse(dayLayout, day); err != nil {
		return fmt.Errorf("synthesize: day %q is not YYYY-MM-DD", day)
	}
	if n < 0 || n > maxSynthesize {
		return fmt.Errorf("synthesize: n %d is not between 0 and %d", n, maxSynthesize)
	}
	if len(prefix) > maxOutRequestNo-9 {
		return fmt.Errorf("synthesize: prefix longer than %d characters", maxOutRequestNo-9)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		delete(s.book.synth, day)
	} else {
		s.book.synth[day] = synthetic{n: n, prefix: prefix}
	}
	return nil
}

// errNotReady is a statement asked for before its day is over.
var errNotReady = errors.New("the day is not over yet")

// statementPage builds the page of day (starting at start) from position
// from, at most limit lines, the knobs applied.
func (s *Sim) statementPage(day string, start time.Time, from, limit int) (Statement, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nowLocked().Before(start.AddDate(0, 0, 1)) {
		return Statement{}, errNotReady
	}
	sy, recorded := s.book.synth[day], s.book.days[day]
	total := sy.n + len(recorded)
	// at returns the line at position i with the knobs applied, ok=false
	// when it is dropped.
	at := func(i int) (StatementLine, bool) {
		var l StatementLine
		if i < sy.n {
			l = sy.line(start, i)
		} else {
			l = recorded[i-sy.n]
		}
		if s.StatementDrops(l.Ref) {
			return l, false
		}
		l.AmountCents = s.StatementAmount(l.Ref, l.AmountCents)
		return l, true
	}
	page := Statement{Date: day, Lines: make([]StatementLine, 0, max(min(limit, total-from), 0))}
	i := from
	for ; i < total && len(page.Lines) < limit; i++ {
		if l, ok := at(i); ok {
			page.Lines = append(page.Lines, l)
		}
	}
	for j := i; j < total; j++ {
		if _, ok := at(j); ok {
			page.HasMore, page.NextCursor = true, strconv.Itoa(i)
			break
		}
	}
	return page, nil
}

// handleStatement serves GET /statements.
func (s *Sim) handleStatement(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	day := q.Get("date")
	start, err := time.Parse(dayLayout, day)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "date must be YYYY-MM-DD")
		return
	}
	from := 0
	if c := q.Get("cursor"); c != "" {
		if from, err = strconv.Atoi(c); err != nil || from < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", "cursor is not one this statement gave")
			return
		}
	}
	limit := MaxStatementLimit
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > MaxStatementLimit {
			writeError(w, http.StatusBadRequest, "bad_request", "limit must be between 1 and "+strconv.Itoa(MaxStatementLimit))
			return
		}
	}
	page, err := s.statementPage(day, start, from, limit)
	if errors.Is(err, errNotReady) {
		writeError(w, http.StatusConflict, "statement_not_ready", "the statement of "+day+" is published once the day is over (UTC)")
		return
	}
	s.writeSignedJSON(w, http.StatusOK, page)
}
