//go:build browser

package console

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium is one headless Chromium (Debian's package) for a console test:
// it accepts every confirmation dialog (each console action asks one) and
// counts them, and saves pages to tmp/<prefix>*.png at the module root.
type chromium struct {
	t       *testing.T
	ctx     context.Context
	dialogs atomic.Int32
	outDir  string
	prefix  string
}

// newChromium starts Chromium for t; it stops when t ends.
func newChromium(t *testing.T, prefix string) *chromium {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium on PATH (apt-get install chromium)")
	}
	outDir, err := filepath.Abs("../../tmp")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true))...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &chromium{t: t, ctx: ctx, outDir: outDir, prefix: prefix}
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opened {
			if err != nil {
				return
			}
			b.dialogs.Add(1)
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				t.Logf("accept dialog: %v", err)
			}
		}
	}()
	return b
}

// run does steps within 45 s or fails the test, naming what it was doing.
func (b *chromium) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// shot saves the page as tmp/<prefix><name>.png.
func (b *chromium) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.outDir, b.prefix+name+".png"), png, 0o644)
	})
}

// get reads a value off the page or fails the test.
func (b *chromium) get(a chromedp.Action[string]) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// text is the text of the element sel names.
func (b *chromium) text(sel string) string {
	b.t.Helper()
	return b.get(chromedp.Text(chromedp.CSS(sel)))
}
