package samtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Stack is a transformed template as one deployment of it would be: parameter values,
// conditions decided, and a physical name for every resource (made up, but of the
// shape AWS gives it), so that the intrinsic functions of a resource's properties can be
// worked out to the strings CloudFormation would pass (Resolve): what a function's
// environment holds and what its role's policies name.
type Stack struct {
	CFN       *CFN
	Name      string // AWS::StackName
	Region    string // AWS::Region
	Account   string // AWS::AccountId
	Partition string // AWS::Partition
	Params    map[string]string

	conditions map[string]bool
}

// NewStack is cfn deployed as stack name in region and account with the parameter
// set in paramsPath (the defaults for the parameters it leaves out).
func NewStack(cfn *CFN, paramsPath, name, region, account string) (*Stack, error) {
	b, err := os.ReadFile(paramsPath)
	if err != nil {
		return nil, err
	}
	var given map[string]string
	if err := json.Unmarshal(b, &given); err != nil {
		return nil, fmt.Errorf("%s: %w", paramsPath, err)
	}
	s := &Stack{CFN: cfn, Name: name, Region: region, Account: account, Partition: PartitionOf(region),
		Params: map[string]string{}, conditions: map[string]bool{}}
	for p, def := range cfn.Parameters {
		if v, ok := given[p]; ok {
			s.Params[p] = v
		} else if d, ok := def["Default"]; ok {
			s.Params[p] = fmt.Sprint(d)
		} else {
			return nil, fmt.Errorf("parameter %s: no value and no default", p)
		}
	}
	names := make([]string, 0, len(cfn.Conditions))
	for c := range cfn.Conditions {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		if _, err := s.Condition(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// PartitionOf is the partition of a region.
func PartitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// Condition is the value of a condition of the template.
func (s *Stack) Condition(name string) (bool, error) {
	if v, ok := s.conditions[name]; ok {
		return v, nil
	}
	expr, ok := s.CFN.Conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	v, err := s.Resolve(expr)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("condition %s is %v, not a boolean", name, v)
	}
	s.conditions[name] = b
	return b, nil
}

// Exists reports whether a resource is created (it has no condition, or a true one).
func (s *Stack) Exists(id string) bool {
	r, ok := s.CFN.Resources[id]
	if !ok {
		return false
	}
	if r.Condition == "" {
		return true
	}
	v, err := s.Condition(r.Condition)
	return err == nil && v
}

// noValue stands for AWS::NoValue until the list or object holding it drops it.
type noValue struct{}

// Resolve works out the intrinsic functions in v (a transformed template's JSON value)
// to what CloudFormation would pass: strings, lists, objects and booleans (conditions).
func (s *Stack) Resolve(v any) (any, error) {
	out, err := s.resolve(v)
	if _, ok := out.(noValue); ok {
		return nil, nil
	}
	return out, err
}

// ResolveString is Resolve of a value that must come out as a string.
func (s *Stack) ResolveString(v any) (string, error) {
	out, err := s.Resolve(v)
	if err != nil {
		return "", err
	}
	str, ok := out.(string)
	if !ok {
		return "", fmt.Errorf("%v is %T, not a string", v, out)
	}
	return str, nil
}

func (s *Stack) resolve(v any) (any, error) {
	switch v := v.(type) {
	case string, bool, nil:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case []any:
		out := []any{}
		for _, x := range v {
			r, err := s.resolve(x)
			if err != nil {
				return nil, err
			}
			if _, drop := r.(noValue); !drop {
				out = append(out, r)
			}
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for fn, arg := range v {
				if fn == "Ref" || fn == "Condition" || strings.HasPrefix(fn, "Fn::") {
					return s.intrinsic(fn, arg)
				}
			}
		}
		out := map[string]any{}
		for k, x := range v {
			r, err := s.resolve(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if _, drop := r.(noValue); !drop {
				out[k] = r
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot resolve %T %v", v, v)
}

func (s *Stack) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		name, _ := arg.(string)
		return s.ref(name)
	case "Condition":
		name, _ := arg.(string)
		return s.Condition(name)
	case "Fn::GetAtt":
		var parts []string
		switch a := arg.(type) {
		case string:
			parts = strings.SplitN(a, ".", 2)
		case []any:
			for _, x := range a {
				parts = append(parts, fmt.Sprint(x))
			}
		}
		if len(parts) != 2 {
			return nil, fmt.Errorf("Fn::GetAtt %v", arg)
		}
		return s.getAtt(parts[0], parts[1])
	case "Fn::Sub":
		return s.sub(arg)
	case "Fn::If":
		a, ok := arg.([]any)
		if !ok || len(a) != 3 {
			return nil, fmt.Errorf("Fn::If %v", arg)
		}
		c, err := s.Condition(fmt.Sprint(a[0]))
		if err != nil {
			return nil, err
		}
		if c {
			return s.resolve(a[1])
		}
		return s.resolve(a[2])
	}
	args, err := s.resolve(arg)
	if err != nil {
		return nil, err
	}
	a, _ := args.([]any)
	switch fn {
	case "Fn::Equals":
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Equals %v", arg)
		}
		return fmt.Sprint(a[0]) == fmt.Sprint(a[1]), nil
	case "Fn::Not":
		if len(a) != 1 {
			return nil, fmt.Errorf("Fn::Not %v", arg)
		}
		b, ok := a[0].(bool)
		return !b, boolErr(ok, arg)
	case "Fn::And", "Fn::Or":
		all, any := true, false
		for _, x := range a {
			b, ok := x.(bool)
			if !ok {
				return nil, fmt.Errorf("%s of %v", fn, x)
			}
			all, any = all && b, any || b
		}
		if fn == "Fn::And" {
			return all, nil
		}
		return any, nil
	case "Fn::Join":
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Join %v", arg)
		}
		items, _ := a[1].([]any)
		strs := make([]string, len(items))
		for i, x := range items {
			strs[i] = fmt.Sprint(x)
		}
		return strings.Join(strs, fmt.Sprint(a[0])), nil
	case "Fn::Split":
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Split %v", arg)
		}
		var out []any
		for _, p := range strings.Split(fmt.Sprint(a[1]), fmt.Sprint(a[0])) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::Select":
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Select %v", arg)
		}
		i, err := strconv.Atoi(fmt.Sprint(a[0]))
		items, _ := a[1].([]any)
		if err != nil || i < 0 || i >= len(items) {
			return nil, fmt.Errorf("Fn::Select %v of %v", a[0], a[1])
		}
		return items[i], nil
	}
	return nil, fmt.Errorf("cannot resolve %s", fn)
}

