package svc

import (
	"time"

	"orderflow/internal/infra/schedule"
	"orderflow/internal/infra/tasks"
)

// PeriodicJobs are the periodic task types and their schedules, read alike
// by the worker (asynq Scheduler entries, the slot claim) and by /metrics
// and the admin stats (each job's next slot). Validate has checked the
// reconciliation's spec.
func (c Config) PeriodicJobs() []schedule.Job {
	reconcileAt, err := schedule.Parse(c.ReconcileSchedule)
	if err != nil {
		reconcileAt = schedule.Every(24 * time.Hour) // unreachable after Validate
	}
	statementsAt, err := schedule.Parse(c.StatementCron())
	if err != nil {
		statementsAt = schedule.Every(24 * time.Hour) // unreachable after Validate
	}
	return []schedule.Job{
		{Type: tasks.TypeStatements, When: statementsAt},
		{Type: tasks.TypeSweep, When: schedule.Every(c.SweepInterval.D())},
		{Type: tasks.TypeReconcile, When: reconcileAt},
		{Type: tasks.TypeNotifyDeliver, When: schedule.Every(c.NotifyInterval.D())},
	}
}
