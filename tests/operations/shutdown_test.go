package operations

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

const shutdownTimeout = 5 * time.Second

// SIGTERM reaches a worker in the middle of 50 slow activations (20 at a
// time): it stops fetching and exits 0 within its shutdown timeout. When
// the running handlers finish inside the timeout they deliver their orders
// and no claim is left behind; when they outlast it, asynq hands their
// tasks back and the claims stay with those task IDs. Either way a new
// worker then finishes every order, each effect applied exactly once.
func TestWorkerSIGTERMDrainsAndNewWorkerFinishesAll(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slowness time.Duration // the activate/deliver sleep
		timeout  time.Duration // ORDERFLOW_SHUTDOWN_TIMEOUT
		// handlersFinish: the running handlers end inside the timeout.
		handlersFinish bool
	}{
		{"handlers finish inside the timeout", 1500 * time.Millisecond, shutdownTimeout, true},
		{"handlers outlast the timeout", 8 * time.Second, 2 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testDrain(t, tc.slowness, tc.timeout, tc.handlersFinish)
		})
	}
}

func testDrain(t *testing.T, slowness, timeout time.Duration, handlersFinish bool) {
	cfg := testenv.Config(t)
	cfg.Concurrency = 20
	cfg.ShutdownTimeout = svc.Duration(timeout)
	// Long task and claim timeouts, so on a loaded machine nothing but the
	// SIGTERM interrupts an activation (no deadline, no stuck-claim reset).
	cfg.ActivateTimeout = svc.Duration(20 * time.Second)
	cfg.ClaimTimeout = svc.Duration(40 * time.Second)
	s := testenv.StartWith(t, cfg, testenv.Options{NoWorker: true})

	const credit = 500
	cardID := s.NewCardProduct(t, "drain-card", 300, 25)
	rechargeID := s.NewProduct(t, map[string]any{"sku": "drain-recharge", "kind": "recharge", "price_cents": 450, "credit_cents": credit})
	type placed struct {
		kind  string
		order testenv.OrderView
	}
	var all []placed
	var orders []testenv.OrderView
	for b := range 10 { // five orders per buyer: the pending cap
		_, buyer := s.NewUser(t, fmt.Sprintf("drain-%d", b), 0)
		for i := range 5 {
			kind, pid := "card", cardID
			if (b*5+i)%2 == 1 {
				kind, pid = "recharge", rechargeID
			}
			o := buyer.CreateOrder(t, pid, 1)
			all = append(all, placed{kind, o})
			orders = append(orders, o)
		}
	}

	env := testenv.Env(s.Config)
	slow := startChild(t, "slow worker", testenv.Binary("queue"), env,
		"ORDERFLOW_FAILPOINTS=activate/deliver=sleep("+slowness.String()+")", "ORDERFLOW_LOG_LEVEL=info")
	payAll(t, s, orders)
	testenv.Eventually(t, 20*time.Second, "activations under way", func() (bool, error) {
		return countByStatus(t, s, model.OrderClaimed) >= 5, nil
	})
	claimedAtSignal := countByStatus(t, s, model.OrderClaimed)
	sent := time.Now()
	slow.SignalT(t, syscall.SIGTERM)
	if code := slow.WaitExit(t, timeout+5*time.Second); code != 0 {
		t.Fatalf("worker exited %d after SIGTERM, want 0; output:\n%s", code, slow.Out.String())
	}
	took := time.Since(sent)
	if took > timeout+2*time.Second {
		t.Errorf("worker took %v to exit, want within the %v shutdown timeout (+2s)", took, timeout)
	}
	finishedBySlow := countByStatus(t, s, model.OrderFinished)
	claimedAtExit := countByStatus(t, s, model.OrderClaimed)
	t.Logf("SIGTERM with %d orders claimed; exit 0 after %v (timeout %v); %d of 50 finished, %d left claimed",
		claimedAtSignal, took.Round(time.Millisecond), timeout, finishedBySlow, claimedAtExit)
	if finishedBySlow == 50 {
		t.Fatalf("every order finished before the worker stopped: the test did not interrupt anything")
	}
	if !strings.Contains(slow.Out.String(), "shutting down") {
		t.Errorf("worker did not log its shutdown; output:\n%s", slow.Out.String())
	}
	// No claim was released or reset while the worker stopped.
	handedBack := testenv.Rows[string](t, s, `SELECT CONCAT(object_no, ' ', to_status, ' (', reason, ')') FROM events
		WHERE object_type = 'order' AND from_status = 'claimed' AND to_status <> 'finished'`)
	if len(handedBack) != 0 {
		t.Errorf("claims released or reset during the drain, want none: %v", handedBack)
	}
	if handlersFinish {
		// The running handlers were let finish: every order claimed when the
		// signal came was delivered by the stopping worker.
		if claimedAtExit != 0 {
			t.Errorf("%d orders still claimed after the drained worker exited, want 0", claimedAtExit)
		}
		if finishedBySlow < claimedAtSignal {
			t.Errorf("%d orders finished by the drained worker, fewer than the %d it held at SIGTERM", finishedBySlow, claimedAtSignal)
		}
	} else {
		// The handlers were cut off: their orders stay claimed, and asynq
		// handed their tasks back for the next worker.
		if claimedAtExit == 0 || finishedBySlow != 0 {
			t.Errorf("after a cut-off drain %d claimed, %d finished; want claims left and none finished", claimedAtExit, finishedBySlow)
		}
		info, err := s.SC.Inspector.GetQueueInfo("critical")
		if err != nil {
			t.Fatal(err)
		}
		if info.Active != 0 || info.Pending < int(claimedAtExit) {
			t.Errorf("critical queue after the drain: %d active, %d pending; want 0 active and the %d cut-off tasks pending again", info.Active, info.Pending, claimedAtExit)
		}
	}

	startChild(t, "fresh worker", testenv.Binary("queue"), env)
	testenv.Eventually(t, 60*time.Second, "all 50 orders finished", func() (bool, error) {
		n := countByStatus(t, s, model.OrderFinished)
		return n == 50, fmt.Errorf("%d finished", n)
	})
	for _, p := range all {
		o := s.CheckFinishedOnce(t, p.order.OrderNo)
		no := o.OrderNo
		switch p.kind {
		case "card":
			if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, o.ID); n != 1 {
				t.Errorf("order %s: %d keys sold, want 1", no, n)
			}
			if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, o.ID, model.FlowSell); n != 1 {
				t.Errorf("order %s: %d sell flows, want 1", no, n)
			}
		case "recharge":
			if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref = ?`, "order:"+no); n != 1 {
				t.Errorf("order %s: %d wallet entries, want 1", no, n)
			}
			if got := s.Count(t, `SELECT COALESCE(SUM(amount_cents), 0) FROM wallet_entries WHERE ref = ?`, "order:"+no); got != credit {
				t.Errorf("order %s: wallet credited %d, want %d", no, got, credit)
			}
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'SOLD'`, cardID); n != 25 {
		t.Errorf("%d keys sold in all, want 25", n)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE kind = 'credit'`); n != 25 {
		t.Errorf("%d wallet credits in all, want 25 (one per recharge order)", n)
	}
}

var listeningRE = regexp.MustCompile(`api listening.*"addr": ?"([^"]+)"`)

