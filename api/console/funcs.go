package console

import (
	"fmt"
	"html/template"
	"time"
)

var funcs = template.FuncMap{
	"money":  money,
	"moneyp": moneyOr,
	"age":    age,
	"dur":    func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"when":   when,
	"detail": detail,
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return when(*t)
	},
	"pct": func(p *float64) string {
		if p == nil {
			return "— (nothing yet)"
		}
		return fmt.Sprintf("%.1f%%", *p*100)
	},
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// age reads like an operator says it: 42s, 7m, 3h12m, 2d4h.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