func boolErr(ok bool, arg any) error {
	if !ok {
		return fmt.Errorf("not a boolean: %v", arg)
	}
	return nil
}

// pseudo are the pseudo parameters' values.
func (s *Stack) pseudo(name string) (any, bool) {
	switch name {
	case "AWS::StackName":
		return s.Name, true
	case "AWS::Region":
		return s.Region, true
	case "AWS::AccountId":
		return s.Account, true
	case "AWS::Partition":
		return s.Partition, true
	case "AWS::URLSuffix":
		if s.Partition == "aws-cn" {
			return "amazonaws.com.cn", true
		}
		return "amazonaws.com", true
	case "AWS::StackId":
		return fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/%s", s.Partition, s.Region, s.Account, s.Name, s.suffix("stack", 8)), true
	case "AWS::NoValue":
		return noValue{}, true
	}
	return nil, false
}

func (s *Stack) ref(name string) (any, error) {
	if v, ok := s.pseudo(name); ok {
		return v, nil
	}
	if def, ok := s.CFN.Parameters[name]; ok {
		v := s.Params[name]
		if t := fmt.Sprint(def["Type"]); strings.HasPrefix(t, "List<") || t == "CommaDelimitedList" {
			var out []any
			for _, p := range strings.Split(v, ",") {
				out = append(out, p)
			}
			return out, nil
		}
		return v, nil
	}
	r, ok := s.CFN.Resources[name]
	if !ok {
		return nil, fmt.Errorf("Ref %s: no parameter or resource of that name", name)
	}
	if !s.Exists(name) {
		return nil, fmt.Errorf("Ref %s: the resource is not created with these parameters", name)
	}
	switch r.Type {
	case "AWS::Lambda::Function", "AWS::RDS::DBProxy", "AWS::CloudWatch::Alarm", "AWS::Logs::LogGroup", "AWS::IAM::Role",
		"AWS::S3::Bucket", "AWS::DynamoDB::Table", "AWS::CodeDeploy::Application", "AWS::CodeDeploy::DeploymentGroup":
		return s.name(name)
	case "AWS::SecretsManager::Secret":
		return fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s-%s-%s", s.Partition, s.Region, s.Account, name, s.suffix(name, 12), s.suffix(name+"/arn", 6)), nil
	case "AWS::Lambda::Alias":
		fn, err := s.ResolveString(r.Properties["FunctionName"])
		if err != nil {
			return nil, fmt.Errorf("Ref %s: %w", name, err)
		}
		return s.lambdaARN(fn) + ":" + fmt.Sprint(r.Properties["Name"]), nil
	case "AWS::Lambda::Version":
		fn, err := s.ResolveString(r.Properties["FunctionName"])
		if err != nil {
			return nil, fmt.Errorf("Ref %s: %w", name, err)
		}
		return s.lambdaARN(fn) + ":1", nil
	case "AWS::CloudFront::Distribution":
		return "E" + strings.ToUpper(s.suffix(name, 13)), nil
	}
	return name + "-" + s.suffix(name, 12), nil
}