// SIGTERM reaches the API binary while a payment notification is half
// sent: the API stops accepting, serves that request to the end (the order
// is paid), and exits 0.
func TestAPISIGTERMDrainsInFlightRequest(t *testing.T) {
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	pid := s.NewCardProduct(t, "api-drain", 300, 1)
	_, buyer := s.NewUser(t, "api-drain", 0)
	o := buyer.CreateOrder(t, pid, 1)

	api := startChild(t, "api", testenv.Binary("api"), testenv.Env(s.Config), "ORDERFLOW_LOG_LEVEL=info", "ORDERFLOW_HTTP_ADDR=127.0.0.1:0")
	var addr string
	testenv.Eventually(t, 20*time.Second, "api listening line", func() (bool, error) {
		if m := listeningRE.FindStringSubmatch(api.Out.String()); m != nil {
			addr = m[1]
		}
		return addr != "", nil
	})
	waitHTTP(t, "http://"+addr+"/healthz", 10*time.Second)

	// A payment notification whose body is only half sent when SIGTERM lands.
	body, _ := json.Marshal(map[string]any{"order_no": o.OrderNo, "trade_no": "T-drain-1", "amount_cents": o.AmountCents})
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /api/v1/payments/notify HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s: %s\r\nContent-Length: %d\r\n\r\n",
		addr, sign.Header, sign.Sum(s.Config.PaySecret, body), len(body))
	half := len(body) / 2
	if _, err := conn.Write(append([]byte(head), body[:half]...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the server start the handler
	sent := time.Now()
	api.SignalT(t, syscall.SIGTERM)

	// The API stops accepting new connections while the request is in flight.
	testenv.Eventually(t, 5*time.Second, "listener closed", func() (bool, error) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return true, nil
		}
		c.Close()
		return false, nil
	})
	select {
	case <-api.Done():
		t.Fatalf("api exited with a request in flight; output:\n%s", api.Out.String())
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("in-flight payment notification: status %d, want 200", resp.StatusCode)
	}
	if code := api.WaitExit(t, shutdownTimeout+5*time.Second); code != 0 {
		t.Fatalf("api exited %d after SIGTERM, want 0", code)
	}
	t.Logf("api drained the in-flight request and exited 0 %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if got := s.OrderRow(t, o.OrderNo).Status; got != model.OrderPaid {
		t.Errorf("order %s is %s after the drained payment, want paid", o.OrderNo, got)
	}
	if !strings.Contains(api.Out.String(), "draining") {
		t.Errorf("api did not log its drain; output:\n%s", api.Out.String())
	}
}
