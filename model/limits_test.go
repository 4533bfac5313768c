package model_test

import (
	"errors"
	"testing"
	"time"

	"orderflow/model"
)

func TestSubscriptionEnd(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := now.Add(100 * 24 * time.Hour)
	earlier := now.Add(-24 * time.Hour)
	nearEnd := time.Date(9999, 6, 1, 0, 0, 0, 0, time.UTC)
	year := 365 * 24 * time.Hour
	lastYear := model.MaxTime.Add(-year)
	for _, tc := range []struct {
		name    string
		current *time.Time
		d       time.Duration
		want    time.Time
		refused bool
	}{
		{"no subscription", nil, year, now.Add(year), false},
		{"lapsed", &earlier, year, now.Add(year), false},
		{"running", &later, year, later.Add(year), false},
		{"up to the last DATETIME", &lastYear, year, model.MaxTime, false},
		{"past the last DATETIME", &nearEnd, year, time.Time{}, true},
		{"negative", nil, -time.Hour, time.Time{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := model.SubscriptionEnd(tc.current, now, tc.d)
			if refused := errors.Is(err, model.ErrSubscriptionEnd); refused != tc.refused || (err != nil && !refused) {
				t.Fatalf("err = %v, want refused %v", err, tc.refused)
			}
			if !got.Equal(tc.want) {
				t.Errorf("end = %v, want %v", got, tc.want)
			}
		})
	}
}
