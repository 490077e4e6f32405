package samtemplate_test

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/postgres"
)

// apiGatewayQuota is HTTP APIs' largest integration timeout (API Gateway's quotas:
// "Maximum integration timeout 30 seconds").
const apiGatewayQuota = 30 * time.Second

// deadlineRow is one row of docs/operations.md's table of deadlines.
type deadlineRow struct {
	limit, value, definedBy, within string
}

// deadlineTable reads the table of the section "Deadlines" of docs/operations.md, by the
// first code span of its "defined by" column.
func deadlineTable(t *testing.T) map[string]deadlineRow {
	t.Helper()
	b, err := os.ReadFile(repoFile("docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Deadlines")
	if start < 0 {
		t.Fatal("docs/operations.md has no section Deadlines")
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	code := regexp.MustCompile("`([^`]+)`")
	rows := map[string]deadlineRow{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| limit ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 5 {
			t.Fatalf("a row of %d cells, want 5: %s", len(cells), line)
		}
		r := deadlineRow{strings.TrimSpace(cells[0]), cells[1], cells[2], cells[3]}
		m := code.FindStringSubmatch(r.definedBy)
		if m == nil {
			t.Fatalf("row %q names nothing that defines it", r.limit)
		}
		if _, dup := rows[m[1]]; dup {
			t.Fatalf("two rows defined by %s", m[1])
		}
		rows[m[1]] = r
	}
	return rows
}

var durationText = regexp.MustCompile(`(\d+(?:\.\d+)?) (ms|s)\b`)

// durations are the durations written in s ("29 s", "0.5 s").
func durations(t *testing.T, s string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, m := range durationText.FindAllStringSubmatch(s, -1) {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		unit := time.Second
		if m[2] == "ms" {
			unit = time.Millisecond
		}
		out = append(out, time.Duration(f*float64(unit)))
	}
	return out
}

// TestDeadlineHierarchy: the chain of deadlines from API Gateway's quota inward, each
// strictly inside the one around it, with the values the transformed template (both
// parameter sets) and shared/deadlines give, and docs/operations.md's table naming each
// with its value and the limit it sits in.
func TestDeadlineHierarchy(t *testing.T) {
	rows := deadlineTable(t)
	for _, set := range paramSets {
		t.Run(set, func(t *testing.T) {
			cfn, _ := transformed(t, set)
			stack, err := samtemplate.NewStack(cfn, paramsPath(set), "mc", "eu-central-1", "123456789012")
			if err != nil {
				t.Fatal(err)
			}
			seconds := func(v any) time.Duration {
				t.Helper()
				s, err := stack.ResolveString(v)
				if err != nil {
					// A number resolves to itself.
					s = fmt.Sprint(v)
				}
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("%v is not a number: %v", v, err)
				}
				return time.Duration(f * float64(time.Second))
			}
			maxValue := func(param string) time.Duration {
				t.Helper()
				p, ok := cfn.Parameters[param]
				if !ok {
					t.Fatalf("no parameter %s", param)
				}
				max := seconds(p["MaxValue"])
				if v := seconds(map[string]any{"Ref": param}); v > max {
					t.Errorf("%s is %v, over its MaxValue %v", param, v, max)
				}
				return max
			}

			// API Gateway's wait, from every route's integration.
			body, _ := cfn.Resources["HttpApi"].Properties["Body"].(map[string]any)
			paths, _ := body["paths"].(map[string]any)
			var integration time.Duration
			for path, ops := range paths {
				for method, op := range ops.(map[string]any) {
					in, _ := op.(map[string]any)["x-amazon-apigateway-integration"].(map[string]any)
					if in == nil {
						continue
					}
					d := seconds(in["timeoutInMillis"]) / 1000
					if integration == 0 {
						integration = d
					} else if d != integration {
						t.Errorf("%s %s waits %v, another route %v", method, path, d, integration)
					}
				}
			}
			if integration == 0 || integration >= apiGatewayQuota {
				t.Errorf("API Gateway's wait %v, not within its quota of %v", integration, apiGatewayQuota)
			}
			if max := seconds(cfn.Parameters["IntegrationTimeoutMillis"]["MaxValue"]) / 1000; max >= apiGatewayQuota {
				t.Errorf("IntegrationTimeoutMillis may be set to %v, not within the quota of %v", max, apiGatewayQuota)
			}

			// Each function's timeout, its DATABASE_URL's connect timeout and session
			// settings.
			timeouts := map[string]time.Duration{}
			shortest := time.Duration(0)
			connect := maxValue("DbConnectTimeout")
			for name, id := range lambdas(t, cfn) {
				props := cfn.Resources[id].Properties
				d := seconds(props["Timeout"])
				timeouts[name] = d
				if shortest == 0 || d < shortest {
					shortest = d
				}
				if d >= integration {
					t.Errorf("%s: timeout %v, not within API Gateway's wait %v", name, d, integration)
				}
				if w := d - deadlines.LambdaMargin; w >= deadlines.RequestTimeout {
					t.Errorf("%s: its work's end %v is not within REQUEST_TIMEOUT's %v, which would bind first", name, w, deadlines.RequestTimeout)
				}
				env, _ := props["Environment"].(map[string]any)
				vars, _ := env["Variables"].(map[string]any)
				raw, err := stack.ResolveString(vars["DATABASE_URL"])
				if err != nil {
					t.Fatalf("%s: DATABASE_URL: %v", name, err)
				}
				u, err := url.Parse(raw)
				if err != nil {
					t.Fatalf("%s: DATABASE_URL %q: %v", name, raw, err)
				}
				q := u.Query()
				if got := q.Get("connect_timeout"); got == "" || seconds(got) > connect {
					t.Errorf("%s: connect_timeout %q, want at most DbConnectTimeout's %v", name, got, connect)
				}
				for k := range q {
					if k == "options" || k == "statement_timeout" {
						t.Errorf("%s: DATABASE_URL sets %s, over the code's statement_timeout", name, k)
					}
				}
			}
			borrow := maxValue("ProxyBorrowTimeout")
			if tg, ok := cfn.Resources["DbProxyTargetGroup"]; ok && stack.Exists("DbProxyTargetGroup") {
				pool, _ := tg.Properties["ConnectionPoolConfigurationInfo"].(map[string]any)
				if got := seconds(pool["ConnectionBorrowTimeout"]); got > borrow {
					t.Errorf("the proxy's borrow timeout %v, over ProxyBorrowTimeout's %v", got, borrow)
				}
			}
			if want := strconv.FormatInt(deadlines.StatementTimeout.Milliseconds(), 10); postgres.SessionDefault("statement_timeout") != want {
				t.Errorf("the connections' statement_timeout %q ms, want deadlines.StatementTimeout's %s", postgres.SessionDefault("statement_timeout"), want)
			}

			work := shortest - deadlines.LambdaMargin
			// Each limit, its value and the one it sits strictly inside.
			chain := []struct {
				key           string // the table's row, by what defines it
				value, parent time.Duration
				within        string // the parent's row
			}{
				{"IntegrationTimeoutMillis", integration, apiGatewayQuota, ""},
				{"deadlines.LambdaMargin", deadlines.LambdaMargin, shortest, "Timeout"},
				{"deadlines.Grace", deadlines.Grace, deadlines.LambdaMargin, "Timeout"},
				{"deadlines.Budget", deadlines.Budget, work - deadlines.Grace, "deadlines.LambdaMargin"},
				{"deadlines.ProbeTimeout", deadlines.ProbeTimeout, deadlines.Budget, "deadlines.Budget"},
				{"DbConnectTimeout", connect, deadlines.Budget, "deadlines.Budget"},
				{"ProxyBorrowTimeout", borrow, deadlines.Budget, "deadlines.Budget"},
				{"deadlines.StatementTimeout", deadlines.StatementTimeout, deadlines.CallTimeout, "deadlines.CallTimeout"},
				{"deadlines.CallTimeout", deadlines.CallTimeout, work, "deadlines.LambdaMargin"},
				{"deadlines.RequestTimeout", deadlines.RequestTimeout, deadlines.WriteTimeout, ""},
			}
			seen := map[string]bool{"Timeout": true}
			for _, c := range chain {
				seen[c.key] = true
				if c.value <= 0 || c.value >= c.parent {
					t.Errorf("%s is %v, not strictly within %v", c.key, c.value, c.parent)
				}
				r, ok := rows[c.key]
				if !ok {
					t.Errorf("docs/operations.md's deadlines have no row defined by %s", c.key)
					continue
				}
				if got := durations(t, r.value); len(got) != 1 || got[0] != c.value {
					t.Errorf("the row %q says %q, the code and template %v", r.limit, r.value, c.value)
				}
				if c.within != "" && !strings.Contains(r.within, rows[c.within].limit) {
					t.Errorf("the row %q sits within %q, want %q", r.limit, r.within, rows[c.within].limit)
				}
			}
			// Within a request the budget ends a statement's wait before the database's
			// own guard.
			if deadlines.Budget >= deadlines.StatementTimeout {
				t.Errorf("the budget %v does not end before statement_timeout %v", deadlines.Budget, deadlines.StatementTimeout)
			}
			if got := durations(t, rows["deadlines.RequestTimeout"].within); len(got) != 1 || got[0] != deadlines.WriteTimeout {
				t.Errorf("REQUEST_TIMEOUT's row sits within %q, the local server's write timeout is %v", rows["deadlines.RequestTimeout"].within, deadlines.WriteTimeout)
			}

			// The functions' timeouts, as the table lists them: "10 s tags, publishers; 15 s cdn".
			listed := map[string]time.Duration{}
			for _, part := range strings.Split(rows["Timeout"].value, ";") {
				d := durations(t, part)
				if len(d) != 1 {
					t.Fatalf("function timeouts %q: want one duration in %q", rows["Timeout"].value, part)
				}
				names := durationText.ReplaceAllString(part, "")
				for _, n := range strings.Split(names, ",") {
					listed[strings.TrimSpace(n)] = d[0]
				}
			}
			if fmt.Sprint(sorted(listed)) != fmt.Sprint(sorted(timeouts)) {
				t.Errorf("the table's function timeouts %v, the template's %v", sorted(listed), sorted(timeouts))
			}
			for key := range rows {
				if !seen[key] {
					t.Errorf("docs/operations.md's deadlines have a row defined by %s, which this test does not hold", key)
				}
			}
		})
	}
}

func sorted(m map[string]time.Duration) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v.String())
	}
	sort.Strings(out)
	return out
}
