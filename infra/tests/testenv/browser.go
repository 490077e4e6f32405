package testenv

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser starts headless chromium (Debian's, which make test installs through
// infra/scripts/tools.sh) with a fresh profile and returns its chromedp context,
// closed when the test ends. Without chromium the test fails in CI and is skipped
// elsewhere. timeout bounds the whole browser session.
func Browser(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	var chrome string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			chrome = path
			break
		}
	}
	if chrome == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: the browser tests need it in CI (make tools installs it)")
		}
		t.Skip("chromium is not installed: skipping the browser test (apt-get install chromium, or make tools)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancel()
	})
	return browser
}
