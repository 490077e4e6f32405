// Package config reads the service's configuration from the environment.
// README.md documents every variable in a table; keep the two in step.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/deadlines"
)

// Production addresses, used unless DB_ENV=local or overridden.
const (
	DefaultAPIURL      = "https://api.mediacatalog.app"
	DefaultFrontendURL = "https://mediacatalog.app"
	LocalFrontendURL   = "http://localhost:5173"
	// DevJWTSecret is accepted only when DB_ENV=local.
	DevJWTSecret = "local-development-secret-do-not-use-in-production"
)

// MinOriginSecret is the shortest origin secret accepted: as long as a signing secret.
const MinOriginSecret = 32

// Config is the whole configuration. Each part is read by the functions that need it.
type Config struct {
	Env         string // DB_ENV
	Port        int    // PORT
	APIURL      string // API base: http://localhost:PORT when local, else API_URL
	FrontendURL string // frontend origin: LOCAL_FRONTEND_URL when local, else FRONTEND_URL
	CORSOrigins []string
	LogLevel    string
	// Release is the release the function was deployed as (RELEASE, template.yaml),
	// on every log line of a function.
	Release string
	// OriginSecrets are the accepted values of the header CloudFront adds to what it
	// sends to the origin: ORIGIN_SECRET and, during a rotation, ORIGIN_SECRET_PREVIOUS
	// (from Secrets Manager). None: requests are not checked (local runs, tests).
	OriginSecrets []string

	DatabaseURL string
	// DBMaxConns bounds each process's pool (DB_MAX_CONNS; 0: pgx's default, the
	// larger of 4 and the number of CPUs).
	DBMaxConns int
	// DBIAMAuth: connect with an IAM token instead of a password, over verified TLS
	// (DB_IAM_AUTH; RDS Proxy in AWS).
	DBIAMAuth bool

	// RequestTimeout bounds each request's work (REQUEST_TIMEOUT); under Lambda the
	// invocation's deadline minus a second bounds it as well.
	RequestTimeout time.Duration

	AWSRegion string
	// Endpoint overrides of the AWS clients ("" for AWS itself): stand-ins locally
	// and in tests. See DynamoEndpointEnv and the others for the variables read.
	DynamoEndpoint     string
	S3Endpoint         string
	CloudFrontEndpoint string
	LambdaEndpoint     string
	StateTable         string
	RateLimitTable     string
	Bucket             string
	FileService        bool
	CloudFrontDistID   string

	JWTSecret       string
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	LockTTL         time.Duration

	OAuthRateLimit  int
	OAuthRateWindow time.Duration

	ImageMaxBytes        int
	ImageMaxPixels       int
	ImageMaxDecodedBytes int
	CDNCacheBytes        int64

	AvatarNotifier  string // how admin-users tells the cdn function of a change: "http" or "lambda"
	CDNFunctionName string // the cdn function (its alias) that "lambda" invokes
	CDNURL          string // base URL of the cdn routes that "http" posts a change to
}

// The variables of each AWS client's endpoint override, first set wins: the SDK's
// standard variable of the service (AWS_ENDPOINT_URL_<SERVICE>, which the SDK's shared
// configuration also reads), the project's earlier name where there was one (an
// alias), then the SDK's global AWS_ENDPOINT_URL. The configuration reads them itself
// because a set endpoint changes more than the address: S3 is then addressed
// path-style, and placeholder credentials are used when the environment has none.
var (
	DynamoEndpointEnv     = []string{"AWS_ENDPOINT_URL_DYNAMODB", "DYNAMODB_ENDPOINT", "AWS_ENDPOINT_URL"}
	S3EndpointEnv         = []string{"AWS_ENDPOINT_URL_S3", "S3_ENDPOINT", "AWS_ENDPOINT_URL"}
	CloudFrontEndpointEnv = []string{"AWS_ENDPOINT_URL_CLOUDFRONT", "AWS_ENDPOINT_URL"}
	LambdaEndpointEnv     = []string{"AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL"}
)

