-- The session that linked a provider account to its user (NULL for the account a user
-- signed up with, and for links made before this column). A forced logout
-- (POST /admin-users/logout/{id}) removes the links of the sessions it revokes, so
-- whoever held one of them cannot come back by logging in with a provider they linked.
-- No foreign key: sessions are never deleted while their user exists, and the
-- column is only compared with the ids a logout revokes.
--
-- Safe on a live database: a nullable column without a default (no rewrite, no scan),
-- in one short transaction under lock_timeout. The running release leaves it NULL.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE oauth_connections ADD COLUMN linked_session uuid;
