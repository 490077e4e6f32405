// Package rollback moves every function's live alias back to the last release that went
// live before the current one, in seconds (no build, no canary: the alarms that would
// judge a canary are the ones firing), and names the commit of that release, which make
// rollback then deploys through CloudFormation all at once so that the stack, CodeDeploy
// and the aliases agree again and the next deploy shifts from it.
//
// Which releases went live is recorded, not guessed: make deploy, once sam deploy has
// succeeded (the canary passed), records each function's live version and the commit it
// was built from (Record) in the history alias: an alias of each function that
// CloudFormation does not manage, pointing at the newest recorded version (which keeps
// it from being deleted), whose description lists the recorded versions newest first.
// A version whose canary was rolled back never went live and is never recorded, so it
// is never a target. A rollback drops the versions it leaves from the history, so a
// second rollback goes one more release back.
//
// The plan (function, from, to) is written to a file before the first alias moves; a
// run that finds a plan resumes it instead of planning again, so an interrupted rollback
// finishes where it was meant to rather than going one release further back for the
// functions it had already moved. The file is removed once every alias is where the plan
// says, and by the record of a deploy that succeeded; a plan whose aliases have moved
// since is refused, never resumed.
package rollback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// HistoryAlias is the alias whose description is a function's recorded releases.
const HistoryAlias = "released"

// maxHistory bounds the history to what an alias's description holds (256 characters).
const maxHistory = 256

// Lambda is the part of the Lambda API a rollback uses.
type Lambda interface {
	GetAlias(context.Context, *lambda.GetAliasInput, ...func(*lambda.Options)) (*lambda.GetAliasOutput, error)
	CreateAlias(context.Context, *lambda.CreateAliasInput, ...func(*lambda.Options)) (*lambda.CreateAliasOutput, error)
	UpdateAlias(context.Context, *lambda.UpdateAliasInput, ...func(*lambda.Options)) (*lambda.UpdateAliasOutput, error)
	ListAliases(context.Context, *lambda.ListAliasesInput, ...func(*lambda.Options)) (*lambda.ListAliasesOutput, error)
	ListVersionsByFunction(context.Context, *lambda.ListVersionsByFunctionInput, ...func(*lambda.Options)) (*lambda.ListVersionsByFunctionOutput, error)
	GetFunctionConfiguration(context.Context, *lambda.GetFunctionConfigurationInput, ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error)
	DeleteFunction(context.Context, *lambda.DeleteFunctionInput, ...func(*lambda.Options)) (*lambda.DeleteFunctionOutput, error)
}

// Entry is one recorded release of a function: the version that went live and the
// commit it was built from.
type Entry struct {
	Version string
	Commit  string
}

