// Evaluates requests against IAM policies with @cloud-copilot/iam-simulate, as AWS
// evaluates them: identity policies, the resource's policy, conditions, and each
// action's resource types (an action or ARN AWS does not define is an error, not a
// denial). Reads one JSON document on stdin and writes one on stdout (infra/tests/iamcheck's
// evaluate.go drives it):
//
//   in:  {"principals": {NAME: {"arn": ROLE_ARN, "statements": [STATEMENT...]}},
//         "resourcePolicies": {ID: POLICY},
//         "requests": [{"principal": NAME, "action": A, "resource": ARN, "account": ACCOUNT,
//                       "context": {KEY: VALUE}, "resourcePolicy": ID or "",
//                       "candidates": [INDEX...]}]}
//   out: {"results": [{"decision": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied" | "error",
//                      "error": TEXT, "allowedBy": [INDEX...]}]}
//
// decision is the principal's whole policy's answer; allowedBy lists the candidates
// (indexes into the principal's statements) that allow the request on their own, for
// the report of grants no request uses.
import { runSimulation, runUnsafeSimulation } from '@cloud-copilot/iam-simulate'

const input = JSON.parse(await new Promise((resolve, reject) => {
  let data = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (chunk) => { data += chunk })
  process.stdin.on('end', () => resolve(data))
  process.stdin.on('error', reject)
}))

function policy(statements) {
  return { Version: '2012-10-17', Statement: statements }
}

async function simulate(principal, req, statements) {
  const resourcePolicy = req.resourcePolicy ? input.resourcePolicies[req.resourcePolicy] : undefined
  const simulation = {
    request: {
      principal: principal.arn,
      action: req.action,
      resource: { resource: req.resource, accountId: req.account },
      contextVariables: req.context || {}
    },
    identityPolicies: statements.length ? [{ name: 'role', policy: policy(statements) }] : [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(resourcePolicy ? { resourcePolicy } : {})
  }
  const result = await runSimulation(simulation, {})
  if (result.resultType === 'error' && result.errors.message === 'multiple.resource.types') {
    // An ARN that fits two of the action's resource types alike (a Lambda alias's and a
    // version's, function:NAME:QUALIFIER): the policies are evaluated without the
    // type check, which cannot tell them apart.
    return { decision: runUnsafeSimulation(simulation, {}) }
  }
  if (result.resultType === 'error') {
    return { decision: 'error', error: JSON.stringify(result.errors) }
  }
  return { decision: result.overallResult }
}

const results = []
for (const req of input.requests) {
  const principal = input.principals[req.principal]
  if (!principal) {
    results.push({ decision: 'error', error: `no principal ${req.principal}` })
    continue
  }
  const out = await simulate(principal, req, principal.statements)
  out.allowedBy = []
  if (out.decision === 'Allowed') {
    for (const i of req.candidates || []) {
      const alone = await simulate(principal, req, [principal.statements[i]])
      if (alone.decision === 'Allowed') {
        out.allowedBy.push(i)
      }
    }
  }
  results.push(out)
}
process.stdout.write(JSON.stringify({ results }))
