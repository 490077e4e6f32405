// Package rollback moves every function's live alias back to the version of the
// previous release: seconds, no build, no CloudFormation, no canary (the alarms that
// would judge a canary are the ones firing).
//
// A release publishes one version of every function, described by the release
// (template.yaml's Release, AutoPublishCodeSha256 and VersionDescription). For each
// function the target is the newest version older than the live one whose release
// differs from the live one's. The plan (function, from, to) is written to a file
// before the first alias moves; a run that finds a plan resumes it instead of planning
// again, so an interrupted rollback finishes where it was meant to rather than going
// one release further back for the functions it had already moved. The file is
// removed once every alias is where the plan says.
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Lambda is the part of the Lambda API a rollback uses.
type Lambda interface {
	GetAlias(context.Context, *lambda.GetAliasInput, ...func(*lambda.Options)) (*lambda.GetAliasOutput, error)
	ListVersionsByFunction(context.Context, *lambda.ListVersionsByFunctionInput, ...func(*lambda.Options)) (*lambda.ListVersionsByFunctionOutput, error)
	UpdateAlias(context.Context, *lambda.UpdateAliasInput, ...func(*lambda.Options)) (*lambda.UpdateAliasOutput, error)
}

// Move is one alias's change.
type Move struct {
	Function    string `json:"function"`
	From        string `json:"from"`
	FromRelease string `json:"from_release"`
	To          string `json:"to"`
	ToRelease   string `json:"to_release"`
}

// Plan is what a rollback does; it is kept in a file until done.
type Plan struct {
	Alias string `json:"alias"`
	Moves []Move `json:"moves"`
}

// ErrCanaryInProgress: an alias still splits traffic between two versions, so a
// CodeDeploy deployment is shifting it; stopping that deployment rolls it back.
var ErrCanaryInProgress = errors.New("a deployment is in progress")

// Make plans the rollback of the alias of each function.
func Make(ctx context.Context, l Lambda, alias string, functions []string) (Plan, error) {
	p := Plan{Alias: alias}
	for _, fn := range functions {
		a, err := l.GetAlias(ctx, &lambda.GetAliasInput{FunctionName: aws.String(fn), Name: aws.String(alias)})
		if err != nil {
			return Plan{}, fmt.Errorf("%s: alias %s: %w", fn, alias, err)
		}
		if a.RoutingConfig != nil && len(a.RoutingConfig.AdditionalVersionWeights) > 0 {
			return Plan{}, fmt.Errorf("%s: %w (the alias splits traffic %v): stop it with `aws deploy stop-deployment --auto-rollback-enabled --deployment-id <id>`, which rolls it back",
				fn, ErrCanaryInProgress, a.RoutingConfig.AdditionalVersionWeights)
		}
		live := aws.ToString(a.FunctionVersion)
		versions, err := listVersions(ctx, l, fn)
		if err != nil {
			return Plan{}, err
		}
		release, ok := versions[live]
		if !ok {
			return Plan{}, fmt.Errorf("%s: the alias points at version %s, which is not published", fn, live)
		}
		target := ""
		liveN, _ := strconv.Atoi(live)
		best := 0
		for v, rel := range versions {
			n, err := strconv.Atoi(v)
			if err != nil || n >= liveN || rel == release || n <= best {
				continue
			}
			best, target = n, v
		}
		if target == "" {
			return Plan{}, fmt.Errorf("%s: no version older than %s (release %q) from another release", fn, live, release)
		}
		p.Moves = append(p.Moves, Move{Function: fn, From: live, FromRelease: release, To: target, ToRelease: versions[target]})
	}
	return p, nil
}

// listVersions returns the function's published versions and their descriptions
// (releases).
func listVersions(ctx context.Context, l Lambda, fn string) (map[string]string, error) {
	out := map[string]string{}
	var marker *string
	for {
		page, err := l.ListVersionsByFunction(ctx, &lambda.ListVersionsByFunctionInput{FunctionName: aws.String(fn), Marker: marker})
		if err != nil {
			return nil, fmt.Errorf("%s: versions: %w", fn, err)
		}
		for _, v := range page.Versions {
			if ver := aws.ToString(v.Version); ver != "$LATEST" {
				out[ver] = aws.ToString(v.Description)
			}
		}
		if page.NextMarker == nil {
			return out, nil
		}
		marker = page.NextMarker
	}
}

// Apply sets each alias to its target version, with no traffic split. Setting an alias
// to a version is idempotent, so applying a plan again is safe.
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
		fmt.Fprintf(log, "%s: %s %s (release %s) -> %s (release %s)\n", m.Function, p.Alias, m.From, m.FromRelease, m.To, m.ToRelease)
	}
	return nil
}

// Run rolls back, resuming the plan in planFile when one is there.
func Run(ctx context.Context, l Lambda, alias string, functions []string, planFile string, log io.Writer) error {
	var p Plan
	b, err := os.ReadFile(planFile)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("read the unfinished plan %s: %w", planFile, err)
		}
		fmt.Fprintf(log, "resuming the unfinished rollback in %s\n", planFile)
	case errors.Is(err, os.ErrNotExist):
		if p, err = Make(ctx, l, alias, functions); err != nil {
			return err
		}
		sort.Slice(p.Moves, func(i, j int) bool { return p.Moves[i].Function < p.Moves[j].Function })
		b, _ := json.MarshalIndent(p, "", "  ")
		if err := os.MkdirAll(filepath.Dir(planFile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(planFile, b, 0o644); err != nil {
			return err
		}
	default:
		return err
	}
	if err := Apply(ctx, l, p, log); err != nil {
		return fmt.Errorf("%w (run it again: it resumes %s)", err, planFile)
	}
	return os.Remove(planFile)
}
