package telemetry

import (
	"context"

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
// the HTTP status, AWS's request id and the error.
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
	return nil
}
