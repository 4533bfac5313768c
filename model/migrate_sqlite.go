package model

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"testing/fstest"
)

// The schema is written once, in MySQL's dialect (migrations/mysql, applied
// as they are by every production database). SQLite's migrations are derived
// from those files when the dev mode migrates: translateToSQLite rewrites the
// few MySQL forms SQLite does not take, statement by statement. A migration
// the translator cannot express (a column's type changed in place, which
// SQLite does only by rebuilding the table) has its SQLite form written by
// hand in migrations/sqlite-overrides under the MySQL file's name. An override
// is a file of its own, not a section inside the MySQL file, because the MySQL
// files must stay byte for byte what production databases applied.

// sqliteMigrations is the SQLite migration directory: every MySQL file,
// translated or overridden. Translated once per process (readiness checks
// read it too); fstest.MapFS is only the standard library's in-memory fs.FS.
var sqliteMigrations = sync.OnceValues(func() (fs.FS, error) {
	mysql, err := fs.Sub(migrations, "migrations/mysql")
	if err != nil {
		return nil, err
	}
	overrides, err := fs.Sub(migrations, "migrations/sqlite-overrides")
	if err != nil {
		return nil, err
	}
	return sqliteMigrationsOf(mysql, overrides)
})

func sqliteMigrationsOf(mysql, overrides fs.FS) (fs.FS, error) {
	out := fstest.MapFS{}
	names, err := fs.Glob(mysql, "*.sql")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if src, err := fs.ReadFile(overrides, name); err == nil {
			out[name] = &fstest.MapFile{Data: src}
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		src, err := fs.ReadFile(mysql, name)
		if err != nil {
			return nil, err
		}
		lite, err := translateToSQLite(string(src))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = &fstest.MapFile{Data: []byte(lite)}
	}
	orphans, err := fs.Glob(overrides, "*.sql")
	if err != nil {
		return nil, err
	}
	for _, name := range orphans {
		if out[name] == nil {
			return nil, fmt.Errorf("sqlite override %s has no MySQL migration of that name", name)
		}
	}
	return out, nil
}

// translateToSQLite rewrites one goose migration file from MySQL to SQLite.
// goose annotations stay where they are, the lines between StatementBegin and
// StatementEnd are kept verbatim, other comments are dropped, and each
// statement (ending with ';' at the end of a line) is translated alone.
func translateToSQLite(src string) (string, error) {
	var out, stmt strings.Builder
	verbatim := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "-- +goose"):
			if stmt.Len() > 0 {
				return "", fmt.Errorf("%q inside an unfinished statement", trimmed)
			}
			verbatim = strings.Contains(trimmed, "StatementBegin")
			out.WriteString(line + "\n")
		case verbatim:
			out.WriteString(line + "\n")
		case trimmed == "" && stmt.Len() == 0:
			out.WriteString("\n")
		case strings.HasPrefix(trimmed, "--") || trimmed == "":
		case strings.HasSuffix(trimmed, ";"):
			stmt.WriteString(strings.TrimSuffix(trimmed, ";"))
			lite, err := translateStatement(stmt.String())
			if err != nil {
				return "", err
			}
			for _, s := range lite {
				out.WriteString(s + ";\n")
			}
			stmt.Reset()
		default:
			stmt.WriteString(trimmed + "\n")
		}
	}
	if stmt.Len() > 0 {
		return "", fmt.Errorf("statement without its ';': %q", stmt.String())
	}
	return out.String(), sc.Err()
}

var (
	createTableRe   = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+(\S+)\s*\((.*)\)\s*(ENGINE\s*=[^()]*)?$`)
	alterTableRe    = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+(\S+)\s+(.*)$`)
	datetimeRe      = regexp.MustCompile(`(?i)\bDATETIME\(\d\)`)
	autoIncrementRe = regexp.MustCompile(`(?i)^(\S+)\s+(?:BIG|MEDIUM|SMALL|TINY)?INT(?:EGER)?\s+NOT\s+NULL\s+AUTO_INCREMENT$`)
	primaryKeyRe    = regexp.MustCompile(`(?i)^PRIMARY\s+KEY\s*\(\s*(\S+?)\s*\)$`)
	keyRe           = regexp.MustCompile(`(?is)^(UNIQUE\s+)?(?:KEY|INDEX)\s+(\S+)\s*(\(.*\))$`)
	addColumnRe     = regexp.MustCompile(`(?is)^ADD\s+COLUMN\s+(.*?)(?:\s+AFTER\s+\S+|\s+FIRST)?$`)
	addKeyRe        = regexp.MustCompile(`(?is)^ADD\s+(UNIQUE\s+)?(?:KEY|INDEX)\s+(\S+)\s*(\(.*\))$`)
	dropKeyRe       = regexp.MustCompile(`(?is)^DROP\s+(?:KEY|INDEX)\s+(\S+)$`)
	dropColumnRe    = regexp.MustCompile(`(?is)^DROP\s+COLUMN\s+\S+$`)
)

