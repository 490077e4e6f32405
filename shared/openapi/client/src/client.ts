// A thin typed client of the Media Catalog API for browser and Node.js code.
//
// The types in api.d.ts are generated from shared/openapi/openapi.yaml by
// openapi-typescript (`make client`); the calls go through openapi-fetch, which
// checks paths, parameters and bodies against those types at compile time and adds
// nothing at run time beyond fetch. Nothing here is written by hand that the two
// libraries already do.
import createClient, { type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./api.js";

export type { components, operations, paths } from "./api.js";

/** Every schema of the document by name, e.g. `Schemas["Tag"]`. */
export type Schemas = components["schemas"];
/** An OAuth provider: google, discord or github. */
export type Provider = Schemas["Provider"];
/** A profile image's resolution: scaled or high. */
export type Resolution = Schemas["Resolution"];
/** The Response Model of every error and plain message: `{data, code}`. */
export type ResponseModel = Schemas["Response"];

/**
 * Creates a client for the API at baseUrl (for example "http://localhost:3000", or
 * the API Gateway address of a deployment).
 *
 * Sessions are the `refreshToken` cookie the OAuth callback sets, so requests carry
 * credentials ("include"): a frontend on another origin of the API's CORS list is
 * sent the cookie, and Node.js callers pass it in `headers` themselves.
 */
export function createApiClient(baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}) {
  return createClient<paths>({ credentials: "include", ...options, baseUrl });
}

export type ApiClient = ReturnType<typeof createApiClient>;

/**
 * The address that starts a login with provider: the browser navigates to it (it is a
 * chain of redirects through the provider, not a fetch), and comes back to the
 * frontend with the session cookie set.
 */
export function loginUrl(baseUrl: string, provider: Provider): string {
  return `${trimSlash(baseUrl)}/auth/oauth/${provider}`;
}

/** The address that links provider to the logged-in account (navigate to it). */
export function linkUrl(baseUrl: string, provider: Provider): string {
  return `${trimSlash(baseUrl)}/auth/oauth/link/${provider}`;
}

/**
 * The address of a user's profile image, for an <img src>. The scaled image has the
 * short address; the CDN serves one address per picture, so build it here rather than
 * by hand.
 */
export function avatarUrl(baseUrl: string, userId: number, res: Resolution = "scaled"): string {
  if (!Number.isSafeInteger(userId) || userId < 1) {
    throw new RangeError(`user id must be a positive integer, got ${userId}`);
  }
  const base = `${trimSlash(baseUrl)}/user/avatar/${userId}`;
  return res === "scaled" ? base : `${base}/${res}`;
}

function trimSlash(s: string): string {
  return s.endsWith("/") ? s.slice(0, -1) : s;
}
