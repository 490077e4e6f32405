// Every route of the document called once with the natural types (numbers for ids,
// the enums for fixed values). Compiled with tsc --strict by the client's test and
// never run: it fails to compile when the document and the generated types stop
// describing a route the way a frontend calls it.
import type { ApiClient } from "../src/client.js";

const image = "data:image/png;base64,iVBORw0KGgo=";

export async function everyRoute(api: ApiClient): Promise<unknown[]> {
  const id = 1;
  return Promise.all([
    api.GET("/tags", { params: { query: { client: 1 } } }),
    api.GET("/tags/id/{id}", { params: { path: { id } } }),
    api.GET("/publishers", { params: { query: { client: 1, order: "name-asc", limit: 10, offset: 0 } } }),
    api.GET("/publisher/slug/{slug}", { params: { path: { slug: "kodansha" } } }),
    api.GET("/publisher/random", { params: { query: { client: 1 } } }),
    api.GET("/publisher/publications/{id}", { params: { path: { id }, query: { client: 1, search: "a", order: "added-desc" } } }),
    api.GET("/auth/oauth/{provider}", { params: { path: { provider: "google" } } }),
    api.GET("/auth/oauth/{provider}/callback", { params: { path: { provider: "discord" }, query: { code: "c", state: "s" } } }),
    api.GET("/auth/oauth/link/{provider}", { params: { path: { provider: "github" } } }),
    api.GET("/auth/oauth/link/{provider}/callback", { params: { path: { provider: "github" }, query: { error: "access_denied" } } }),
    api.GET("/auth/oauth/connections", {}),
    api.DELETE("/auth/oauth/unlink/{provider}", { params: { path: { provider: "google" } } }),
    api.GET("/user/avatar/{id}/{res}", { params: { path: { id, res: "high" } }, parseAs: "blob" }),
    api.GET("/user/avatar/{id}", { params: { path: { id } }, parseAs: "blob" }),
    api.POST("/user/avatar/change/{id}", { params: { path: { id } } }),
    api.GET("/admin-users", { params: { query: { search: "ad", order: "registered-desc", role: 2, limit: 20, offset: 0 } } }),
    api.GET("/admin-users/id/{id}", { params: { path: { id } } }),
    api.POST("/admin-users/edit/{id}", { params: { path: { id } }, body: { username: "admin", age_verified: true, added_roles: [2], removed_roles: [] } }),
    api.DELETE("/admin-users/delete/{id}", { params: { path: { id } } }),
    api.POST("/admin-users/logout/{id}", { params: { path: { id } } }),
    api.POST("/admin-users/update-image/{id}", { params: { path: { id } }, body: { image } }),
    api.DELETE("/admin-users/delete-image/{id}", { params: { path: { id } } }),
    api.GET("/admin-roles", {}),
    api.GET("/admin-roles/id/{id}", { params: { path: { id } } }),
    api.POST("/admin-roles/edit/{id}", { params: { path: { id } }, body: { name: "editor", description: null, added_permissions: [1], removed_permissions: [2] } }),
    api.POST("/admin-roles/add", { body: { name: "moderator", description: "Moderates" } }),
    api.DELETE("/admin-roles/delete/{id}", { params: { path: { id } } }),
    api.GET("/admin-permissions", {}),
    api.GET("/admin-permissions/id/{id}", { params: { path: { id } } }),
    api.POST("/admin-permissions/edit/{id}", { params: { path: { id } }, body: { name: "view-users", description: "Sees users" } }),
    api.POST("/admin-permissions/add", { body: { name: "export", description: "Exports" } }),
    api.DELETE("/admin-permissions/delete/{id}", { params: { path: { id } } }),
    api.GET("/admin-contributors", { params: { query: { client: 1, search: "ta", order: "name-desc" } } }),
    api.GET("/admin-contributors/id/{id}", { params: { path: { id } } }),
    api.POST("/admin-contributors/add", { body: { first_name: "Akira", last_name: "Toriyama" } }),
    api.POST("/admin-contributors/edit/{id}", { params: { path: { id } }, body: { first_name: "Akira", added_aliases: [], removed_aliases: [3] } }),
    api.DELETE("/admin-contributors/delete/{id}", { params: { path: { id } } }),
    api.POST("/admin-contributors/update-avatar/{id}", { params: { path: { id } }, body: { image } }),
    api.DELETE("/admin-contributors/delete-avatar/{id}", { params: { path: { id } } }),
  ]);
}