// translateStatement turns one MySQL statement (without its ';') into the
// SQLite statements that do the same. CREATE TABLE and ALTER TABLE are
// rewritten; any other statement is the same in both dialects.
func translateStatement(stmt string) ([]string, error) {
	if m := createTableRe.FindStringSubmatch(stmt); m != nil {
		return translateCreateTable(m[1], m[2])
	}
	if m := alterTableRe.FindStringSubmatch(stmt); m != nil {
		return translateAlterTable(m[1], m[2])
	}
	if strings.HasPrefix(strings.ToUpper(stmt), "CREATE TABLE") {
		return nil, fmt.Errorf("CREATE TABLE the translator does not read: %q", stmt)
	}
	return []string{strings.TrimSuffix(stmt, "\n")}, nil
}

// translateCreateTable: an AUTO_INCREMENT id becomes SQLite's INTEGER
// PRIMARY KEY AUTOINCREMENT (so its PRIMARY KEY line goes), KEY and UNIQUE
// KEY lines become CREATE INDEX statements after the table, and the table
// options (ENGINE, CHARSET, COLLATE) go.
func translateCreateTable(table, body string) ([]string, error) {
	var cols, indexes []string
	autoID, autoIDKeyed := "", false
	for _, item := range splitTopLevel(body) {
		item = datetimeRe.ReplaceAllString(item, "DATETIME")
		if m := autoIncrementRe.FindStringSubmatch(item); m != nil {
			autoID = m[1]
			cols = append(cols, m[1]+" INTEGER PRIMARY KEY AUTOINCREMENT")
			continue
		}
		if m := primaryKeyRe.FindStringSubmatch(item); m != nil && m[1] == autoID {
			autoIDKeyed = true
			continue
		}
		if m := keyRe.FindStringSubmatch(item); m != nil {
			indexes = append(indexes, createIndex(m[1], m[2], table, m[3]))
			continue
		}
		if strings.Contains(strings.ToUpper(item), "AUTO_INCREMENT") {
			return nil, fmt.Errorf("table %s: AUTO_INCREMENT only as 'id BIGINT NOT NULL AUTO_INCREMENT': %q", table, item)
		}
		cols = append(cols, item)
	}
	if autoID != "" && !autoIDKeyed {
		return nil, fmt.Errorf("table %s: AUTO_INCREMENT %s is not the whole primary key", table, autoID)
	}
	create := "CREATE TABLE " + table + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
	return append([]string{create}, indexes...), nil
}

// translateAlterTable splits a MySQL ALTER TABLE of several clauses into one
// SQLite statement per clause, in their order (an index on a column is
// dropped before the column, as SQLite requires). AFTER goes: SQLite adds a
// column at the end.
func translateAlterTable(table, clauses string) ([]string, error) {
	var out []string
	for _, c := range splitTopLevel(clauses) {
		c = datetimeRe.ReplaceAllString(c, "DATETIME")
		if m := addColumnRe.FindStringSubmatch(c); m != nil {
			out = append(out, "ALTER TABLE "+table+" ADD COLUMN "+m[1])
		} else if m := addKeyRe.FindStringSubmatch(c); m != nil {
			out = append(out, createIndex(m[1], m[2], table, m[3]))
		} else if m := dropKeyRe.FindStringSubmatch(c); m != nil {
			out = append(out, "DROP INDEX "+m[1])
		} else if dropColumnRe.MatchString(c) {
			out = append(out, "ALTER TABLE "+table+" "+c)
		} else {
			return nil, fmt.Errorf("ALTER TABLE %s: no SQLite form for %q; write the migration's SQLite form in migrations/sqlite-overrides", table, c)
		}
	}
	return out, nil
}

func createIndex(unique, name, table, cols string) string {
	if unique != "" {
		return "CREATE UNIQUE INDEX " + name + " ON " + table + " " + cols
	}
	return "CREATE INDEX " + name + " ON " + table + " " + cols
}

// splitTopLevel splits a list at the commas outside parentheses and quotes,
// each part trimmed.
func splitTopLevel(list string) []string {
	var parts []string
	depth, quoted, start := 0, false, 0
	flush := func(end int) {
		if part := strings.TrimSpace(list[start:end]); part != "" {
			parts = append(parts, part)
		}
	}
	for i := 0; i < len(list); i++ {
		switch c := list[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			flush(i)
			start = i + 1
		}
	}
	flush(len(list))
	return parts
}
