package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"

	"github.com/google/go-cmp/cmp"
)

// TestIdempotencyKeyRules: a key is 1..255 bytes of visible ASCII, sent
// once — the longest works, anything else (an empty or repeated header too)
// is 400 invalid_idempotency_key with nothing written; a key reused with another order (product or quantity) is 422
// idempotency_key_reused with nothing written; the same order again, however
// its JSON is spelled, is the first order (200, same order_no).
//
// It runs on MariaDB and on the dev mode's SQLite (each has its migration).
func TestIdempotencyKeyRules(t *testing.T) {
	testenv.EachBackend(t, idempotencyKeyRules)
}

func idempotencyKeyRules(t *testing.T, backend testenv.Backend) {
	s := testenv.Start(t, testenv.Options{Backend: backend})
	card := s.NewCardProduct(t, "key-card", 100, 20)
	other := s.NewCardProduct(t, "key-other", 100, 20)
	_, c := s.NewUser(t, "key-buyer", 0)

	// twice sends the create with two Idempotency-Key headers.
	twice := func(body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", s.APIURL+"/api/v1/orders", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
		req.Header.Add("Idempotency-Key", "first-of-two")
		req.Header.Add("Idempotency-Key", "second-of-two")
		resp, err := testenv.HTTPClient(30 * time.Second).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	type created struct {
		OrderNo string `json:"order_no"`
	}
	create := func(body, key string) (int, []byte, string) {
		t.Helper()
		st, raw := c.Raw(t, "POST", "/api/v1/orders", []byte(body), "Idempotency-Key", key)
		var res created
		if st < 300 && json.Unmarshal(raw, &res) != nil {
			t.Fatalf("create: status %d body %s", st, raw)
		}
		return st, raw, res.OrderNo
	}
	body := `{"product_id":` + itoa(card) + `,"quantity":2}`

	longest := strings.Repeat("k", 254) + "~"
	t.Run("a 255-byte key works and replays", func(t *testing.T) {
		st1, raw1, first := create(body, longest)
		st2, raw2, again := create(body, longest)
		if st1 != http.StatusCreated || st2 != http.StatusOK || first == "" || again != first {
			t.Errorf("255-byte key twice: %d %s then %d %s; want 201 then 200 with the same order", st1, raw1, st2, raw2)
		}
	})

	t.Run("the same order spelled another way replays", func(t *testing.T) {
		const key = "spelled-!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
		st1, raw1, first := create(body, key)
		respelled := "{ \"quantity\" : 2,\n  \"product_id\" : " + itoa(card) + " }"
		st2, raw2, again := create(respelled, key)
		if st1 != http.StatusCreated || st2 != http.StatusOK || first == "" || again != first {
			t.Errorf("same key, same order reordered: %d %s then %d %s; want 201 then 200 with the same order", st1, raw1, st2, raw2)
		}
	})

	const reused = "reused-key"
	if st, raw, _ := create(body, reused); st != http.StatusCreated {
		t.Fatalf("first create with %q: status %d body %s", reused, st, raw)
	}
	for _, tc := range []struct {
		name, body, key string
		want            int
		code            string
	}{
		{"a 256-byte key", body, strings.Repeat("k", 256), http.StatusBadRequest, "invalid_idempotency_key"},
		{"a 1000-byte key", body, strings.Repeat("k", 1000), http.StatusBadRequest, "invalid_idempotency_key"},
		{"a key with a non-ASCII letter", body, "clé-1", http.StatusBadRequest, "invalid_idempotency_key"},
		{"a key with bytes that are not UTF-8", body, "key-\xff\xfe", http.StatusBadRequest, "invalid_idempotency_key"},
		{"a key with a space", body, "two words", http.StatusBadRequest, "invalid_idempotency_key"},
		{"an empty key", body, "", http.StatusBadRequest, "invalid_idempotency_key"},
		{"two keys", body, "(twice)", http.StatusBadRequest, "invalid_idempotency_key"},
		{"the key again with another quantity", `{"product_id":` + itoa(card) + `,"quantity":3}`, reused, http.StatusUnprocessableEntity, "idempotency_key_reused"},
		{"the key again with another product", `{"product_id":` + itoa(other) + `,"quantity":2}`, reused, http.StatusUnprocessableEntity, "idempotency_key_reused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.Eventually(t, 10*time.Second, "outbox drained", func() (bool, error) {
				return s.Count(t, `SELECT COUNT(*) FROM outbox`) == 0, nil
			})
			before := snapshotLedger(t, s, card, other)
			var st int
			var raw []byte
			if tc.key == "(twice)" {
				st, raw = twice(tc.body)
			} else {
				st, raw, _ = create(tc.body, tc.key)
			}
			if st != tc.want {
				t.Errorf("status %d body %s, want %d %s", st, raw, tc.want, tc.code)
			}
			checkError(t, raw, tc.code)
			if diff := cmp.Diff(before, snapshotLedger(t, s, card, other)); diff != "" {
				t.Errorf("ledger changed by a refused create (-before +after):\n%s", diff)
			}
		})
	}
	// The first order still answers its own key.
	if st, raw, _ := create(body, reused); st != http.StatusOK {
		t.Errorf("the first body again after the refusals: status %d body %s, want 200", st, raw)
	}
}
