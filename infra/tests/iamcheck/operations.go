package iamcheck

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/mediacatalog/service/shared/telemetry"
)

// Account is where a call is made: the account and region of the stack, the RDS
// proxies' resource ids by endpoint host, and the customer-managed KMS keys of the
// secrets that have one.
type Account struct {
	ID        string
	Region    string
	Partition string
	// Proxies maps an RDS Proxy endpoint's host name to the proxy's resource id
	// (prx-...): an IAM token names the host, IAM the resource id.
	Proxies map[string]string
	// SecretKeys maps a secret's ARN to the ARN of the customer-managed key it is
	// encrypted with. A secret under AWS's own key (aws/secretsmanager) is not listed:
	// that key's policy lets every principal of the account use it through Secrets
	// Manager, so no IAM grant is involved.
	SecretKeys map[string]string
}

// operation turns one call into the requests AWS authorizes for it.
type operation func(a Account, c telemetry.AWSCall) ([]Request, error)

// operations are the calls the service makes, by the SDK's service id and operation
// name, each with the IAM actions AWS checks and the resources they name (the Service
// Authorization Reference of each service). A call missing here fails the IAM test:
// a new SDK call needs its entry, and then its grant.
var operations = map[string]operation{
	"S3.PutObject": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.PutObjectInput)
		return []Request{{Action: "s3:PutObject", Resource: a.object(in.Bucket, in.Key)}}, nil
	},
	// S3 answers a missing key 404 only to a caller who may list the bucket (403
	// otherwise), so that answer is an s3:ListBucket check too, with no prefix.
	"S3.GetObject": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.GetObjectInput)
		action := "s3:GetObject"
		if aws.ToString(in.VersionId) != "" {
			action = "s3:GetObjectVersion"
		}
		out := []Request{{Action: action, Resource: a.object(in.Bucket, in.Key)}}
		if missingKey(c.Err) {
			out = append(out, Request{Action: "s3:ListBucket", Resource: a.bucket(in.Bucket)})
		}
		return out, nil
	},
	"S3.HeadObject": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.HeadObjectInput)
		out := []Request{{Action: "s3:GetObject", Resource: a.object(in.Bucket, in.Key)}}
		if missingKey(c.Err) {
			out = append(out, Request{Action: "s3:ListBucket", Resource: a.bucket(in.Bucket)})
		}
		return out, nil
	},
	// A delete without a version id leaves a delete marker (s3:DeleteObject); one
	// with a version id removes that version for good (s3:DeleteObjectVersion).
	"S3.DeleteObject": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.DeleteObjectInput)
		return []Request{{Action: deleteAction(in.VersionId), Resource: a.object(in.Bucket, in.Key)}}, nil
	},
	// DeleteObjects is authorized key by key, as DeleteObject.
	"S3.DeleteObjects": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.DeleteObjectsInput)
		if in.Delete == nil {
			return nil, errors.New("no objects named")
		}
		var out []Request
		for _, o := range in.Delete.Objects {
			out = append(out, Request{Action: deleteAction(o.VersionId), Resource: a.object(in.Bucket, o.Key)})
		}
		return out, nil
	},
	"S3.ListObjectsV2": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.ListObjectsV2Input)
		return []Request{{Action: "s3:ListBucket", Resource: a.bucket(in.Bucket), Context: prefix(in.Prefix)}}, nil
	},
	"S3.ListObjectVersions": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*s3.ListObjectVersionsInput)
		return []Request{{Action: "s3:ListBucketVersions", Resource: a.bucket(in.Bucket), Context: prefix(in.Prefix)}}, nil
	},
	"DynamoDB.PutItem": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		return a.table("dynamodb:PutItem", c.Input.(*dynamodb.PutItemInput).TableName)
	},
	"DynamoDB.DeleteItem": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		return a.table("dynamodb:DeleteItem", c.Input.(*dynamodb.DeleteItemInput).TableName)
	},
	"DynamoDB.UpdateItem": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		return a.table("dynamodb:UpdateItem", c.Input.(*dynamodb.UpdateItemInput).TableName)
	},
	"DynamoDB.GetItem": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		return a.table("dynamodb:GetItem", c.Input.(*dynamodb.GetItemInput).TableName)
	},
	// A secret under a customer-managed key is decrypted by Secrets Manager with the
	// caller's permission: kms:Decrypt on the key, through Secrets Manager
	// (kms:ViaService), for the caller's account.
	"Secrets Manager.GetSecretValue": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		id := aws.ToString(c.Input.(*secretsmanager.GetSecretValueInput).SecretId)
		if !strings.HasPrefix(id, "arn:") {
			return nil, fmt.Errorf("secret %q by name: the functions name their secrets by ARN (SECRETS_ARN)", id)
		}
		out := []Request{{Action: "secretsmanager:GetSecretValue", Resource: id}}
		if key := a.SecretKeys[id]; key != "" {
			out = append(out, a.decryptVia(key, "secretsmanager"))
		}
		return out, nil
	},
	"Lambda.Invoke": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*lambda.InvokeInput)
		arn, err := a.function(aws.ToString(in.FunctionName), aws.ToString(in.Qualifier))
		return []Request{{Action: "lambda:InvokeFunction", Resource: arn}}, err
	},
	"CloudFront.CreateInvalidation": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*cloudfront.CreateInvalidationInput)
		// CloudFront is global: its ARNs have no region.
		return []Request{{Action: "cloudfront:CreateInvalidation",
			Resource: fmt.Sprintf("arn:%s:cloudfront::%s:distribution/%s", a.Partition, a.ID, aws.ToString(in.DistributionId))}}, nil
	},
	// GetDeployment is authorized on the deployment's group, which only its answer
	// names.
	"CodeDeploy.GetDeployment": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		out, _ := c.Output.(*codedeploy.GetDeploymentOutput)
		if out == nil || out.DeploymentInfo == nil {
			return nil, fmt.Errorf("the call failed (%v): its deployment group is unknown", c.Err)
		}
		d := out.DeploymentInfo
		return []Request{{Action: "codedeploy:GetDeployment", Resource: fmt.Sprintf("arn:%s:codedeploy:%s:%s:deploymentgroup:%s/%s",
			a.Partition, a.Region, a.ID, aws.ToString(d.ApplicationName), aws.ToString(d.DeploymentGroupName))}}, nil
	},
	"CodeDeploy.GetApplicationRevision": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(*codedeploy.GetApplicationRevisionInput)
		return []Request{{Action: "codedeploy:GetApplicationRevision", Resource: fmt.Sprintf("arn:%s:codedeploy:%s:%s:application:%s",
			a.Partition, a.Region, a.ID, aws.ToString(in.ApplicationName))}}, nil
	},
	// The Service Authorization Reference gives this action no resource type: only
	// "*" matches it.
	"CodeDeploy.PutLifecycleEventHookExecutionStatus": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		return []Request{{Action: "codedeploy:PutLifecycleEventHookExecutionStatus", Resource: "*"}}, nil
	},
	// An IAM database token: RDS Proxy checks rds-db:connect as the token's user on
	// the proxy's resource id when the connection presents it.
	"rds-db.connect": func(a Account, c telemetry.AWSCall) ([]Request, error) {
		in := c.Input.(telemetry.RDSConnect)
		host, _, err := net.SplitHostPort(in.Endpoint)
		if err != nil {
			return nil, err
		}
		id := a.Proxies[host]
		if id == "" {
			return nil, fmt.Errorf("%s is no RDS Proxy endpoint of the stack", host)
		}
		return []Request{{Action: "rds-db:connect", Resource: fmt.Sprintf("arn:%s:rds-db:%s:%s:dbuser:%s/%s", a.Partition, a.Region, a.ID, id, in.User)}}, nil
	},
}

