-- +goose Up
-- The picture of each user that CloudFront was last told to drop (shared/cdn): a call
-- of the public POST /user/avatar/change/{id} creates an invalidation only when the
-- user's picture differs from the one recorded here. No foreign key: the row of a
-- deleted user is what lets their last picture be invalidated.
CREATE TABLE avatar_invalidations (
    user_id        bigint PRIMARY KEY,
    -- users.profile_image when last invalidated ('' for none, or the user gone);
    -- NULL after a failed invalidation: the next call tries again
    ref            text,
    invalidated_at timestamptz NOT NULL DEFAULT now()
);
-- What CloudFront may hold now is what the users hold now: no user's first call after
-- this migration costs an invalidation unless their picture changed since.
INSERT INTO avatar_invalidations (user_id, ref)
SELECT id, profile_image FROM users WHERE profile_image IS NOT NULL;

-- +goose Down
DROP TABLE avatar_invalidations;
