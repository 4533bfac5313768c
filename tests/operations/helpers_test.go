package operations

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/internal/testenv/child"
	"orderflow/model"
)

// startChild runs bin with env (plus extra variables) and kills it when the
// test ends if it is still running.
func startChild(t *testing.T, name, bin string, env []string, extra ...string) *testenv.ChildWorker {
	t.Helper()
	return testenv.StartChild(t, child.Options{Name: name, Path: bin, Env: append(env, extra...)})
}

// waitHTTP polls url until it answers 200.
func waitHTTP(t *testing.T, url string, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, url+" answering 200", func() (bool, error) {
		st, _, err := get(url, nil)
		return st == 200, err
	})
}

// plainHTTP is checked against the OpenAPI document, like every test client.
var plainHTTP = testenv.HTTPClient(10 * time.Second)

// get fetches url, letting edit add headers, and returns status and body.
func get(url string, edit func(*http.Request)) (int, string, error) {
	return do("GET", url, edit)
}

func do(method, url string, edit func(*http.Request)) (int, string, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, "", err
	}
	if edit != nil {
		edit(req)
	}
	resp, err := plainHTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// sample is one line of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads a /metrics page.
func scrape(t *testing.T, url string) []sample {
	t.Helper()
	st, body, err := get(url, nil)
	if err != nil || st != 200 {
		t.Fatalf("GET %s: status %d, err %v", url, st, err)
	}
	var out []sample
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			t.Fatalf("%s: line %q: %v", url, line, err)
		}
		out = append(out, s)
	}
	return out
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, errors.New("no value")
	}
	s.name, line = line[:i], line[i:]
	if strings.HasPrefix(line, "{") {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
			eq := strings.Index(line, `="`)
			if eq < 0 {
				return s, errors.New("bad label")
			}
			key := strings.TrimPrefix(line[:eq], ",")
			line = line[eq+2:]
			var val strings.Builder
			for {
				if line == "" {
					return s, errors.New("unterminated label value")
				}
				c := line[0]
				line = line[1:]
				if c == '\\' && line != "" {
					val.WriteByte(line[0])
					line = line[1:]
					continue
				}
				if c == '"' {
					break
				}
				val.WriteByte(c)
			}
			s.labels[key] = val.String()
			line = strings.TrimPrefix(line, ",")
		}
		line = line[1:]
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, errors.New("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	s.value = v
	return s, err
}

// value finds the sample named name whose labels include the given
// key/value pairs.
func value(samples []sample, name string, labels ...string) (float64, bool) {
	for _, s := range samples {
		if s.name != name || !s.match(labels) {
			continue
		}
		return s.value, true
	}
	return 0, false
}

func (s sample) match(labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		if s.labels[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}

// wantMetric asserts a sample's value.
func wantMetric(t *testing.T, where string, samples []sample, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(samples, name, labels...)
	switch {
	case !ok:
		t.Errorf("%s: %s%v missing", where, name, labels)
	case got != want:
		t.Errorf("%s: %s%v = %v, want %v", where, name, labels, got, want)
	}
}

// payAll pays every order, a few at a time.
func payAll(t *testing.T, s *testenv.Stack, orders []testenv.OrderView) {
	t.Helper()
	errs := make(chan error, len(orders))
	sem := make(chan struct{}, 8)
	for _, o := range orders {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, st, err := s.Pay.Pay(context.Background(), o.OrderNo, o.AmountCents, "")
			if err == nil && st != 200 {
				err = fmt.Errorf("status %d", st)
			}
			if err != nil {
				err = fmt.Errorf("pay %s: %w", o.OrderNo, err)
			}
			errs <- err
		}()
	}
	for range orders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// countByStatus reads how many orders of the stack's ledger are in status.
func countByStatus(t testing.TB, s *testenv.Stack, status model.OrderStatus) int64 {
	t.Helper()
	return s.Count(t, `SELECT COUNT(*) FROM orders WHERE status = ?`, status)
}