// FirstEnv is the value of the first of names that is set.
func FirstEnv(getenv func(string) string, names []string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// AWSEndpointSet reports whether any AWS client talks to an endpoint override.
func (c Config) AWSEndpointSet() bool {
	return c.DynamoEndpoint != "" || c.S3Endpoint != "" || c.CloudFrontEndpoint != "" || c.LambdaEndpoint != ""
}

// Local reports whether the service runs as a local development instance.
func (c Config) Local() bool { return c.Env == "local" }

// Load reads the configuration through getenv (os.Getenv in main, a map in tests).
func Load(getenv func(string) string) (Config, error) {
	p := parser{getenv: getenv}
	c := Config{
		Env:                  getenv("DB_ENV"),
		Port:                 p.int("PORT", 3000),
		LogLevel:             p.str("LOG_LEVEL", "info"),
		Release:              getenv("RELEASE"),
		RequestTimeout:       p.duration("REQUEST_TIMEOUT", deadlines.RequestTimeout),
		DatabaseURL:          getenv("DATABASE_URL"),
		DBMaxConns:           p.int("DB_MAX_CONNS", 0),
		DBIAMAuth:            p.bool("DB_IAM_AUTH", false),
		AWSRegion:            p.str("AWS_REGION", "us-east-1"),
		DynamoEndpoint:       FirstEnv(getenv, DynamoEndpointEnv),
		S3Endpoint:           FirstEnv(getenv, S3EndpointEnv),
		CloudFrontEndpoint:   FirstEnv(getenv, CloudFrontEndpointEnv),
		LambdaEndpoint:       FirstEnv(getenv, LambdaEndpointEnv),
		StateTable:           p.str("OAUTH_STATE_TABLE", "media-catalog-oauth-state"),
		RateLimitTable:       p.str("RATE_LIMIT_TABLE", "media-catalog-rate-limit"),
		Bucket:               p.str("S3_BUCKET", "media-catalog-images"),
		FileService:          p.bool("FILE_SERVICE", false),
		CloudFrontDistID:     getenv("CLOUDFRONT_DISTRIBUTION_ID"),
		JWTSecret:            getenv("JWT_SECRET"),
		AccessTokenTTL:       p.duration("ACCESS_TOKEN_TTL", 15*time.Minute),
		RefreshTokenTTL:      p.duration("REFRESH_TOKEN_TTL", 30*24*time.Hour),
		LockTTL:              p.duration("EDIT_LOCK_TTL", 15*time.Minute),
		OAuthRateLimit:       p.int("OAUTH_RATE_LIMIT", 20),
		OAuthRateWindow:      p.duration("OAUTH_RATE_WINDOW", 15*time.Minute),
		ImageMaxBytes:        p.int("IMAGE_MAX_BYTES", 10<<20),
		ImageMaxPixels:       p.int("IMAGE_MAX_PIXELS", 50_000_000),
		ImageMaxDecodedBytes: p.int("IMAGE_MAX_DECODED_BYTES", 200<<20),
		CDNCacheBytes:        int64(p.int("CDN_CACHE_BYTES", 64<<20)),
		AvatarNotifier:       p.str("AVATAR_NOTIFIER", "http"),
		CDNFunctionName:      getenv("CDN_FUNCTION_NAME"),
		CDNURL:               getenv("CDN_URL"),
	}
	if c.Local() {
		c.APIURL = fmt.Sprintf("http://localhost:%d", c.Port)
		c.FrontendURL = p.str("LOCAL_FRONTEND_URL", LocalFrontendURL)
		if c.JWTSecret == "" {
			c.JWTSecret = DevJWTSecret
		}
	} else {
		c.APIURL = p.str("API_URL", DefaultAPIURL)
		c.FrontendURL = p.str("FRONTEND_URL", DefaultFrontendURL)
	}
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	c.FrontendURL = strings.TrimRight(c.FrontendURL, "/")
	if c.CDNURL == "" {
		c.CDNURL = c.APIURL
	}
	c.CORSOrigins = []string{c.FrontendURL}
	for _, o := range strings.Split(getenv("CORS_ORIGINS"), ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" && o != c.FrontendURL {
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
	}
	if cur := getenv("ORIGIN_SECRET"); cur != "" {
		c.OriginSecrets = []string{cur}
		if prev := getenv("ORIGIN_SECRET_PREVIOUS"); prev != "" && prev != cur {
			c.OriginSecrets = append(c.OriginSecrets, prev)
		}
		for _, s := range c.OriginSecrets {
			if len(s) < MinOriginSecret {
				p.errs = append(p.errs, fmt.Sprintf("ORIGIN_SECRET and ORIGIN_SECRET_PREVIOUS must be at least %d bytes", MinOriginSecret))
				break
			}
		}
	}
	if c.RequestTimeout > deadlines.RequestTimeout {
		p.errs = append(p.errs, fmt.Sprintf("REQUEST_TIMEOUT: %s is over %s (the local server's write timeout less 5s)", c.RequestTimeout, deadlines.RequestTimeout))
	}
	switch c.AvatarNotifier {
	case "http", "lambda":
	default:
		p.errs = append(p.errs, fmt.Sprintf("AVATAR_NOTIFIER: %q is neither http nor lambda", c.AvatarNotifier))
	}
	if len(p.errs) > 0 {
		return Config{}, fmt.Errorf("config: %s", strings.Join(p.errs, "; "))
	}
	return c, nil
}

// RequireJWTSecret reports an error when no usable signing secret is configured.
func (c Config) RequireJWTSecret() error {
	if c.JWTSecret == "" {
		return fmt.Errorf("config: JWT_SECRET is required unless DB_ENV=local")
	}
	if c.JWTSecret == DevJWTSecret && !c.Local() {
		return fmt.Errorf("config: the development JWT secret is refused outside DB_ENV=local")
	}
	if len(c.JWTSecret) < 32 {
		return fmt.Errorf("config: JWT_SECRET must be at least 32 bytes")
	}
	return nil
}

type parser struct {
	getenv func(string) string
	errs   []string
}

func (p *parser) str(name, def string) string {
	if v := p.getenv(name); v != "" {
		return v
	}
	return def
}

func (p *parser) int(name string, def int) int {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a non-negative integer", name, v))
		return def
	}
	return n
}

func (p *parser) bool(name string, def bool) bool {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not true or false", name, v))
		return def
	}
	return b
}

func (p *parser) duration(name string, def time.Duration) time.Duration {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a positive duration such as 15m", name, v))
		return def
	}
	return d
}
