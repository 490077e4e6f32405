-- The sessions-valid-after mark: a session started at or before valid_after is not
-- accepted, whatever its row says (postgres.DB.SessionUser). A restore of the database
-- to an earlier time brings back sessions that a forced logout or the user's own
-- logout had ended after that time; the restore procedure (docs/operations.md) sets the
-- mark in the restored database, so every session issued before the restore ends at
-- once. The rows themselves stay as they were: a later forced logout still revokes
-- them and removes the provider links they made.
--
-- One row, always there ('-infinity': every session counts); the check reads it by its
-- primary key in the authentication query.
--
-- Safe on a live database: a new table, one short transaction under lock_timeout.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TABLE session_cutoff (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    valid_after timestamptz NOT NULL
);
INSERT INTO session_cutoff (valid_after) VALUES ('-infinity');