// name is the physical name of a resource with a name: the property that names it,
// or the one CloudFormation makes up (stack-LogicalId-SUFFIX; lower case for a bucket).
func (s *Stack) name(id string) (string, error) {
	r := s.CFN.Resources[id]
	prop := map[string]string{
		"AWS::Lambda::Function": "FunctionName", "AWS::RDS::DBProxy": "DBProxyName", "AWS::CloudWatch::Alarm": "AlarmName",
		"AWS::Logs::LogGroup": "LogGroupName", "AWS::IAM::Role": "RoleName", "AWS::S3::Bucket": "BucketName",
		"AWS::DynamoDB::Table": "TableName", "AWS::CodeDeploy::Application": "ApplicationName",
		"AWS::CodeDeploy::DeploymentGroup": "DeploymentGroupName",
	}[r.Type]
	if v, ok := r.Properties[prop]; ok && prop != "" {
		return s.ResolveString(v)
	}
	n := s.Name + "-" + id + "-" + strings.ToUpper(s.suffix(id, 12))
	if r.Type == "AWS::S3::Bucket" {
		n = strings.ToLower(n)
	}
	return n, nil
}

func (s *Stack) lambdaARN(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", s.Partition, s.Region, s.Account, name)
}

func (s *Stack) getAtt(id, attr string) (any, error) {
	r, ok := s.CFN.Resources[id]
	if !ok || !s.Exists(id) {
		return nil, fmt.Errorf("Fn::GetAtt %s.%s: no such resource with these parameters", id, attr)
	}
	n, err := s.ref(id)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprint(n)
	switch r.Type + "." + attr {
	case "AWS::S3::Bucket.Arn":
		return fmt.Sprintf("arn:%s:s3:::%s", s.Partition, name), nil
	case "AWS::DynamoDB::Table.Arn":
		return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", s.Partition, s.Region, s.Account, name), nil
	case "AWS::Lambda::Function.Arn":
		return s.lambdaARN(name), nil
	case "AWS::Lambda::Version.Version":
		return "1", nil
	case "AWS::IAM::Role.Arn":
		return fmt.Sprintf("arn:%s:iam::%s:role/%s", s.Partition, s.Account, name), nil
	case "AWS::Logs::LogGroup.Arn":
		return fmt.Sprintf("arn:%s:logs:%s:%s:log-group:%s:*", s.Partition, s.Region, s.Account, name), nil
	case "AWS::RDS::DBProxy.Endpoint":
		return fmt.Sprintf("%s.proxy-%s.%s.rds.amazonaws.com", strings.ToLower(name), s.suffix(id, 12), s.Region), nil
	case "AWS::RDS::DBProxy.DBProxyArn":
		return fmt.Sprintf("arn:%s:rds:%s:%s:db-proxy:prx-%s", s.Partition, s.Region, s.Account, s.suffix(id+"/prx", 17)), nil
	case "AWS::CloudWatch::Alarm.Arn":
		return fmt.Sprintf("arn:%s:cloudwatch:%s:%s:alarm:%s", s.Partition, s.Region, s.Account, name), nil
	}
	return nil, fmt.Errorf("Fn::GetAtt %s.%s: an attribute this resolver does not know (%s)", id, attr, r.Type)
}