// Requests are the authorizations AWS makes for a call; an error for a call the
// operations table does not know.
func (a Account) Requests(c telemetry.AWSCall) (rs []Request, err error) {
	op, ok := operations[c.Service+"."+c.Operation]
	if !ok {
		return nil, fmt.Errorf("%s.%s: no IAM action known for this operation: add it to infra/tests/iamcheck's operations (operations.go) with the resource it names, then grant it", c.Service, c.Operation)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s.%s: input %T: %v", c.Service, c.Operation, c.Input, p)
		}
	}()
	rs, err = op(a, c)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", c.Service, c.Operation, err)
	}
	for i := range rs {
		if rs[i].Context == nil {
			rs[i].Context = map[string]string{}
		}
		// Every SDK call goes over TLS (the images bucket's policy refuses others).
		rs[i].Context["aws:SecureTransport"] = "true"
	}
	return rs, nil
}

// Operations are the calls the table knows, sorted.
func Operations() []string {
	var out []string
	for k := range operations {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a Account) bucket(b *string) string {
	return fmt.Sprintf("arn:%s:s3:::%s", a.Partition, aws.ToString(b))
}

func (a Account) object(b, key *string) string {
	return fmt.Sprintf("arn:%s:s3:::%s/%s", a.Partition, aws.ToString(b), aws.ToString(key))
}

func (a Account) table(action string, name *string) ([]Request, error) {
	return []Request{{Action: action, Resource: fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", a.Partition, a.Region, a.ID, aws.ToString(name))}}, nil
}

// decryptVia is the kms:Decrypt request a service makes for its caller.
func (a Account) decryptVia(key, service string) Request {
	return Request{Action: "kms:Decrypt", Resource: key, Context: map[string]string{
		"kms:ViaService":    service + "." + a.Region + ".amazonaws.com",
		"kms:CallerAccount": a.ID,
	}}
}

// function is the ARN Lambda authorizes an invocation on: the function's, with the
// version or alias it names (by qualifier or in the name).
func (a Account) function(name, qualifier string) (string, error) {
	arn := name
	switch {
	case strings.HasPrefix(name, "arn:"):
	case strings.Contains(name, ":function:"): // 123456789012:function:name
		arn = fmt.Sprintf("arn:%s:lambda:%s:%s", a.Partition, a.Region, name)
	case name != "":
		arn = fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", a.Partition, a.Region, a.ID, name)
	default:
		return "", errors.New("no function named")
	}
	if qualifier != "" {
		if parts := strings.Split(arn, ":"); len(parts) > 7 {
			return "", fmt.Errorf("%s names a qualifier and Qualifier is %s", name, qualifier)
		}
		arn += ":" + qualifier
	}
	return arn, nil
}

func deleteAction(version *string) string {
	if aws.ToString(version) != "" {
		return "s3:DeleteObjectVersion"
	}
	return "s3:DeleteObject"
}

func prefix(p *string) map[string]string {
	if aws.ToString(p) == "" {
		return nil
	}
	return map[string]string{"s3:prefix": aws.ToString(p)}
}

// missingKey reports S3's answer for a key without an object.
func missingKey(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "NotFound")
}
