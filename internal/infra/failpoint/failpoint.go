// Package failpoint lets tests make a process die or fail at named points
// without editing code. Points are armed from the ORDERFLOW_FAILPOINTS
// environment variable (for child processes) or with Enable (in-process):
//
//	ORDERFLOW_FAILPOINTS="activate/after-claim=exit;activate/deliver=error@ORDERNO"
//
// Actions: exit (os.Exit(ExitCode) at once, like kill -9 mid-step), error
// (Inject returns ErrInjected), sleep(<duration>) (then carry on), pause
// (in-process only: Inject blocks until Release; Reached tells a test it got
// there, so two flows interleave in a chosen order), off.
// "@key" limits a point to one object (an order or group number); "N*action"
// fires N times and then disarms. An exit or a sleep writes one line to
// stderr when it fires ("failpoint NAME fired for KEY: …"), so a test that
// watches a child process knows the moment it got there.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ExitCode is the status a process exits with at an "exit" failpoint, so a
// test can tell an injected death from a crash.
const ExitCode = 77

// ErrInjected is returned by Inject at an "error" failpoint.
var ErrInjected = errors.New("failpoint: injected error")

// Names of the points the product defines.
const (
	// CreateAfterStockTake sits between an order create's Redis stock take
	// and its database transaction (key: the product ID).
	CreateAfterStockTake   = "create/after-stock-take"
	ActivateAfterClaim     = "activate/after-claim"
	ActivateAfterEffect    = "activate/after-effect"
	ActivateBeforeFinalize = "activate/before-finalize"
	ActivateDeliver        = "activate/deliver"
	GroupAfterClose        = "group/after-close"
	GroupCharge            = "group/charge"
	// CloseAfterMove sits inside a close transaction (one order, or a batch:
	// it fires for each), right after the pending→closed moves and before
	// the COMMIT, keyed by order number: "pause" holds the order's row
	// locked, as a close in flight does; "error" fails that order's task
	// alone, the rest of its batch closing one by one.
	CloseAfterMove = "close/after-move"
	// StockRestore is the Redis step of a committed stock restore (close or
	// refund), keyed by order number: "error" is a Redis error right after
	// the commit.
	StockRestore = "stock/restore"
	// StockRebuildRead sits between a stock counter rebuild's ledger read and
	// its Redis write, keyed by product ID.
	StockRebuildRead = "stock/rebuild-read"
	// AfterCommitSend sits between a committed transaction and its
	// after-commit work (the outbox fast path), keyed by the task type of
	// each outbox row it wrote: "exit@webhook:deliver" is a worker killed
	// between a move and the hand-off of the webhook it caused; "error"
	// skips the fast path (the relay poller sends the rows).
	AfterCommitSend = "aftercommit/send"
	// WebhookBeforePost sits before a webhook's lease and post, keyed by
	// the event id.
	WebhookBeforePost = "webhook/before-post"
	// RefundsCounted sits inside the transaction that may finish an order's
	// refunds, after it counted the order's unfinished refunds and before
	// its COMMIT, keyed by the order number: "pause" holds one completion
	// there while another refund of the order completes.
	RefundsCounted = "refund/counted"
)

type point struct {
	action string
	arg    time.Duration
	key    string
	count  int // remaining firings; <0 = unlimited

	// pause only: closed when an Inject reaches the point, and by Release.
	reached, release chan struct{}
	reachedOnce      sync.Once
	releaseOnce      sync.Once
}

func (p *point) unpause() {
	if p.release != nil {
		p.releaseOnce.Do(func() { close(p.release) })
	}
}

var (
	mu     sync.Mutex
	points = map[string]*point{}
	armed  bool
)

func init() {
	if spec := os.Getenv("ORDERFLOW_FAILPOINTS"); spec != "" {
		if err := EnableSpec(spec); err != nil {
			fmt.Fprintln(os.Stderr, "ORDERFLOW_FAILPOINTS:", err)
			os.Exit(2)
		}
	}
}

// EnableSpec arms every point in a "name=action[@key];…" list.
func EnableSpec(spec string) error {
	for _, item := range strings.FieldsFunc(spec, func(r rune) bool { return r == ';' || r == ',' }) {
		name, action, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return fmt.Errorf("%q: want name=action", item)
		}
		if err := Enable(name, action); err != nil {
			return err
		}
	}
	return nil
}

// Enable arms one point. See the package doc for the action syntax.
func Enable(name, action string) error {
	p := &point{count: -1}
	action, p.key, _ = strings.Cut(action, "@")
	if n, rest, ok := strings.Cut(action, "*"); ok {
		c, err := strconv.Atoi(n)
		if err != nil {
			return fmt.Errorf("failpoint %s: bad count %q", name, n)
		}
		p.count, action = c, rest
	}
	switch {
	case action == "exit" || action == "error":
		p.action = action
	case action == "pause":
		p.action = action
		p.reached, p.release = make(chan struct{}), make(chan struct{})
	case action == "off":
		Disable(name)
		return nil
	case strings.HasPrefix(action, "sleep(") && strings.HasSuffix(action, ")"):
		d, err := time.ParseDuration(action[len("sleep(") : len(action)-1])
		if err != nil {
			return fmt.Errorf("failpoint %s: %w", name, err)
		}
		p.action, p.arg = "sleep", d
	default:
		return fmt.Errorf("failpoint %s: unknown action %q", name, action)
	}
	mu.Lock()
	if old := points[name]; old != nil {
		old.unpause()
	}
	points[name] = p
	armed = true
	mu.Unlock()
	return nil
}

// Disable disarms one point (releasing any flow paused at it).
func Disable(name string) {
	mu.Lock()
	if p := points[name]; p != nil {
		p.unpause()
	}
	delete(points, name)
	armed = len(points) > 0
	mu.Unlock()
}

// Reset disarms every point (releasing every paused flow).
func Reset() {
	mu.Lock()
	for _, p := range points {
		p.unpause()
	}
	points = map[string]*point{}
	armed = false
	mu.Unlock()
}

// Reached is closed once a flow is paused at a point armed with "pause"
// (nil, which never becomes ready, for any other point).
func Reached(name string) <-chan struct{} {
	mu.Lock()
	defer mu.Unlock()
	if p := points[name]; p != nil {
		return p.reached
	}
	return nil
}

// Release lets every flow paused at a point go on.
func Release(name string) {
	mu.Lock()
	defer mu.Unlock()
	if p := points[name]; p != nil {
		p.unpause()
	}
}

// Inject is called by the product at a named point for one object (key).
// It does nothing unless the point is armed for that key.
func Inject(name, key string) error {
	mu.Lock()
	if !armed {
		mu.Unlock()
		return nil
	}
	p := points[name]
	if p == nil || (p.key != "" && p.key != key) || p.count == 0 {
		mu.Unlock()
		return nil
	}
	if p.count > 0 {
		p.count--
	}
	action, arg := p.action, p.arg
	mu.Unlock()
	if action == "pause" {
		p.reachedOnce.Do(func() { close(p.reached) })
		<-p.release
		return nil
	}
	switch action {
	case "exit":
		fmt.Fprintf(os.Stderr, "failpoint %s fired for %s: exiting\n", name, key)
		os.Exit(ExitCode)
	case "error":
		return fmt.Errorf("%w at %s", ErrInjected, name)
	case "sleep":
		fmt.Fprintf(os.Stderr, "failpoint %s fired for %s: sleeping %v\n", name, key, arg)
		time.Sleep(arg)
	}
	return nil
}
