-- The deleted users whose stored pictures are still to be purged: every version of
-- every object under users/<id>/ in the versioned bucket, and CloudFront's copies of
-- their avatar URLs. DELETE /admin-users/delete/{id} inserts the row in the
-- transaction that deletes the user and removes it (with the user's row in
-- avatar_invalidations) once the purge is done; a row that stays (a crash or a failure
-- after the commit) is purged by the next deletion. No foreign key: the user is gone
-- when the row is made.
--
-- Safe on a live database: a new, empty table in one short transaction under
-- lock_timeout. The running release never reads it.
-- +goose Up
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TABLE user_purges (
    user_id bigint PRIMARY KEY,
    deleted_at timestamptz NOT NULL DEFAULT now()
);
