#!/usr/bin/env python3
"""The SAM transform of template.yaml as CloudFormation runs it, for the tests and make lint.

    transform.py TEMPLATE PARAMS.json OUT.json [TEMPLATE PARAMS.json OUT.json ...]

Reads TEMPLATE strictly (cfn-lint's decoder: a duplicate key is an error, as it is for
`sam validate --lint`), checks the parameter values against the template's Parameters
(AllowedValues, AllowedPattern, MinValue/MaxValue, Type lists) and Rules as CloudFormation
does before it creates anything, and writes the template that
aws-sam-translator (the code of AWS::Serverless-2016-10-31) makes of it with those
values to OUT.json. The local CodeUri is replaced by an S3 location, as `sam package`
does. Exit status 1 with the reasons on stderr when any step refuses. More than one
triple transforms each in turn in this one process (the imports are most of the time).
"""
import json
import os
import re
import sys


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


INSTALL = "pip install cfn-lint==1.51.0 aws-sam-translator==1.110.0"
try:
    from cfnlint.decode import decode
except ImportError as e:
    fail(f"missing Python package ({e}): {INSTALL}")


def param_values(template, given):
    """Defaults overlaid by the given values, each checked as CloudFormation checks it."""
    params = template.get("Parameters", {})
    errors = []
    for name in given:
        if name not in params:
            errors.append(f"{name}: not a parameter of the template")
    values = {}
    for name, p in params.items():
        if name in given:
            v = given[name]
        elif "Default" in p:
            v = p["Default"]
        else:
            errors.append(f"{name}: no value and no default")
            continue
        v = str(v) if not isinstance(v, list) else ",".join(v)
        typ = p.get("Type", "String")
        items = v.split(",") if typ.startswith("List<") or typ == "CommaDelimitedList" else [v]
        for item in items:
            if "AllowedValues" in p and item not in [str(a) for a in p["AllowedValues"]]:
                errors.append(f"{name}: {item!r} is not one of {p['AllowedValues']}")
            if "AllowedPattern" in p and not re.fullmatch(p["AllowedPattern"], item):
                errors.append(f"{name}: {item!r} does not match {p['AllowedPattern']}")
            if typ == "Number":
                try:
                    n = float(item)
                except ValueError:
                    errors.append(f"{name}: {item!r} is not a number")
                    continue
                if "MinValue" in p and n < float(p["MinValue"]):
                    errors.append(f"{name}: {item} is below {p['MinValue']}")
                if "MaxValue" in p and n > float(p["MaxValue"]):
                    errors.append(f"{name}: {item} is above {p['MaxValue']}")
        values[name] = v
    return values, errors


def evaluate(expr, values, template):
    """The intrinsic functions Rules and Conditions may use, on known parameter values."""
    if isinstance(expr, (str, int, float, bool)):
        return expr
    if isinstance(expr, list):
        return [evaluate(e, values, template) for e in expr]
    if not isinstance(expr, dict) or len(expr) != 1:
        raise ValueError(f"cannot evaluate {expr!r}")
    (fn, arg), = expr.items()
    if fn == "Ref":
        if arg not in values:
            raise ValueError(f"Ref to {arg}, not a parameter")
        p = template["Parameters"][arg]
        t = p.get("Type", "String")
        if t.startswith("List<") or t == "CommaDelimitedList":
            return values[arg].split(",")
        return values[arg]
    if fn == "Condition":
        return evaluate(template["Conditions"][arg], values, template)
    a = evaluate(arg, values, template)
    if fn == "Fn::Equals":
        return str(a[0]) == str(a[1])
    if fn == "Fn::Not":
        return not a[0]
    if fn == "Fn::And":
        return all(a)
    if fn == "Fn::Or":
        return any(a)
    if fn == "Fn::Contains":
        return str(a[1]) in [str(x) for x in a[0]]
    if fn == "Fn::EachMemberEquals":
        return all(str(x) == str(a[1]) for x in a[0])
    if fn == "Fn::Join":
        return a[0].join(str(x) for x in a[1])
    if fn == "Fn::Select":
        return a[1][int(a[0])]
    if fn == "Fn::Split":
        return a[1].split(a[0])
    if fn == "Fn::If":
        return a[1] if evaluate(template["Conditions"][a[0]], values, template) else a[2]
    raise ValueError(f"cannot evaluate {fn}")


def check_rules(template, values):
    """CloudFormation refuses a stack whose rule applies and one of its assertions fails."""
    errors = []
    for name, rule in template.get("Rules", {}).items():
        if "RuleCondition" in rule and not evaluate(rule["RuleCondition"], values, template):
            continue
        for a in rule.get("Assertions", []):
            if not evaluate(a["Assert"], values, template):
                errors.append(f"rule {name}: {a.get('AssertDescription', a['Assert'])}")
    return errors


def transform(path, params_path, out_path):
    template, matches = decode(path)
    if matches:
        fail("\n".join(f"{path}: {m}" for m in matches))
    with open(params_path) as f:
        given = json.load(f)
    values, errors = param_values(template, given)
    if not errors:
        errors = check_rules(template, values)
    if errors:
        fail("\n".join(f"{params_path}: {e}" for e in errors))

    try:  # after the checks: a refused parameter set costs no translator import
        from cfnlint.data import Serverless
        from cfnlint.helpers import load_resource
        from samtranslator.parser.parser import Parser
        from samtranslator.translator.translator import Translator
        from samtranslator.model.exceptions import InvalidDocumentException
    except ImportError as e:
        fail(f"missing Python package ({e}): {INSTALL}")
    for r in template.get("Resources", {}).values():
        if r.get("Type") == "AWS::Serverless::Function":
            r.setdefault("Properties", {})["CodeUri"] = "s3://media-catalog-artifacts/function.zip"
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    translator = Translator(managed_policy_map=load_resource(Serverless, "ManagedPolicies.json"), sam_parser=Parser())
    try:
        out = translator.translate(sam_template=template, parameter_values=dict(values), passthrough_metadata=True)
    except InvalidDocumentException as e:
        fail("\n".join(f"transform: {c.message}" for c in e.causes))
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True, default=str)


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3:
        fail(__doc__)
    for i in range(0, len(args), 3):
        transform(*args[i:i + 3])


if __name__ == "__main__":
    main()
