package telemetry

import (
	"context"
	"sync/atomic"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// AWSOptions are the SDK client options (aws.Config.APIOptions) that give every
// operation of every client built from the configuration a span: "DynamoDB.UpdateItem",
// "S3.PutObject", "CloudFront.CreateInvalidation", "Lambda.Invoke", with the region,
// the HTTP status, AWS's request id and the error; and, only while an observer is set
// (ObserveAWS, the IAM tests), hand the operation to it.
//
// Ours rather than otelaws: that module is deprecated, and it links the DynamoDB, SQS
// and SNS clients into every function that makes any AWS call (for their attributes)
// and requires a DynamoDB client newer than the one this module holds.
var AWSOptions = []func(*middleware.Stack) error{addAWSSpan}

func addAWSSpan(stack *middleware.Stack) error {
	// After the service's own initializers, which put its id and the operation's name
	// in the context; once per operation, around its retries.
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("TelemetrySpan",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
			ctx, span := tracer.Start(ctx, service+"."+op, trace.WithSpanKind(trace.SpanKindClient))
			defer span.End()
			out, md, err := next.HandleInitialize(ctx, in)
			if span.IsRecording() {
				attrs := []attribute.KeyValue{
					attribute.String("rpc.system", "aws-api"), attribute.String("rpc.service", service),
					attribute.String("rpc.method", op), attribute.String("cloud.region", awsmiddleware.GetRegion(ctx)),
				}
				if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
					attrs = append(attrs, attribute.Int("http.response.status_code", resp.StatusCode))
				}
				if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
					attrs = append(attrs, attribute.String("aws.request_id", id))
				}
				span.SetAttributes(attrs...)
				if err != nil {
					span.RecordError(err)
					span.SetStatus(codes.Error, err.Error())
				}
			}
			return out, md, err
		}), middleware.After); err != nil {
		return err
	}
	if o := awsObserver.Load(); o != nil {
		return stack.Initialize.Add(observeAWS(*o), middleware.After)
	}
	return nil
}

// AWSCall is one AWS call as an observer (ObserveAWS) sees it: an operation of an SDK
// client, or the signing of an RDS IAM authentication token, which calls nothing but is
// authorized as rds-db:connect when the connection presents it (Service "rds-db",
// Operation "connect", Input an RDSConnect).
type AWSCall struct {
	Service   string // the SDK's service id ("S3", "DynamoDB", "Lambda"), or "rds-db"
	Operation string // "PutObject", "connect"
	Region    string
	Input     any // the operation's input (*s3.PutObjectInput), or an RDSConnect
	Output    any // the operation's output; nil when it failed
	Err       error
}

// RDSConnect is what an IAM authentication token names: the endpoint (host:port) and
// the database user.
type RDSConnect struct{ Endpoint, User string }

var awsObserver atomic.Pointer[func(context.Context, AWSCall)]

// ObserveAWS gives f every AWS call made from now until stop is called: each operation
// of every client built with AWSOptions, with its input and output, and each IAM
// database token signed (ObservedAWS). The IAM tests record with it what a function
// calls, to check each call against the function's role. One observer at a time;
// without one nothing is added to a client's operations.
func ObserveAWS(f func(ctx context.Context, call AWSCall)) (stop func()) {
	awsObserver.Store(&f)
	return func() { awsObserver.CompareAndSwap(&f, nil) }
}

// ObservedAWS hands a call made outside the SDK's clients (an RDS token) to the
// observer, if there is one.
func ObservedAWS(ctx context.Context, call AWSCall) {
	if o := awsObserver.Load(); o != nil {
		(*o)(ctx, call)
	}
}

// observeAWS hands each operation, once it returned (all its attempts), to f.
func observeAWS(f func(context.Context, AWSCall)) middleware.InitializeMiddleware {
	return middleware.InitializeMiddlewareFunc("TelemetryObserver",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			call := AWSCall{Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx),
				Region: awsmiddleware.GetRegion(ctx), Input: in.Parameters, Err: err}
			if err == nil {
				call.Output = out.Result
			}
			f(ctx, call)
			return out, md, err
		})
}
