package samtemplate_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/mediacatalog/service/infra/tests/samtemplate"
)

// iamNames are the properties that give an IAM resource a name of its own, for which
// CloudFormation requires CAPABILITY_NAMED_IAM (API reference, CreateStack,
// Capabilities: "If you have IAM resources with custom names, you must specify
// CAPABILITY_NAMED_IAM"; CAPABILITY_IAM alone fails the deploy with
// InsufficientCapabilities).
var iamNames = map[string]string{
	"AWS::IAM::Role": "RoleName", "AWS::IAM::ManagedPolicy": "ManagedPolicyName", "AWS::IAM::User": "UserName",
	"AWS::IAM::Group": "GroupName", "AWS::IAM::InstanceProfile": "InstanceProfileName",
}

// TestIAMCapabilities: every environment of samconfig.toml acknowledges the IAM
// resources the template makes as they are made: CAPABILITY_NAMED_IAM when one of them
// has a name of its own.
func TestIAMCapabilities(t *testing.T) {
	tpl := loadTemplate(t)
	named := ""
	for id, r := range tpl.Resources {
		if prop, ok := iamNames[samtemplate.Scalar(samtemplate.Get(r, "Type"))]; ok && samtemplate.Get(r, "Properties", prop) != nil {
			named = id
		}
	}
	sc, err := os.ReadFile(repoFile("samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?s)\[(\w+)\.deploy\.parameters\]\n(.*?)parameter_overrides`).FindAllStringSubmatch(string(sc), -1)
	if len(blocks) == 0 {
		t.Fatal("no deploy sections in samconfig.toml")
	}
	for _, b := range blocks {
		caps := regexp.MustCompile(`(?m)^capabilities = "([^"]*)"`).FindStringSubmatch(b[2])
		switch {
		case caps == nil:
			t.Errorf("%s: no capabilities", b[1])
		case named != "" && !regexp.MustCompile(`\bCAPABILITY_NAMED_IAM\b`).MatchString(caps[1]):
			t.Errorf("%s: capabilities %q, but %s has a name of its own: CloudFormation refuses the stack without CAPABILITY_NAMED_IAM", b[1], caps[1], named)
		case named == "" && !regexp.MustCompile(`\bCAPABILITY_(NAMED_)?IAM\b`).MatchString(caps[1]):
			t.Errorf("%s: capabilities %q acknowledge no IAM resource", b[1], caps[1])
		}
	}
}
