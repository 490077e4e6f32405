// The generated client against a running server (the local server of `make run`):
// infra/local/cmd/local's TestTypeScriptClient compiles this file with tsc (strict) and runs
// it with Node's test runner, giving API_URL and two session tokens in the environment.
import assert from "node:assert/strict";
import { test } from "node:test";

import { avatarUrl, createApiClient, loginUrl, type ApiClient, type ResponseModel } from "../src/client.js";

const baseUrl = required("API_URL");
const admin = { refreshToken: required("ADMIN_TOKEN") };
const member = { refreshToken: required("MEMBER_TOKEN") };

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// Node's fetch keeps no cookie jar: a server-side caller sends the session cookie as a
// header, where a browser would send the one the login set.
function session(s: { refreshToken: string }): { Cookie: string } {
  return { Cookie: `refreshToken=${s.refreshToken}` };
}

const api: ApiClient = createApiClient(baseUrl);

// An error answer is the Response Model, with the status as its code.
function assertError(error: ResponseModel | undefined, response: Response, status: number, data: string): void {
  assert.equal(response.status, status);
  assert.deepEqual(error, { data, code: status });
}

test("public list: the demo client's tags", async () => {
  const { data, error } = await api.GET("/tags", { params: { query: { client: 1 } } });
  assert.equal(error, undefined);
  assert.ok(data);
  assert.ok(data.some((t) => t.name === "Action" && t.type === "genre"));
});

test("detail: a tag by its numeric id", async () => {
  const { data } = await api.GET("/tags/id/{id}", { params: { path: { id: 1 } } });
  assert.ok(data);
  assert.equal(data.id, 1);
  assert.equal(typeof data.series_count, "number");
});

test("detail by slug, then a search of its publications with paging", async () => {
  const pub = await api.GET("/publisher/slug/{slug}", { params: { path: { slug: "kodansha" } } });
  assert.ok(pub.data);
  assert.equal(pub.data.name, "Kodansha");
  const page = await api.GET("/publisher/publications/{id}", {
    params: { path: { id: pub.data.id }, query: { client: 1, search: "akira", limit: 5 } },
  });
  assert.ok(page.data);
  assert.deepEqual(page.data.publications.map((p) => p.name), ["Akira"]);
  assert.equal(page.data.max, 1);
  assert.equal(page.data.from, 0);
  assert.equal(page.data.to, 1);
});

test("admin read with a session cookie", async () => {
  const { data } = await api.GET("/admin-users", {
    params: { query: { order: "registered-asc" } },
    headers: session(admin),
  });
  assert.ok(data);
  assert.equal(data.users[0]?.username, "admin");
  const one = await api.GET("/admin-users/id/{id}", { params: { path: { id: 1 } }, headers: session(admin) });
  assert.equal(one.data?.username, "admin");
  // The demo admin signs in with a token, through no provider.
  assert.deepEqual(one.data?.linked_providers, []);
});

test("admin write, then the same write again: 409", async () => {
  const name = `ts-client-${Date.now()}`;
  const body = { name, description: "Added by the TypeScript client's test" };
  const added = await api.POST("/admin-roles/add", { body, headers: session(admin) });
  assert.deepEqual(added.data, { data: "Role added successfully", code: 200 });
  const again = await api.POST("/admin-roles/add", { body, headers: session(admin) });
  assertError(again.error, again.response, 409, "Role with the same name already exists");
  const roles = await api.GET("/admin-roles", { headers: session(admin) });
  assert.ok(roles.data?.some((r) => r.name === name && r.user_count === 0));
});

test("avatar at both resolutions, and 304 for the ETag held", async () => {
  for (const res of ["scaled", "high"] as const) {
    const url = avatarUrl(baseUrl, 1, res);
    const first = await fetch(url);
    assert.equal(first.status, 200, url);
    assert.match(first.headers.get("content-type") ?? "", /^image\//);
    assert.ok((await first.arrayBuffer()).byteLength > 0);
    const etag = first.headers.get("etag");
    assert.ok(etag, "an ETag");
    const again = await fetch(url, { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
  }
  // The typed route answers the same picture as the address built for an <img>.
  const typed = await api.GET("/user/avatar/{id}/{res}", {
    params: { path: { id: 1, res: "high" } },
    parseAs: "arrayBuffer",
  });
  assert.equal(typed.response.status, 200);
});

test("errors of each kind as the Response Model", async () => {
  const bad = await api.GET("/tags/id/{id}", { params: { path: { id: 0 } } });
  assertError(bad.error, bad.response, 400, "Required parameters missing");

  const anonymous = await api.GET("/admin-roles", {});
  assertError(anonymous.error, anonymous.response, 401, "Unauthorized");

  const forbidden = await api.GET("/admin-roles", { headers: session(member) });
  assertError(forbidden.error, forbidden.response, 403, "Forbidden");

  const missing = await api.GET("/tags/id/{id}", { params: { path: { id: 999999 } } });
  assertError(missing.error, missing.response, 404, "Tag not found");
});

test("login starts with a redirect to the provider", async () => {
  const res = await fetch(loginUrl(baseUrl, "google"), { redirect: "manual" });
  assert.equal(res.status, 302);
  assert.ok(res.headers.get("location"));
});

// Never called: each line below must fail to compile, which `tsc --strict` checks
// (an unused @ts-expect-error is itself an error). These are the mistakes the
// generated types exist to catch.
export function typesOnly(client: ApiClient): void {
  // @ts-expect-error: ids are numbers, not strings
  void client.GET("/tags/id/{id}", { params: { path: { id: "1" } } });
  // @ts-expect-error: a resolution is scaled or high
  void client.GET("/user/avatar/{id}/{res}", { params: { path: { id: 1, res: "medium" } } });
  // @ts-expect-error: the providers are google, discord and github
  void client.GET("/auth/oauth/{provider}", { params: { path: { provider: "gitlab" } } });
  // @ts-expect-error: client is a required query parameter of the tag list
  void client.GET("/tags", { params: { query: {} } });
  // @ts-expect-error: no such route
  void client.GET("/tags/{id}", {});
}
