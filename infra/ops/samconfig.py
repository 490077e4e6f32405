#!/usr/bin/env python3
"""An environment of samconfig.toml for make, in the words SAM CLI's parser accepts.

Usage (python3.11; FILE is samconfig.toml or another file of its shape):
  samconfig.py FILE stack ENV      the environment's stack name
  samconfig.py FILE region ENV     the environment's region (sam deploy's)
  samconfig.py FILE get ENV KEY    one parameter's value ("" when not set)
  samconfig.py FILE params ENV     the environment's parameters as a JSON object
  samconfig.py FILE overrides ENV [--template T] [--set K=V ...]
                                   the environment's parameters, one
                                   --parameter-overrides word a line; exit 2 when a value
                                   is still a <...> placeholder or cannot be written so
                                   that SAM CLI reads it back unchanged. --template keeps
                                   the parameters template T declares (an older release's,
                                   for make redeploy); --set replaces a value.
  samconfig.py parse               a JSON list of words on stdin; prints the JSON object
                                   SAM CLI makes of them, exit 1 when it refuses one

SAM CLI (samcli/cli/types.py, CfnParameterOverridesType) reads each word of
--parameter-overrides, and each item of a parameter_overrides list of samconfig.toml, on
its own, and takes Key=Value only when the value is non-empty or quoted: `Key=` is
refused, `Key=""` is the empty value, and `Key=a b` silently keeps `a`. The parser below
is that class's regular expressions and word loop, ported line for line from
aws/aws-sam-cli 1.164.0 (commit fe8f8dbb1160abce8ae13e0a4c5f8b456658afd3), so that what
make deploy passes and what the tests check are read the way sam reads them.
"""

import json
import re
import sys
import tomllib

# samcli/cli/types.py: PARAM_AND_METADATA_KEY_REGEX, _generate_match_regex and the two
# patterns of CfnParameterOverridesType.
_KEY = """([A-Za-z0-9\\"\']+)"""


def _generate_match_regex(match_pattern, delim=None):
    result = f"""(\\"(?:\\\\{match_pattern}|[^\\"\\\\]+)*\\"|""" + f"""\'(?:\\\\{match_pattern}|[^\'\\\\]+)*\'"""
    if delim is not None:
        return result + f"""|(?:\\\\{match_pattern}|[^{delim}\\"\\\\]+)+)"""
    return result + ")"


_VALUE = _generate_match_regex(match_pattern=".", delim=" ")
_PATTERNS = [
    r"(?:ParameterKey={key},ParameterValue={value})".format(key=_KEY, value=_VALUE),
    r"(?:(?: ){key}={value})".format(key=_KEY, value=_VALUE),
]


def _unquote_wrapped_quotes(value):
    if value and value[0] == value[-1] and value[0] in ('"', "'") and value[-1] in ('"', "'"):
        value = value[1:-1]
    return value.replace("\\ ", " ").replace('\\"', '"').replace("\\'", "'")


class Refused(Exception):
    pass


def parse(words):
    """The parameters SAM CLI makes of words (CfnParameterOverridesType.convert, for
    strings that are not file:// references)."""
    parameters = {}
    for value in words:
        normalized_value = " " + value.strip()
        for pattern in _PATTERNS:
            groups = re.findall(pattern, normalized_value)
            if groups:
                parameters.update(groups)
                break
        else:
            raise Refused(f"{value} is not a valid format")
    return {_unquote_wrapped_quotes(k): _unquote_wrapped_quotes(v) for k, v in parameters.items()}


def word(key, value):
    """Key=Value as SAM CLI reads back exactly: bare when it can be, else double-quoted."""
    if re.fullmatch(r"""[^\s"'\\]+""", value):
        w = f"{key}={value}"
    elif not re.search(r"""["\\\n]""", value):
        w = f'{key}="{value}"'
    else:
        raise Refused(f"{key}: the value {value!r} cannot be passed to sam unchanged")
    if parse([w]) != {key: value}:
        raise Refused(f"{key}: sam would read {w} as {parse([w])}")
    return w


def environment(path, env):
    with open(path, "rb") as f:
        conf = tomllib.load(f)
    if env not in conf:
        raise Refused(f"{path}: no environment {env!r}")
    return conf[env]


def parameters(path, env):
    items = environment(path, env)["deploy"]["parameters"]["parameter_overrides"]
    try:
        return parse(items)
    except Refused as e:
        raise Refused(f"{path}: [{env}.deploy.parameters] parameter_overrides: {e} for sam (write an empty value as Key=\"\")")


def template_parameters(path):
    """The parameter names a template declares: the keys of its top-level Parameters
    mapping (read by indentation: the template's short tags are no plain YAML)."""
    names, inside = set(), False
    with open(path) as f:
        for line in f:
            if re.match(r"\S", line):
                inside = line.startswith("Parameters:")
            elif inside:
                m = re.match(r"  (\w+):\s*$", line)
                if m:
                    names.add(m.group(1))
    if not names:
        raise Refused(f"{path}: no Parameters")
    return names


def main(argv):
    if argv[1:2] == ["parse"]:
        try:
            print(json.dumps(parse(json.load(sys.stdin))))
        except Refused as e:
            print(e, file=sys.stderr)
            return 1
        return 0
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    path, what, env = argv[1], argv[2], argv[3]
    try:
        if what == "stack":
            print(environment(path, env)["global"]["parameters"]["stack_name"])
        elif what == "region":
            print(environment(path, env)["deploy"]["parameters"]["region"])
        elif what == "get" and len(argv) == 5:
            print(parameters(path, env).get(argv[4], ""))
        elif what == "params":
            print(json.dumps(parameters(path, env)))
        elif what == "overrides":
            params = parameters(path, env)
            rest = argv[4:]
            while rest:
                if rest[0] == "--template" and len(rest) > 1:
                    declared = template_parameters(rest[1])
                    params = {k: v for k, v in params.items() if k in declared}
                elif rest[0] == "--set" and len(rest) > 1 and "=" in rest[1]:
                    k, v = rest[1].split("=", 1)
                    if k not in params:
                        raise Refused(f"--set {k}: no such parameter in [{env}.deploy.parameters]")
                    params[k] = v
                else:
                    raise Refused(f"overrides: unknown argument {rest[0]}")
                rest = rest[2:]
            left = [k for k, v in params.items() if v.startswith("<")]
            if left:
                raise Refused(f"{path}: [{env}.deploy.parameters] still has <...> placeholders ({', '.join(left)}; docs/operations.md, 'From an empty account to a first admin logged in')")
            for k, v in params.items():
                print(word(k, v))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Refused as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
