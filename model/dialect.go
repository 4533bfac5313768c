package model

import (
	"orderflow/model/sqlexec"

	"gorm.io/gorm"
)

// dialect is what the ledger's few statements that differ between MySQL
// and SQLite ask of the engine's dialect (sqlexec.Dialect).
type dialect struct {
	sqlite bool
	// mariadb: checks travel with held statements (batch.go).
	mariadb bool
	// galera: reads may ask to wait for the cluster (causal.go).
	galera bool
}

func viewOf(d sqlexec.Dialect) dialect {
	return dialect{sqlite: d.SQLite, mariadb: d.MariaDB, galera: d.Galera}
}

func dialectOf(db *gorm.DB) dialect { return viewOf(sqlexec.DialectOf(db)) }

// concat joins SQL string expressions.
func (d dialect) concat(parts ...string) string {
	return sqlexec.Dialect{SQLite: d.sqlite}.Concat(parts...)
}

// nullTime scans a time that may come back as text (an aggregate on SQLite).
type nullTime = sqlexec.NullTime
