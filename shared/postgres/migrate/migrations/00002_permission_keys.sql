-- +goose Up
-- Permissions get an immutable key, the identity the code checks. The name stays the
-- editable label. The built-in permissions (the spec's fifteen) carry their spec name
-- as key; permissions added through the API have none, and no route checks them.
--
-- Safe on a live database and for the version still running: the new column is
-- nullable without a default (a catalog-only change), the table is tiny, and the old
-- code neither reads nor writes the column. lock_timeout keeps the migration from
-- queueing every request behind its ACCESS EXCLUSIVE lock when a long transaction
-- holds the table: it fails instead, and is retried.
SET LOCAL lock_timeout = '5s';

ALTER TABLE permissions ADD COLUMN key text;
ALTER TABLE permissions ADD CONSTRAINT permissions_key_key UNIQUE (key);

-- Existing rows named as a built-in become it; the missing built-ins are added, in
-- the spec's order (a fresh database numbers them 1 to 15).
UPDATE permissions SET key = name
WHERE name IN ('view-users', 'edit-users', 'delete-users', 'view-roles', 'edit-roles',
               'add-roles', 'delete-roles', 'view-permissions', 'edit-permissions',
               'add-permissions', 'delete-permissions', 'view-contributors',
               'edit-contributors', 'add-contributors', 'delete-contributors');

INSERT INTO permissions (key, name, description)
SELECT b.key, b.key, b.description
FROM (VALUES
    (1, 'view-users', 'View the list and details of user accounts'),
    (2, 'edit-users', 'Edit user accounts, their roles and profile images, and log users out'),
    (3, 'delete-users', 'Delete user accounts'),
    (4, 'view-roles', 'View roles and their permissions'),
    (5, 'edit-roles', 'Edit roles and the permissions they grant'),
    (6, 'add-roles', 'Add roles'),
    (7, 'delete-roles', 'Delete roles'),
    (8, 'view-permissions', 'View permissions'),
    (9, 'edit-permissions', 'Edit permissions'),
    (10, 'add-permissions', 'Add permissions'),
    (11, 'delete-permissions', 'Delete permissions'),
    (12, 'view-contributors', 'View contributors'),
    (13, 'edit-contributors', 'Edit contributors and their avatars'),
    (14, 'add-contributors', 'Add contributors'),
    (15, 'delete-contributors', 'Delete contributors')
) AS b (n, key, description)
WHERE NOT EXISTS (SELECT 1 FROM permissions p WHERE p.key = b.key)
ORDER BY b.n;

-- +goose Down
ALTER TABLE permissions DROP COLUMN key;
