package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rds"

	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/shared/awsconfig"
)

// databases creates, in the RDS of the moto server at url, an instance and an Aurora
// cluster per case: name, retention days, deletion protection.
func databases(t *testing.T, url string, instances, clusters map[string][2]int) {
	t.Helper()
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	c := rds.NewFromConfig(awsconfig.ForEndpoint("eu-central-1", url, func(k string) string { return env[k] }),
		func(o *rds.Options) { o.BaseEndpoint = aws.String(url) })
	ctx := context.Background()
	for id, v := range instances {
		if _, err := c.CreateDBInstance(ctx, &rds.CreateDBInstanceInput{DBInstanceIdentifier: aws.String(id), Engine: aws.String("postgres"),
			DBInstanceClass: aws.String("db.t4g.medium"), AllocatedStorage: aws.Int32(20), MasterUsername: aws.String("owner"),
			MasterUserPassword: aws.String("password-123"), BackupRetentionPeriod: aws.Int32(int32(v[0])), DeletionProtection: aws.Bool(v[1] == 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for id, v := range clusters {
		if _, err := c.CreateDBCluster(ctx, &rds.CreateDBClusterInput{DBClusterIdentifier: aws.String(id), Engine: aws.String("aurora-postgresql"),
			MasterUsername: aws.String("owner"), MasterUserPassword: aws.String("password-123"),
			BackupRetentionPeriod: aws.Int32(int32(v[0])), DeletionProtection: aws.Bool(v[1] == 1)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBackupCheck: a database with at least 7 days of automated backups and deletion
// protection passes; one without either is refused with the aws command that fixes
// it, as is an unknown one and an environment that names none (RDS's wire format:
// moto's server, which keeps BackupRetentionPeriod and DeletionProtection).
func TestBackupCheck(t *testing.T) {
	url := motoserver.Start(t)
	databases(t, url, map[string][2]int{"good": {7, 1}, "short": {1, 1}, "unprotected": {35, 0}, "neither": {0, 0}},
		map[string][2]int{"aurora-good": {14, 1}, "aurora-short": {3, 1}})
	env := map[string]string{"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL_RDS": url}
	for _, tc := range []struct {
		args []string
		want string // in the output, or in the error when fail
		fail bool
	}{
		{[]string{"-instance", "good"}, "RDS instance good keeps automated backups 7 days, deletion protection on", false},
		{[]string{"-cluster", "aurora-good"}, "Aurora cluster aurora-good keeps automated backups 14 days", false},
		{[]string{"-instance", "short"}, "RDS instance short keeps automated backups 1 days (at least 7 needed: a point-in-time restore goes back no further). Fix it, then deploy again:\n" +
			"  aws rds modify-db-instance --region eu-central-1 --db-instance-identifier short --backup-retention-period 7 --deletion-protection --apply-immediately", true},
		{[]string{"-instance", "unprotected"}, "has deletion protection off (deleting it would take its automated backups along). Fix it, then deploy again:\n" +
			"  aws rds modify-db-instance --region eu-central-1 --db-instance-identifier unprotected --backup-retention-period 35 --deletion-protection --apply-immediately", true},
		{[]string{"-instance", "neither"}, "keeps automated backups 0 days (at least 7 needed: a point-in-time restore goes back no further) and has deletion protection off", true},
		{[]string{"-cluster", "aurora-short"}, "aws rds modify-db-cluster --region eu-central-1 --db-cluster-identifier aurora-short --backup-retention-period 7", true},
		{[]string{"-instance", "missing"}, "read the RDS instance missing (DbInstanceIdentifier)", true},
		{[]string{"-env", "prod"}, "backups of ENV=prod cannot be checked: set one of DbInstanceIdentifier and DbClusterIdentifier", true},
		{[]string{"-instance", "good", "-cluster", "aurora-good"}, "set one of DbInstanceIdentifier and DbClusterIdentifier", true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"-env", "prod"}, tc.args...), func(k string) string { return env[k] }, &out)
			got := out.String()
			if err != nil {
				got = err.Error()
			}
			if (err != nil) != tc.fail || !strings.Contains(got, tc.want) {
				t.Errorf("error %v, output %q; want failure %v with %q", err, out.String(), tc.fail, tc.want)
			}
		})
	}
}
