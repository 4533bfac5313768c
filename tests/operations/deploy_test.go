package operations

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"orderflow/internal/testenv"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// seriesName finds the metric names an expression reads.
var seriesName = regexp.MustCompile(`\b(?:orderflow|asynq)_[a-z_]+\b`)

// deploy/prometheus-rules.yml passes Prometheus's own rule-file check
// (rulefmt, what promtool check rules runs), the Grafana dashboard is JSON
// whose every panel has queries, and every series either of them reads is
// one that the API's or the worker's /metrics exports — so renaming or
// dropping a metric fails here, not on an operator's empty chart.
func TestDeployRulesAndDashboardReadRealSeries(t *testing.T) {
	rules := "../../deploy/prometheus-rules.yml"
	groups, errs := rulefmt.ParseFile(rules, false, model.UTF8Validation, parser.NewParser(parser.Options{}), promslog.NewNopLogger())
	for _, err := range errs {
		t.Errorf("rulefmt: %v", err)
	}
	var exprs []string
	if groups != nil {
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				exprs = append(exprs, r.Expr)
			}
		}
	}
	if len(exprs) == 0 {
		t.Fatal("no alert rules parsed")
	}

	b, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if _, err := parser.NewParser(parser.Options{}).ParseExpr(tg.Expr); err != nil {
				t.Errorf("dashboard panel %q: %q: %v", p.Title, tg.Expr, err)
			}
			exprs = append(exprs, tg.Expr)
		}
	}

	s := testenv.Start(t, testenv.Options{})
	exported := map[string]bool{}
	for _, url := range []string{s.APIURL + "/metrics", "http://" + s.Worker.Addr() + "/metrics"} {
		for _, sm := range scrape(t, url) {
			exported[sm.name] = true
		}
	}
	for _, e := range exprs {
		for _, name := range seriesName.FindAllString(e, -1) {
			if !exported[name] && !exported[strings.TrimSuffix(name, "_bucket")+"_count"] {
				t.Errorf("%q reads %s, which no process exports", e, name)
			}
		}
	}
}
