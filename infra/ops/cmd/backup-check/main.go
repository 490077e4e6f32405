// Command backup-check refuses a deploy whose database could not be restored: make
// deploy runs it after the lint gate, with the environment's DbInstanceIdentifier or
// DbClusterIdentifier. It reads the database from RDS (DescribeDBInstances,
// DescribeDBClusters) and fails, saying the aws command that fixes it, unless the
// database keeps automated backups for at least -days days (the window a
// point-in-time restore can go back in: docs/operations.md) and has deletion
// protection on (a deleted database takes its automated backups with it unless they
// are retained).
//
//	AWS_REGION=eu-central-1 go run ./infra/ops/cmd/backup-check -env prod -instance media-catalog-prod
//
// An Aurora cluster's instances have the cluster's backups, so -cluster names the
// cluster. The credentials need rds:DescribeDBInstances or rds:DescribeDBClusters.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rds"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
)

// rdsEndpointEnv are the RDS endpoint overrides (the tests' moto server).
var rdsEndpointEnv = []string{"AWS_ENDPOINT_URL_RDS", "AWS_ENDPOINT_URL"}

func main() {
	cmdrun.Main("backup-check", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("backup-check", flag.ContinueOnError)
	fs.SetOutput(out)
	env := fs.String("env", "", "the environment (for the message)")
	instance := fs.String("instance", "", "the RDS instance (DbInstanceIdentifier)")
	cluster := fs.String("cluster", "", "the Aurora cluster (DbClusterIdentifier)")
	days := fs.Int("days", 7, "the fewest days of automated backups allowed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*instance == "") == (*cluster == "") {
		return fmt.Errorf("backups of ENV=%s cannot be checked: set one of DbInstanceIdentifier and DbClusterIdentifier in samconfig.toml "+
			"(with an existing proxy too: the database behind DbProxyEndpoint), so the deploy can check its backups and the stack can alarm on their failure", *env)
	}
	region := getenv("AWS_REGION")
	if region == "" {
		return errors.New("AWS_REGION is not set")
	}
	endpoint := config.FirstEnv(getenv, rdsEndpointEnv)
	client := rds.NewFromConfig(awsconfig.ForEndpoint(region, endpoint, getenv), func(o *rds.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	db, err := describe(ctx, client, *instance, *cluster)
	if err != nil {
		return err
	}
	var wrong []string
	if db.retention < *days {
		wrong = append(wrong, fmt.Sprintf("keeps automated backups %d days (at least %d needed: a point-in-time restore goes back no further)", db.retention, *days))
	}
	if !db.protected {
		wrong = append(wrong, "has deletion protection off (deleting it would take its automated backups along)")
	}
	if len(wrong) == 0 {
		fmt.Fprintf(out, "backup-check: %s %s keeps automated backups %d days, deletion protection on\n", db.kind, db.id, db.retention)
		return nil
	}
	return fmt.Errorf("the deploy of ENV=%s is refused: %s %s %s. Fix it, then deploy again:\n  %s", *env, db.kind, db.id,
		strings.Join(wrong, " and "), db.fix(region, *days))
}

// database is what the check reads of an instance or a cluster.
type database struct {
	kind, id  string // "RDS instance" or "Aurora cluster"
	cluster   bool
	retention int
	protected bool
}

// fix is the aws command that sets both (changing the retention from a non-zero value
// takes effect at once, without an outage).
func (d database) fix(region string, days int) string {
	if d.cluster {
		return fmt.Sprintf("aws rds modify-db-cluster --region %s --db-cluster-identifier %s --backup-retention-period %d --deletion-protection --apply-immediately", region, d.id, max(days, d.retention))
	}
	return fmt.Sprintf("aws rds modify-db-instance --region %s --db-instance-identifier %s --backup-retention-period %d --deletion-protection --apply-immediately", region, d.id, max(days, d.retention))
}

func describe(ctx context.Context, client *rds.Client, instance, cluster string) (database, error) {
	if cluster != "" {
		out, err := client.DescribeDBClusters(ctx, &rds.DescribeDBClustersInput{DBClusterIdentifier: aws.String(cluster)})
		if err != nil {
			return database{}, fmt.Errorf("read the Aurora cluster %s (DbClusterIdentifier): %w", cluster, err)
		}
		if len(out.DBClusters) != 1 {
			return database{}, fmt.Errorf("no Aurora cluster %s (DbClusterIdentifier)", cluster)
		}
		c := out.DBClusters[0]
		return database{kind: "Aurora cluster", id: cluster, cluster: true, retention: int(aws.ToInt32(c.BackupRetentionPeriod)),
			protected: aws.ToBool(c.DeletionProtection)}, nil
	}
	out, err := client.DescribeDBInstances(ctx, &rds.DescribeDBInstancesInput{DBInstanceIdentifier: aws.String(instance)})
	if err != nil {
		return database{}, fmt.Errorf("read the RDS instance %s (DbInstanceIdentifier): %w", instance, err)
	}
	if len(out.DBInstances) != 1 {
		return database{}, fmt.Errorf("no RDS instance %s (DbInstanceIdentifier)", instance)
	}
	i := out.DBInstances[0]
	return database{kind: "RDS instance", id: instance, retention: int(aws.ToInt32(i.BackupRetentionPeriod)),
		protected: aws.ToBool(i.DeletionProtection)}, nil
}