// Move is one alias's change.
type Move struct {
	Function string `json:"function"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// Plan is what a rollback does; it is kept in a file until done. Commit is the target
// release's, the same for every function.
type Plan struct {
	Alias  string `json:"alias"`
	Commit string `json:"commit"`
	Moves  []Move `json:"moves"`
}

// ErrCanaryInProgress: an alias still splits traffic between two versions, so a
// CodeDeploy deployment is shifting it; stopping that deployment rolls it back.
var ErrCanaryInProgress = errors.New("a deployment is in progress")

// ErrNoEarlierRelease: the history holds no release before the live one.
var ErrNoEarlierRelease = errors.New("no earlier release recorded")

// ErrNotDeployed: a live version is not of the release being recorded, so sam deploy
// returned without deploying it (a change set declined at its prompt exits 0).
var ErrNotDeployed = errors.New("the release is not live")

// ErrStalePlan: an unfinished plan's aliases have moved since it was written (a deploy
// came after the interrupted rollback), so resuming it would move them somewhere else.
var ErrStalePlan = errors.New("the unfinished plan no longer applies")

// live returns the version an alias sends all traffic to.
func live(ctx context.Context, l Lambda, fn, alias string) (string, error) {
	a, err := l.GetAlias(ctx, &lambda.GetAliasInput{FunctionName: aws.String(fn), Name: aws.String(alias)})
	if err != nil {
		return "", fmt.Errorf("%s: alias %s: %w", fn, alias, err)
	}
	if a.RoutingConfig != nil && len(a.RoutingConfig.AdditionalVersionWeights) > 0 {
		return "", fmt.Errorf("%s: %w (the alias splits traffic %v): stop it with `aws deploy stop-deployment --auto-rollback-enabled --deployment-id <id>`, which rolls it back",
			fn, ErrCanaryInProgress, a.RoutingConfig.AdditionalVersionWeights)
	}
	return aws.ToString(a.FunctionVersion), nil
}

// History returns a function's recorded releases, newest first (none when nothing was
// recorded yet).
func History(ctx context.Context, l Lambda, fn string) ([]Entry, error) {
	a, err := l.GetAlias(ctx, &lambda.GetAliasInput{FunctionName: aws.String(fn), Name: aws.String(HistoryAlias)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: alias %s: %w", fn, HistoryAlias, err)
	}
	var h []Entry
	for _, f := range strings.Fields(aws.ToString(a.Description)) {
		v, c, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("%s: alias %s: %q is not version:commit", fn, HistoryAlias, f)
		}
		h = append(h, Entry{v, c})
	}
	return h, nil
}

// writeHistory stores h (newest first, trimmed to what the description holds) and
// points the history alias at its newest version.
func writeHistory(ctx context.Context, l Lambda, fn string, h []Entry, exists bool) error {
	var parts []string
	n := 0
	for _, e := range h {
		s := e.Version + ":" + e.Commit
		if n+len(s)+1 > maxHistory {
			break
		}
		parts, n = append(parts, s), n+len(s)+1
	}
	desc := strings.Join(parts, " ")
	var err error
	if exists {
		_, err = l.UpdateAlias(ctx, &lambda.UpdateAliasInput{FunctionName: aws.String(fn), Name: aws.String(HistoryAlias),
			FunctionVersion: aws.String(h[0].Version), Description: aws.String(desc)})
	} else {
		_, err = l.CreateAlias(ctx, &lambda.CreateAliasInput{FunctionName: aws.String(fn), Name: aws.String(HistoryAlias),
			FunctionVersion: aws.String(h[0].Version), Description: aws.String(desc)})
	}
	if err != nil {
		return fmt.Errorf("%s: record in alias %s: %w", fn, HistoryAlias, err)
	}
	return nil
}

// Record adds each function's live version, built from commit, to its history: make
// deploy calls it once sam deploy succeeded, so only releases that went live are there.
// Recording the same live version again changes nothing but its commit.
//
// sam deploy also exits 0 when the operator declines the change set, having deployed
// nothing, so every live version must be of release (template.yaml's VersionDescription)
// before anything is written: recording the old versions under the new commit would make
// a later rollback deploy a commit that never went live.
func Record(ctx context.Context, l Lambda, alias string, functions []string, commit, release string, log io.Writer) error {
	if commit == "" || strings.ContainsAny(commit, ": \t\n") {
		return fmt.Errorf("record: commit %q is no commit id", commit)
	}
	if release == "" {
		return errors.New("record: no release to check the live versions against")
	}
	versions := make([]string, len(functions))
	for i, fn := range functions {
		v, err := live(ctx, l, fn, alias)
		if err != nil {
			return err
		}
		c, err := l.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn), Qualifier: aws.String(v)})
		if err != nil {
			return fmt.Errorf("%s: version %s: %w", fn, v, err)
		}
		if d := aws.ToString(c.Description); d != release {
			return fmt.Errorf("%s: %w: %s is on version %s, of release %q, not %q (was the change set declined?); nothing recorded",
				fn, ErrNotDeployed, alias, v, d, release)
		}
		versions[i] = v
	}
	for i, fn := range functions {
		v := versions[i]
		h, err := History(ctx, l, fn)
		if err != nil {
			return err
		}
		exists := h != nil
		// The same commit deployed again (make rollback's deploy of the release it
		// went back to) replaces the newest entry: going back from it to the same code
		// would be no rollback.
		if len(h) > 0 && h[0].Commit == commit {
			h = h[1:]
		}
		kept := []Entry{{v, commit}}
		for _, e := range h {
			if e.Version != v {
				kept = append(kept, e)
			}
		}
		if err := writeHistory(ctx, l, fn, kept, exists); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: recorded version %s (commit %s) as live\n", fn, v, commit)
	}
	return nil
}

// Make plans the rollback of the alias of each function to the release recorded before
// its live one.
func Make(ctx context.Context, l Lambda, alias string, functions []string) (Plan, error) {
	p := Plan{Alias: alias}
	for _, fn := range functions {
		v, err := live(ctx, l, fn, alias)
		if err != nil {
			return Plan{}, err
		}
		h, err := History(ctx, l, fn)
		if err != nil {
			return Plan{}, err
		}
		i := indexOf(h, v)
		switch {
		case i < 0:
			return Plan{}, fmt.Errorf("%s: live version %s is not a recorded release (make deploy records each release that goes live; history %v)", fn, v, h)
		case i+1 == len(h):
			return Plan{}, fmt.Errorf("%s: %w before version %s (make redeploy VERSION=<tag> deploys an older one)", fn, ErrNoEarlierRelease, v)
		}
		to := h[i+1]
		if p.Commit == "" {
			p.Commit = to.Commit
		} else if p.Commit != to.Commit {
			return Plan{}, fmt.Errorf("%s: the release before the live one is commit %s, the other functions' %s: a make deploy did not finish recording; make redeploy VERSION=<tag>", fn, to.Commit, p.Commit)
		}
		p.Moves = append(p.Moves, Move{Function: fn, From: v, To: to.Version})
	}
	return p, nil
}

func indexOf(h []Entry, version string) int {
	for i, e := range h {
		if e.Version == version {
			return i
		}
	}
	return -1
}

// Apply sets each alias to its target version, with no traffic split, and drops the
// versions it leaves from the function's history. Both are idempotent, so applying a
// plan again is safe.
func Apply(ctx context.Context, l Lambda, p Plan, log io.Writer) error {
	for _, m := range p.Moves {
		if _, err := l.UpdateAlias(ctx, &lambda.UpdateAliasInput{
			FunctionName:    aws.String(m.Function),
			Name:            aws.String(p.Alias),
			FunctionVersion: aws.String(m.To),
			RoutingConfig:   &types.AliasRoutingConfiguration{AdditionalVersionWeights: map[string]float64{}},
		}); err != nil {
			return fmt.Errorf("%s: move %s to %s: %w", m.Function, p.Alias, m.To, err)
		}
		fmt.Fprintf(log, "%s: %s %s -> %s (commit %s)\n", m.Function, p.Alias, m.From, m.To, p.Commit)
		h, err := History(ctx, l, m.Function)
		if err != nil {
			return err
		}
		if i := indexOf(h, m.To); i > 0 {
			if err := writeHistory(ctx, l, m.Function, h[i:], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run rolls back, resuming the plan in planFile when one is there, and returns the
// plan it carried out.
func Run(ctx context.Context, l Lambda, alias string, functions []string, planFile string, log io.Writer) (Plan, error) {
	var p Plan
	b, err := os.ReadFile(planFile)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &p); err != nil {
			return Plan{}, fmt.Errorf("read the unfinished plan %s: %w", planFile, err)
		}
		if err := applies(ctx, l, p, planFile); err != nil {
			return Plan{}, err
		}
		fmt.Fprintf(log, "resuming the unfinished rollback in %s\n", planFile)
	case errors.Is(err, os.ErrNotExist):
		if p, err = Make(ctx, l, alias, functions); err != nil {
			return Plan{}, err
		}
		sort.Slice(p.Moves, func(i, j int) bool { return p.Moves[i].Function < p.Moves[j].Function })
		b, _ := json.MarshalIndent(p, "", "  ")
		if err := os.MkdirAll(filepath.Dir(planFile), 0o755); err != nil {
			return Plan{}, err
		}
		if err := os.WriteFile(planFile, b, 0o644); err != nil {
			return Plan{}, err
		}
	default:
		return Plan{}, err
	}
	if err := Apply(ctx, l, p, log); err != nil {
		return Plan{}, fmt.Errorf("%w (run it again: it resumes %s)", err, planFile)
	}
	return p, os.Remove(planFile)
}

// applies checks that every alias of an unfinished plan is still where the plan left it:
// at its move's From (not moved yet) or To (moved).
func applies(ctx context.Context, l Lambda, p Plan, planFile string) error {
	for _, m := range p.Moves {
		v, err := live(ctx, l, m.Function, p.Alias)
		if err != nil {
			return err
		}
		if v != m.From && v != m.To {
			return fmt.Errorf("%s: %w: %s is on version %s, the plan in %s moves it from %s to %s; remove the file to plan anew",
				m.Function, ErrStalePlan, p.Alias, v, planFile, m.From, m.To)
		}
	}
	return nil
}

// Prune deletes each function's versions that nothing can go back to: neither an
// alias's (live, its canary's, the history's) nor a recorded release, and older than the
// newest of those (a newer one may be a deploy under way). Every release publishes a
// version of every function and CloudFormation retains them, so without it they pile up
// against the account's code storage (75 GB per region). make deploy prunes after it
// records.
func Prune(ctx context.Context, l Lambda, functions []string, log io.Writer) error {
	for _, fn := range functions {
		keep := map[string]bool{}
		h, err := History(ctx, l, fn)
		if err != nil {
			return err
		}
		for _, e := range h {
			keep[e.Version] = true
		}
		aliases := lambda.NewListAliasesPaginator(l, &lambda.ListAliasesInput{FunctionName: aws.String(fn)})
		for aliases.HasMorePages() {
			page, err := aliases.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("%s: aliases: %w", fn, err)
			}
			for _, a := range page.Aliases {
				keep[aws.ToString(a.FunctionVersion)] = true
				if a.RoutingConfig != nil {
					for v := range a.RoutingConfig.AdditionalVersionWeights {
						keep[v] = true
					}
				}
			}
		}
		newest := 0
		for v := range keep {
			if n, err := strconv.Atoi(v); err == nil && n > newest {
				newest = n
			}
		}
		var drop []string
		versions := lambda.NewListVersionsByFunctionPaginator(l, &lambda.ListVersionsByFunctionInput{FunctionName: aws.String(fn)})
		for versions.HasMorePages() {
			page, err := versions.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("%s: versions: %w", fn, err)
			}
			for _, v := range page.Versions {
				ver := aws.ToString(v.Version)
				if n, err := strconv.Atoi(ver); err == nil && n < newest && !keep[ver] {
					drop = append(drop, ver)
				}
			}
		}
		for _, v := range drop {
			if _, err := l.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(fn), Qualifier: aws.String(v)}); err != nil {
				return fmt.Errorf("%s: delete version %s: %w", fn, v, err)
			}
		}
		if len(drop) > 0 {
			fmt.Fprintf(log, "%s: deleted versions %s (no alias or recorded release)\n", fn, strings.Join(drop, " "))
		}
	}
	return nil
}
