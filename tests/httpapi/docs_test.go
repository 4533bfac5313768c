package httpapi

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// readmeMaxBytes keeps the README to a few screens; everything else belongs
// in docs/.
const readmeMaxBytes = 12_000

// TestDocsLinksResolve: every relative link in README.md and docs/*.md names
// a file or folder that exists, and every #anchor names a heading of the page
// it points into — so moving a file or renaming a section cannot leave a
// newcomer at a dead link.
func TestDocsLinksResolve(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	anchors := map[string][]string{} // page path → its heading anchors, read once
	anchorsOf := func(path string) []string {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := headingAnchors(t, path)
		anchors[path] = a
		return a
	}
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		t.Run(rel, func(t *testing.T) {
			for _, l := range markdownLinks(t, page) {
				target, anchor, _ := strings.Cut(l.target, "#")
				path := page // "#anchor" alone points into the page itself
				if target != "" {
					path = filepath.Join(filepath.Dir(page), target)
				}
				inRepo, err := filepath.Rel(root, path)
				if err != nil || strings.HasPrefix(inRepo, "..") {
					t.Errorf("%s:%d: link %q leaves the repository", rel, l.line, l.target)
					continue
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", rel, l.line, l.target, inRepo)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchorsOf(path), anchor) {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s (it has %v)",
						rel, l.line, l.target, inRepo, anchor, anchorsOf(path))
				}
			}
		})
	}
}

// TestReadmeFitsAndShowsTheLayout: the README stays at most 12,000 bytes and
// its Layout section has a line for every top-level folder; docs/layout.md
// has one for those and every folder under internal/, tests/ and cmd/; neither
// lists one that is gone; and docs/ holds pages only — the layout drifted
// from the tree once, unnoticed.
func TestReadmeFitsAndShowsTheLayout(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, want at most %d: move detail into docs/", len(readme), readmeMaxBytes)
	}

	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files (needed to know the tracked folders): %v", err)
	}
	var want []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".go") {
			t.Errorf("%s: docs/ holds pages, not Go code", f)
		}
		parts := strings.Split(f, "/")
		for i := range parts[:len(parts)-1] {
			dir := strings.Join(parts[:i+1], "/") + "/"
			if (i == 0 || slices.Contains([]string{"internal", "tests", "cmd"}, parts[0])) &&
				!slices.Contains(parts[:i+1], "testdata") && !slices.Contains(want, dir) {
				want = append(want, dir)
			}
		}
	}
	var top []string
	for _, dir := range want {
		if strings.Count(dir, "/") == 1 {
			top = append(top, dir)
		}
	}
	full, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, root, "README.md", layoutFolders(t, string(readme), "\n## Layout\n"), top)
	checkLayout(t, root, "docs/layout.md", layoutFolders(t, string(full), "# Layout\n"), want)
}

// checkLayout reports the folders a layout listing misses or names wrongly.
func checkLayout(t *testing.T, root, name string, listed, want []string) {
	t.Helper()
	var missing, gone []string
	for _, dir := range want {
		if !slices.Contains(listed, dir) {
			missing = append(missing, dir)
		}
	}
	for _, dir := range listed {
		if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
			gone = append(gone, dir)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s Layout has no line for %v (one line each, starting with the folder)", name, missing)
	}
	if len(gone) > 0 {
		t.Errorf("%s Layout lists %v, which do not exist", name, gone)
	}
}

// TestMakeHelpDescribesEveryTarget: `make help` is the default goal (the
// first target) and lists every target from its "## target: what" line, so
// each target needs one.
func TestMakeHelpDescribesEveryTarget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	target := regexp.MustCompile(`^([a-z][a-z0-9-]*):([^=]|$)`)
	described := regexp.MustCompile(`^## ([a-z][a-z0-9-]*): \S`)
	var targets, undescribed []string
	docs := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := described.FindStringSubmatch(line); m != nil {
			docs[m[1]] = true
		}
		if m := target.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
	}
	for _, name := range targets {
		if !docs[name] {
			undescribed = append(undescribed, name)
		}
	}
	if len(targets) == 0 || targets[0] != "help" {
		t.Errorf("Makefile targets %v: want help first (the default goal)", targets)
	}
	if diff := cmp.Diff([]string(nil), undescribed); diff != "" {
		t.Errorf("targets without a \"## name: what it does\" line (-want +got):\n%s", diff)
	}
}

// TestHeadingAnchor pins the anchor rule GitHub uses, which the links rely on.
func TestHeadingAnchor(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Run it", "run-it"},
		{"Dev mode: `make run`", "dev-mode-make-run"},
		{"A trade number already recorded for another order", "a-trade-number-already-recorded-for-another-order"},
		{"Orders: life, closing and refunds", "orders-life-closing-and-refunds"},
		{"Retry budgets end in the sweep's hands", "retry-budgets-end-in-the-sweeps-hands"},
		{"What heals what — and how_fast", "what-heals-what--and-how_fast"},
		{"Price 0: a free order", "price-0-a-free-order"},
		{"C# and F#", "c-and-f"},
	} {
		if diff := cmp.Diff(tc.want, headingAnchor(tc.heading)); diff != "" {
			t.Errorf("headingAnchor(%q) (-want +got):\n%s", tc.heading, diff)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
)

// markdownLinks lists the relative links of a page: inline and reference
// links outside code, without web, mail and other scheme links.
func markdownLinks(t *testing.T, path string) []link {
	t.Helper()
	var links []link
	eachProseLine(t, path, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, link{target: target, line: n})
		}
	})
	return links
}

// headingAnchors lists the anchors of a page's headings, numbering repeats
// the way GitHub does (name, name-1, name-2 …).
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	var anchors []string
	seen := map[string]int{}
	eachProseLine(t, path, func(_ int, line string) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		a := headingAnchor(m[1])
		if n := seen[a]; n > 0 {
			anchors = append(anchors, a+"-"+strconv.Itoa(n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	})
	return anchors
}

// headingAnchor is GitHub's rule: lower case, drop everything but letters,
// marks, digits, connector punctuation (_), spaces and hyphens, then spaces
// become hyphens.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachProseLine calls f with each line of a Markdown page that is not inside
// a fenced code block, numbered from 1.
func eachProseLine(t *testing.T, path string, f func(n int, line string)) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	fence := ""
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		case fence == "":
			f(n, line)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

// layoutFolders lists the folders a page's Layout section (from heading on)
// names: the first word of each line of its code block that ends in "/".
func layoutFolders(t *testing.T, page, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(page, heading)
	if !ok {
		t.Fatalf("no %q section", heading)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	var folders []string
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if fields := strings.Fields(line); inBlock && len(fields) > 0 && strings.HasSuffix(fields[0], "/") {
			folders = append(folders, fields[0])
		}
	}
	return folders
}