func (s *Stack) sub(arg any) (any, error) {
	var str string
	vars := map[string]any{}
	switch a := arg.(type) {
	case string:
		str = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Sub %v", arg)
		}
		str, _ = a[0].(string)
		m, _ := a[1].(map[string]any)
		for k, v := range m {
			r, err := s.resolve(v)
			if err != nil {
				return nil, fmt.Errorf("Fn::Sub %s: %w", k, err)
			}
			vars[k] = r
		}
	default:
		return nil, fmt.Errorf("Fn::Sub %v", arg)
	}
	var b strings.Builder
	for {
		i := strings.Index(str, "${")
		if i < 0 {
			b.WriteString(str)
			return b.String(), nil
		}
		j := strings.Index(str[i:], "}")
		if j < 0 {
			return nil, fmt.Errorf("Fn::Sub %q: unclosed ${", str)
		}
		b.WriteString(str[:i])
		name := str[i+2 : i+j]
		str = str[i+j+1:]
		if strings.HasPrefix(name, "!") {
			b.WriteString("${" + name[1:] + "}")
			continue
		}
		var v any
		var err error
		if x, ok := vars[name]; ok {
			v = x
		} else if res, attr, ok := strings.Cut(name, "."); ok && !strings.Contains(res, "::") {
			v, err = s.getAtt(res, attr)
		} else {
			v, err = s.ref(name)
		}
		if err != nil {
			return nil, fmt.Errorf("Fn::Sub ${%s}: %w", name, err)
		}
		if l, ok := v.([]any); ok {
			return nil, fmt.Errorf("Fn::Sub ${%s} is a list %v", name, l)
		}
		b.WriteString(fmt.Sprint(v))
	}
}

// Symbolic writes the physical names and ARNs of the stack in str as the template
// names them (${ImagesBucket.Arn}, ${OAuthSecretArn}, ${AWS::AccountId}), for messages
// that say which grant of the template a request needs.
func (s *Stack) Symbolic(str string) string {
	type pair struct{ physical, symbol string }
	var pairs []pair
	ids := make([]string, 0, len(s.CFN.Resources))
	for id := range s.CFN.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !s.Exists(id) {
			continue
		}
		if v, err := s.ref(id); err == nil {
			if p, ok := v.(string); ok && len(p) > 3 {
				pairs = append(pairs, pair{p, "${" + id + "}"})
			}
		}
		if v, err := s.getAtt(id, "Arn"); err == nil {
			pairs = append(pairs, pair{strings.TrimSuffix(fmt.Sprint(v), ":*"), "${" + id + ".Arn}"})
		}
	}
	params := make([]string, 0, len(s.Params))
	for p := range s.Params {
		params = append(params, p)
	}
	sort.Strings(params)
	for _, p := range params {
		if v := s.Params[p]; strings.HasPrefix(v, "arn:") && !strings.Contains(v, ",") {
			pairs = append(pairs, pair{v, "${" + p + "}"})
		}
	}
	pairs = append(pairs, pair{s.Name, "${AWS::StackName}"}, pair{s.Account, "${AWS::AccountId}"}, pair{s.Region, "${AWS::Region}"})
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].physical) > len(pairs[j].physical) })
	for _, p := range pairs {
		str = strings.ReplaceAll(str, p.physical, p.symbol)
	}
	return str
}

// suffix is a stable made-up id of n hex digits for a name, as AWS would generate one.
func (s *Stack) suffix(name string, n int) string {
	sum := sha256.Sum256([]byte(s.Name + "/" + name))
	h := hex.EncodeToString(sum[:])
	for len(h) < n {
		h += h
	}
	return h[:n]
}
