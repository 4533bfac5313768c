package devmode_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/paysim"
	"orderflow/internal/testenv"
	"orderflow/internal/testenv/child"
	"orderflow/model"
)

// devProcess is `orderflow dev` running as its own process on spare ports.
type devProcess struct {
	*testenv.ChildWorker
	api, paysim string
}

func startDev(t *testing.T, data string, env ...string) *devProcess {
	t.Helper()
	d := &devProcess{
		api:    "127.0.0.1:" + strconv.Itoa(testenv.SparePort(t)),
		paysim: "127.0.0.1:" + strconv.Itoa(testenv.SparePort(t)),
	}
	d.ChildWorker = testenv.StartChild(t, child.Options{
		Path: testenv.Binary("cmd/orderflow"),
		Args: []string{"dev", "-data", data, "-api", d.api, "-paysim", d.paysim,
			"-worker", "127.0.0.1:" + strconv.Itoa(testenv.SparePort(t))},
		Env: append(os.Environ(), env...),
	})
	testenv.Eventually(t, time.Minute, "orderflow dev is up", func() (bool, error) {
		if d.Exited() {
			t.Fatalf("orderflow dev exited at start:\n%s", d.Out.String())
		}
		return strings.Contains(d.Out.String(), "orderflow dev is up"), nil
	})
	return d
}

// devState is the data directory's dev.json.
type devState struct {
	AdminToken string `json:"admin_token"`
	Seeded     struct {
		CardProductID int64  `json:"card_product_id"`
		BuyerToken    string `json:"buyer_token"`
	} `json:"seeded"`
}

func readState(t *testing.T, data string) devState {
	t.Helper()
	var st devState
	b, err := os.ReadFile(filepath.Join(data, "dev.json"))
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		t.Fatalf("dev.json: %v", err)
	}
	return st
}

// ledgerCount counts rows in the dev ledger file while no process runs.
func ledgerCount(t *testing.T, data, query string, args ...any) int64 {
	t.Helper()
	db, err := model.OpenSQLite(filepath.Join(data, "orderflow.db"), model.PoolConfig{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	}()
	return testenv.Count(t, db, query, args...)
}

// TestKilledWithOrdersPaidThenRestarted is done-when 3 of the zero-set-up
// issue. The first run pays 10 card orders while every worker slot hangs
// inside delivery (a failpoint), so some orders are claimed and the rest
// wait in the embedded Redis; one more order stays unpaid. SIGKILL — the
// embedded Redis and every task in it die. The ledger survives: the second
// run finds no epoch marker, reconciles, and every paid order finishes with
// exactly one key while the unpaid one closes at its expiry and recycles
// its key. Ctrl-C then stops it with exit 0.
func TestKilledWithOrdersPaidThenRestarted(t *testing.T) {
	const paid, slots = 10, 4
	data := t.TempDir()
	first := startDev(t, data,
		"ORDERFLOW_FAILPOINTS=activate/deliver=sleep(10m)",
		"ORDERFLOW_CONCURRENCY="+strconv.Itoa(slots),
		"ORDERFLOW_MAX_PENDING=50",
		"ORDERFLOW_ORDER_TTL=8s")
	st := readState(t, data)
	admin := &testenv.Client{Base: "http://" + first.api, Token: st.AdminToken}
	buyer := &testenv.Client{Base: "http://" + first.api, Token: st.Seeded.BuyerToken}
	pay := &paysim.Client{BaseURL: "http://" + first.paysim, HTTP: &http.Client{Timeout: 10 * time.Second}}
	ctx := context.Background()

	var nos []string
	for range paid {
		o := buyer.CreateOrder(t, st.Seeded.CardProductID, 1)
		if _, code, err := pay.Pay(ctx, o.OrderNo, o.AmountCents, ""); err != nil || code != 200 {
			t.Fatalf("pay %s: %d %v", o.OrderNo, code, err)
		}
		nos = append(nos, o.OrderNo)
	}
	unpaid := buyer.CreateOrder(t, st.Seeded.CardProductID, 1).OrderNo
	countStatus := func(c *testenv.Client, status string) int {
		var res struct{ Orders []json.RawMessage }
		if code := c.Do(t, "GET", "/api/v1/admin/orders?status="+status, nil, &res); code != 200 {
			t.Fatalf("list %s orders: %d", status, code)
		}
		return len(res.Orders)
	}
	testenv.Eventually(t, 30*time.Second, "every worker slot hanging in delivery", func() (bool, error) {
		return countStatus(admin, "claimed") == slots && countStatus(admin, "paid") == paid-slots, nil
	})
	first.Kill()

	if n := ledgerCount(t, data, `SELECT COUNT(*) FROM orders WHERE status = ?`, model.OrderFinished); n != 0 {
		t.Fatalf("%d orders finished before the kill; the test wants them all unfinished", n)
	}
	if n := ledgerCount(t, data, `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`); n != paid+1 {
		t.Fatalf("LOCKED keys after the kill = %d, want %d", n, paid+1)
	}

	second := startDev(t, data, "ORDERFLOW_CLAIM_TIMEOUT=2s", "ORDERFLOW_ACTIVATE_TIMEOUT=1s", "ORDERFLOW_SWEEP_INTERVAL=1s")
	if !strings.Contains(second.Out.String(), "the ledger from the last run") {
		t.Errorf("the second start does not say it found the ledger:\n%s", second.Out.String())
	}
	admin.Base, buyer.Base = "http://"+second.api, "http://"+second.api
	testenv.Eventually(t, time.Minute, "every paid order finished and the unpaid one closed", func() (bool, error) {
		return countStatus(admin, "finished") == paid && countStatus(admin, "closed") == 1, nil
	})
	for _, no := range nos {
		if o := buyer.Order(t, no); len(o.Cards) != 1 {
			t.Errorf("order %s shows %d keys, want 1", no, len(o.Cards))
		}
	}
	if o := buyer.Order(t, unpaid); o.Status != "closed" || len(o.Cards) != 0 {
		t.Errorf("unpaid order %s: %s with %d keys, want closed with none", unpaid, o.Status, len(o.Cards))
	}

	second.SignalT(t, os.Interrupt)
	if code := second.WaitExit(t, 30*time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0", code)
	}
	for query, want := range map[string]int64{
		`SELECT COUNT(*) FROM card_keys WHERE status = 'SOLD'`:                                            paid,
		`SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`:                                          0,
		`SELECT COUNT(*) FROM card_keys WHERE status = 'RECYCLED'`:                                        1,
		`SELECT COUNT(*) FROM order_effects`:                                                              paid,
		`SELECT COUNT(DISTINCT order_id) FROM card_keys WHERE status = 'SOLD'`:                            paid,
		`SELECT COUNT(*) FROM events WHERE to_status = 'finished'`:                                        paid,
		`SELECT COUNT(*) FROM stock_flows WHERE flow_type = ` + strconv.Itoa(int(model.FlowCloseRestore)): 1,
	} {
		if n := ledgerCount(t, data, query); n != want {
			t.Errorf("%s = %d, want %d", query, n, want)
		}
	}
}
