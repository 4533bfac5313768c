package svc

import (
	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/metrics"
)

// MetricsSources are what /metrics and the admin stats read at scrape
// time, alike on the API and every worker.
func (s *ServiceContext) MetricsSources(uc *UseCases) metrics.Sources {
	return metrics.Sources{Store: s.Store, Inspector: s.Inspector, Clock: s.Clock, Jobs: s.Config.PeriodicJobs(),
		StatementProviders: uc.Statements.Providers(), BreakKinds: statement.BreakKinds}
}
