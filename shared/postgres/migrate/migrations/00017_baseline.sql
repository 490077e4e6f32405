-- +goose Up
-- squawk-ignore-file adding-serial-primary-key-field, prefer-bigint-over-int, prefer-bigint-over-smallint
-- (squawk reads pg_dump's ALTER TABLE ... ADD CONSTRAINT ... PRIMARY KEY as a key added
-- to a live table; here every table is created a few statements earlier in the same
-- transaction. The integer column is a volume number, the smallints 0/1 flags.)
-- The baseline: the whole schema as the first seventeen migrations (never released)
-- left it, created directly, so that a new database runs one short transaction. It is
-- generated from pg_dump --schema-only of a database migrated through them and never
-- edited; later changes are migrations of their own (docs/migrations.md). Its version
-- is 17, so that a database those migrations built has it already and goes on from
-- the next version.
--
-- On an empty database nothing waits on these locks; the timeouts are the rule of
-- every migration here and cost nothing.
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '60s';
-- As in pg_dump's output: the functions come before the tables their SQL bodies read.
SET LOCAL check_function_bodies = false;


------------------------------------------------------------------------------
-- Extensions
------------------------------------------------------------------------------

CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

------------------------------------------------------------------------------
-- Functions: search texts and the triggers that keep counts and search texts
------------------------------------------------------------------------------

-- +goose StatementBegin
CREATE FUNCTION contributor_search_text(first_name text, last_name text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT lower(first_name || ' ' || coalesce(last_name, ''))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contributors_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE clients SET contributor_count = 0 WHERE contributor_count <> 0;
    ELSIF TG_OP = 'INSERT' THEN
        UPDATE clients c SET contributor_count = c.contributor_count + d.n
          FROM (SELECT client_id, count(*) AS n FROM new_rows GROUP BY client_id) d
         WHERE c.id = d.client_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE clients c SET contributor_count = c.contributor_count - d.n
          FROM (SELECT client_id, count(*) AS n FROM old_rows GROUP BY client_id) d
         WHERE c.id = d.client_id;
    ELSE
        UPDATE clients c SET contributor_count = c.contributor_count + d.n
          FROM (SELECT client_id, sum(n) AS n
                  FROM (SELECT client_id, 1 AS n FROM new_rows
                        UNION ALL SELECT client_id, -1 FROM old_rows) m
                 GROUP BY client_id HAVING sum(n) <> 0) d
         WHERE c.id = d.client_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contributors_fill_search() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.search := contributor_search_text(NEW.first_name, NEW.last_name);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contributors_search_grams() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM contributor_search_grams;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT r.client_id, g.gram, count(*) FROM new_rows r, search_grams(r.search) g(gram)
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT r.client_id, g.gram, -count(*) FROM old_rows r, search_grams(r.search) g(gram)
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    ELSE
        INSERT INTO contributor_search_grams AS s (client_id, gram, n)
        SELECT m.client_id, m.gram, sum(m.d)
        FROM (SELECT r.client_id, g.gram, 1 AS d FROM new_rows r, search_grams(r.search) g(gram)
              UNION ALL
              SELECT r.client_id, g.gram, -1 FROM old_rows r, search_grams(r.search) g(gram)) m
        GROUP BY 1, 2 HAVING sum(m.d) <> 0 ORDER BY 1, 2
        ON CONFLICT (client_id, gram) DO UPDATE SET n = s.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION publishers_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE clients SET publisher_count = 0 WHERE publisher_count <> 0;
    ELSIF TG_OP = 'INSERT' THEN
        UPDATE clients c SET publisher_count = c.publisher_count + d.n
          FROM (SELECT client_id, count(*) AS n FROM new_rows GROUP BY client_id) d
         WHERE c.id = d.client_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE clients c SET publisher_count = c.publisher_count - d.n
          FROM (SELECT client_id, count(*) AS n FROM old_rows GROUP BY client_id) d
         WHERE c.id = d.client_id;
    ELSE
        UPDATE clients SET publisher_count = publisher_count + CASE WHEN id = NEW.client_id THEN 1 ELSE -1 END
         WHERE id IN (OLD.client_id, NEW.client_id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION publishers_recount() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.series_count := (SELECT count(*) FROM series_publishers sp
                         WHERE sp.publisher_id = NEW.id AND sp.client_id = NEW.client_id);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION search_grams(t text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT DISTINCT substr(t, i, k)
    FROM generate_series(1, length(t)) i, generate_series(1, 2) k
    WHERE i + k - 1 <= length(t)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_aliases_sync_links() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE series_publishers sp SET search = series_search_text(sp.series_id)
         WHERE sp.series_id IN (SELECT series_id FROM new_aliases);
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE series_publishers sp SET search = series_search_text(sp.series_id)
         WHERE sp.series_id IN (SELECT series_id FROM old_aliases);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_publishers_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE publishers p SET series_count = p.series_count + d.n
          FROM (SELECT publisher_id, client_id, count(*) AS n FROM new_links
                GROUP BY publisher_id, client_id) d
         WHERE p.id = d.publisher_id AND p.client_id = d.client_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE publishers p SET series_count = p.series_count - d.n
          FROM (SELECT publisher_id, client_id, count(*) AS n FROM old_links
                GROUP BY publisher_id, client_id) d
         WHERE p.id = d.publisher_id AND p.client_id = d.client_id;
    ELSE
        UPDATE publishers p
           SET series_count = (SELECT count(*) FROM series_publishers sp
                               WHERE sp.publisher_id = p.id AND sp.client_id = p.client_id)
         WHERE p.id IN (SELECT d.publisher_id FROM (
                            (SELECT series_id, publisher_id, client_id FROM old_links
                             EXCEPT SELECT series_id, publisher_id, client_id FROM new_links)
                            UNION ALL
                            (SELECT series_id, publisher_id, client_id FROM new_links
                             EXCEPT SELECT series_id, publisher_id, client_id FROM old_links)) d);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_publishers_fill() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.client_id IS NOT NULL AND NEW.name IS NOT NULL
       AND NEW.created_at IS NOT NULL AND NEW.search IS NOT NULL THEN
        NEW.search := lower(NEW.search);
        RETURN NEW;
    END IF;
    SELECT s.client_id, s.name, s.created_at, series_search_text(s.id)
      INTO NEW.client_id, NEW.name, NEW.created_at, NEW.search
      FROM series s WHERE s.id = NEW.series_id;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_search_text(sid bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT lower(s.name || coalesce((SELECT string_agg(chr(31) || a.title, '' ORDER BY a.id)
                                     FROM series_aliases a WHERE a.series_id = s.id), ''))
    FROM series s WHERE s.id = sid
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION series_sync_links() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE series_publishers sp
       SET client_id = n.client_id, name = n.name, created_at = n.created_at,
           search = series_search_text(n.id)
      FROM new_series n JOIN old_series o ON o.id = n.id
     WHERE sp.series_id = n.id
       AND (n.client_id, n.name, n.created_at) IS DISTINCT FROM (o.client_id, o.name, o.created_at);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION users_count() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    d bigint;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE user_count SET n = 0;
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO d FROM new_rows;
    ELSE
        SELECT -count(*) INTO d FROM old_rows;
    END IF;
    IF d <> 0 THEN
        UPDATE user_count SET n = n + d;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION users_fill_search() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.search := lower(NEW.username);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

------------------------------------------------------------------------------
-- Tables
------------------------------------------------------------------------------

CREATE TABLE avatar_invalidations (
    user_id bigint NOT NULL,
    ref text,
    invalidated_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE clients (
    id bigint NOT NULL,
    name text NOT NULL,
    contributor_count bigint DEFAULT 0 NOT NULL,
    publisher_count bigint DEFAULT 0 NOT NULL
);

CREATE TABLE contributor_aliases (
    id bigint NOT NULL,
    contributor_id bigint NOT NULL,
    title text NOT NULL,
    language text NOT NULL
);

CREATE TABLE contributor_descriptions (
    id bigint NOT NULL,
    contributor_id bigint NOT NULL,
    description text NOT NULL,
    language text NOT NULL,
    source text DEFAULT ''::text NOT NULL
);

CREATE TABLE contributor_links (
    id bigint NOT NULL,
    contributor_id bigint NOT NULL,
    url text NOT NULL
);

CREATE TABLE contributor_locks (
    contributor_id bigint NOT NULL,
    locked_by bigint NOT NULL,
    acquired_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

CREATE TABLE contributor_relations (
    id bigint NOT NULL,
    contributor_id bigint NOT NULL,
    related_id bigint NOT NULL,
    type text NOT NULL,
    CONSTRAINT contributor_relations_check CHECK ((contributor_id <> related_id))
);

CREATE TABLE contributor_search_grams (
    client_id bigint NOT NULL,
    gram text NOT NULL,
    n bigint NOT NULL
);

CREATE TABLE contributors (
    id bigint NOT NULL,
    client_id bigint NOT NULL,
    first_name text NOT NULL,
    last_name text,
    slug text NOT NULL,
    gender text,
    type text,
    public boolean DEFAULT false NOT NULL,
    image text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    search text
);

CREATE TABLE oauth_connections (
    id bigint NOT NULL,
    user_id bigint NOT NULL,
    provider text NOT NULL,
    provider_user_id text NOT NULL,
    provider_username text NOT NULL,
    provider_email text,
    provider_avatar text,
    linked_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT oauth_connections_provider_check CHECK ((provider = ANY (ARRAY['google'::text, 'discord'::text, 'github'::text])))
);

CREATE TABLE permissions (
    id bigint NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    key text
);

CREATE TABLE publisher_aliases (
    id bigint NOT NULL,
    publisher_id bigint NOT NULL,
    title text NOT NULL,
    language text NOT NULL
);

CREATE TABLE publisher_descriptions (
    id bigint NOT NULL,
    publisher_id bigint NOT NULL,
    description text NOT NULL,
    language text NOT NULL,
    source text DEFAULT ''::text NOT NULL
);

CREATE TABLE publisher_relations (
    id bigint NOT NULL,
    publisher_id bigint NOT NULL,
    related_id bigint NOT NULL,
    type text NOT NULL,
    CONSTRAINT publisher_relations_check CHECK ((publisher_id <> related_id))
);

CREATE TABLE publishers (
    id bigint NOT NULL,
    client_id bigint NOT NULL,
    name text NOT NULL,
    short_name text DEFAULT ''::text NOT NULL,
    slug text NOT NULL,
    country text DEFAULT ''::text NOT NULL,
    website text DEFAULT ''::text NOT NULL,
    headquarter text DEFAULT ''::text NOT NULL,
    founding_date date,
    image text DEFAULT ''::text NOT NULL,
    image_source text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    series_count bigint DEFAULT 0 NOT NULL
);

CREATE TABLE role_permissions (
    role_id bigint NOT NULL,
    permission_id bigint NOT NULL
);

CREATE TABLE roles (
    id bigint NOT NULL,
    name text NOT NULL,
    description text,
    is_default boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE series (
    id bigint NOT NULL,
    client_id bigint NOT NULL,
    name text NOT NULL,
    slug text NOT NULL,
    type text NOT NULL,
    origin text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE series_aliases (
    id bigint NOT NULL,
    series_id bigint NOT NULL,
    title text NOT NULL,
    language text NOT NULL
);

CREATE TABLE series_contributors (
    series_id bigint NOT NULL,
    contributor_id bigint NOT NULL,
    role text DEFAULT 'author'::text NOT NULL
);

CREATE TABLE series_descriptions (
    id bigint NOT NULL,
    series_id bigint NOT NULL,
    language text NOT NULL,
    description text NOT NULL
);

CREATE TABLE series_publishers (
    series_id bigint NOT NULL,
    publisher_id bigint NOT NULL,
    client_id bigint,
    name text,
    created_at timestamp with time zone,
    search text
);

CREATE TABLE series_tags (
    series_id bigint NOT NULL,
    tag_id bigint NOT NULL
);

CREATE TABLE sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone
);

CREATE TABLE tags (
    id bigint NOT NULL,
    client_id bigint NOT NULL,
    name text NOT NULL,
    type text NOT NULL
);

CREATE TABLE user_count (
    only_row boolean DEFAULT true NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT user_count_only_row_check CHECK (only_row)
);

CREATE TABLE user_locks (
    user_id bigint NOT NULL,
    locked_by bigint NOT NULL,
    acquired_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

CREATE TABLE user_roles (
    user_id bigint NOT NULL,
    role_id bigint NOT NULL
);

CREATE TABLE users (
    id bigint NOT NULL,
    slug text NOT NULL,
    username text NOT NULL,
    password_hash text,
    age_verified boolean DEFAULT false NOT NULL,
    profile_image text,
    registered timestamp with time zone DEFAULT now() NOT NULL,
    search text
);

CREATE TABLE volumes (
    id bigint NOT NULL,
    series_id bigint NOT NULL,
    number integer NOT NULL,
    title text DEFAULT ''::text NOT NULL,
    cover_path text DEFAULT ''::text NOT NULL,
    aspect_ratio real DEFAULT 0.7 NOT NULL,
    nsfw smallint DEFAULT 0 NOT NULL,
    nsfw18 smallint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT volumes_nsfw18_check CHECK ((nsfw18 = ANY (ARRAY[0, 1]))),
    CONSTRAINT volumes_nsfw_check CHECK ((nsfw = ANY (ARRAY[0, 1])))
);

------------------------------------------------------------------------------
-- Identity columns
------------------------------------------------------------------------------

ALTER TABLE contributor_aliases ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME contributor_aliases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE contributor_descriptions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME contributor_descriptions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE contributor_links ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME contributor_links_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE contributor_relations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME contributor_relations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE contributors ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME contributors_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE oauth_connections ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME oauth_connections_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE permissions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME permissions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE publisher_aliases ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME publisher_aliases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE publisher_descriptions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME publisher_descriptions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE publisher_relations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME publisher_relations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE publishers ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME publishers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE roles ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME roles_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE series_aliases ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME series_aliases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE series_descriptions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME series_descriptions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE series ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME series_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE tags ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME tags_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE users ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE volumes ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME volumes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

------------------------------------------------------------------------------
-- Keys and checks
------------------------------------------------------------------------------

ALTER TABLE ONLY avatar_invalidations
    ADD CONSTRAINT avatar_invalidations_pkey PRIMARY KEY (user_id);

ALTER TABLE ONLY clients
    ADD CONSTRAINT clients_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributor_aliases
    ADD CONSTRAINT contributor_aliases_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributor_descriptions
    ADD CONSTRAINT contributor_descriptions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributor_links
    ADD CONSTRAINT contributor_links_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributor_locks
    ADD CONSTRAINT contributor_locks_pkey PRIMARY KEY (contributor_id);

ALTER TABLE ONLY contributor_relations
    ADD CONSTRAINT contributor_relations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributor_search_grams
    ADD CONSTRAINT contributor_search_grams_pkey PRIMARY KEY (client_id, gram);

ALTER TABLE ONLY contributors
    ADD CONSTRAINT contributors_pkey PRIMARY KEY (id);

ALTER TABLE ONLY contributors
    ADD CONSTRAINT contributors_slug_key UNIQUE (slug);

ALTER TABLE ONLY oauth_connections
    ADD CONSTRAINT oauth_connections_account_key UNIQUE (provider, provider_user_id);

ALTER TABLE ONLY oauth_connections
    ADD CONSTRAINT oauth_connections_pkey PRIMARY KEY (id);

ALTER TABLE ONLY oauth_connections
    ADD CONSTRAINT oauth_connections_user_provider_key UNIQUE (user_id, provider);

ALTER TABLE ONLY permissions
    ADD CONSTRAINT permissions_key_key UNIQUE (key);

ALTER TABLE ONLY permissions
    ADD CONSTRAINT permissions_name_key UNIQUE (name);

ALTER TABLE ONLY permissions
    ADD CONSTRAINT permissions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY publisher_aliases
    ADD CONSTRAINT publisher_aliases_pkey PRIMARY KEY (id);

ALTER TABLE ONLY publisher_descriptions
    ADD CONSTRAINT publisher_descriptions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY publisher_relations
    ADD CONSTRAINT publisher_relations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY publishers
    ADD CONSTRAINT publishers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY publishers
    ADD CONSTRAINT publishers_slug_key UNIQUE (slug);

ALTER TABLE ONLY role_permissions
    ADD CONSTRAINT role_permissions_pkey PRIMARY KEY (role_id, permission_id);

ALTER TABLE ONLY roles
    ADD CONSTRAINT roles_name_key UNIQUE (name);

ALTER TABLE ONLY roles
    ADD CONSTRAINT roles_pkey PRIMARY KEY (id);

ALTER TABLE ONLY series_aliases
    ADD CONSTRAINT series_aliases_pkey PRIMARY KEY (id);

ALTER TABLE ONLY series_contributors
    ADD CONSTRAINT series_contributors_pkey PRIMARY KEY (series_id, contributor_id, role);

ALTER TABLE ONLY series_descriptions
    ADD CONSTRAINT series_descriptions_language_key UNIQUE (series_id, language);

ALTER TABLE ONLY series_descriptions
    ADD CONSTRAINT series_descriptions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY series
    ADD CONSTRAINT series_pkey PRIMARY KEY (id);

ALTER TABLE ONLY series_publishers
    ADD CONSTRAINT series_publishers_pkey PRIMARY KEY (series_id, publisher_id);

ALTER TABLE ONLY series
    ADD CONSTRAINT series_slug_key UNIQUE (slug);

ALTER TABLE ONLY series_tags
    ADD CONSTRAINT series_tags_pkey PRIMARY KEY (series_id, tag_id);

ALTER TABLE ONLY sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tags
    ADD CONSTRAINT tags_pkey PRIMARY KEY (id);

ALTER TABLE ONLY user_count
    ADD CONSTRAINT user_count_pkey PRIMARY KEY (only_row);

ALTER TABLE ONLY user_locks
    ADD CONSTRAINT user_locks_pkey PRIMARY KEY (user_id);

ALTER TABLE ONLY user_roles
    ADD CONSTRAINT user_roles_pkey PRIMARY KEY (user_id, role_id);

ALTER TABLE ONLY users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY users
    ADD CONSTRAINT users_slug_key UNIQUE (slug);

ALTER TABLE ONLY volumes
    ADD CONSTRAINT volumes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY volumes
    ADD CONSTRAINT volumes_series_number_key UNIQUE (series_id, number);

------------------------------------------------------------------------------
-- Indexes
------------------------------------------------------------------------------

CREATE INDEX contributor_aliases_contributor ON contributor_aliases USING btree (contributor_id);

CREATE INDEX contributor_descriptions_contributor ON contributor_descriptions USING btree (contributor_id);

CREATE INDEX contributor_links_contributor ON contributor_links USING btree (contributor_id);

CREATE INDEX contributor_locks_locked_by ON contributor_locks USING btree (locked_by);

CREATE INDEX contributor_relations_contributor ON contributor_relations USING btree (contributor_id);

CREATE INDEX contributor_relations_related ON contributor_relations USING btree (related_id);

CREATE UNIQUE INDEX contributors_client_name_key ON contributors USING btree (client_id, lower(first_name), lower(COALESCE(last_name, ''::text)));

CREATE INDEX contributors_client_order_search ON contributors USING btree (client_id, first_name, last_name, id) INCLUDE (search);

CREATE INDEX contributors_client_search_trgm ON contributors USING gin (client_id, search gin_trgm_ops);

CREATE INDEX publisher_aliases_publisher ON publisher_aliases USING btree (publisher_id);

CREATE INDEX publisher_descriptions_publisher ON publisher_descriptions USING btree (publisher_id);

CREATE INDEX publisher_relations_publisher ON publisher_relations USING btree (publisher_id);

CREATE INDEX publisher_relations_related ON publisher_relations USING btree (related_id);

CREATE INDEX publishers_client_created ON publishers USING btree (client_id, created_at, id);

CREATE INDEX publishers_client_id ON publishers USING btree (client_id, id);

CREATE INDEX publishers_client_name ON publishers USING btree (client_id, name, id);

CREATE INDEX publishers_name_trgm ON publishers USING gin (name gin_trgm_ops);

CREATE INDEX role_permissions_permission ON role_permissions USING btree (permission_id);

CREATE UNIQUE INDEX roles_single_default ON roles USING btree (is_default) WHERE is_default;

CREATE INDEX series_aliases_series ON series_aliases USING btree (series_id);

CREATE INDEX series_aliases_title_trgm ON series_aliases USING gin (title gin_trgm_ops);

CREATE INDEX series_client_created ON series USING btree (client_id, created_at, id);

CREATE INDEX series_client_name ON series USING btree (client_id, name, id);

CREATE INDEX series_contributors_contributor ON series_contributors USING btree (contributor_id);

CREATE INDEX series_publishers_list_created ON series_publishers USING btree (publisher_id, client_id, created_at, series_id);

CREATE INDEX series_publishers_list_id ON series_publishers USING btree (publisher_id, client_id, series_id);

CREATE INDEX series_publishers_list_id_search ON series_publishers USING btree (publisher_id, client_id, series_id) INCLUDE (search);

CREATE INDEX series_publishers_list_name ON series_publishers USING btree (publisher_id, client_id, name, series_id);

CREATE INDEX series_publishers_search_trgm ON series_publishers USING gin (publisher_id, search gin_trgm_ops);

CREATE INDEX series_tags_tag ON series_tags USING btree (tag_id);

CREATE INDEX sessions_user_live ON sessions USING btree (user_id) WHERE (revoked_at IS NULL);

CREATE INDEX tags_client_name ON tags USING btree (client_id, name, id);

CREATE UNIQUE INDEX tags_client_name_key ON tags USING btree (client_id, lower(name), type);

CREATE INDEX user_locks_locked_by ON user_locks USING btree (locked_by);

CREATE INDEX user_roles_role ON user_roles USING btree (role_id);

CREATE INDEX users_registered ON users USING btree (registered, id);

CREATE INDEX users_search_trgm ON users USING gin (search gin_trgm_ops);

CREATE UNIQUE INDEX users_username_key ON users USING btree (lower(username));

CREATE INDEX users_username_trgm ON users USING gin (username gin_trgm_ops);

------------------------------------------------------------------------------
-- Foreign keys
------------------------------------------------------------------------------

ALTER TABLE ONLY contributor_aliases
    ADD CONSTRAINT contributor_aliases_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_descriptions
    ADD CONSTRAINT contributor_descriptions_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_links
    ADD CONSTRAINT contributor_links_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_locks
    ADD CONSTRAINT contributor_locks_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_locks
    ADD CONSTRAINT contributor_locks_locked_by_fkey FOREIGN KEY (locked_by) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_relations
    ADD CONSTRAINT contributor_relations_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_relations
    ADD CONSTRAINT contributor_relations_related_id_fkey FOREIGN KEY (related_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributor_search_grams
    ADD CONSTRAINT contributor_search_grams_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients(id) ON DELETE CASCADE;

ALTER TABLE ONLY contributors
    ADD CONSTRAINT contributors_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients(id);

ALTER TABLE ONLY oauth_connections
    ADD CONSTRAINT oauth_connections_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY publisher_aliases
    ADD CONSTRAINT publisher_aliases_publisher_id_fkey FOREIGN KEY (publisher_id) REFERENCES publishers(id) ON DELETE CASCADE;

ALTER TABLE ONLY publisher_descriptions
    ADD CONSTRAINT publisher_descriptions_publisher_id_fkey FOREIGN KEY (publisher_id) REFERENCES publishers(id) ON DELETE CASCADE;

ALTER TABLE ONLY publisher_relations
    ADD CONSTRAINT publisher_relations_publisher_id_fkey FOREIGN KEY (publisher_id) REFERENCES publishers(id) ON DELETE CASCADE;

ALTER TABLE ONLY publisher_relations
    ADD CONSTRAINT publisher_relations_related_id_fkey FOREIGN KEY (related_id) REFERENCES publishers(id) ON DELETE CASCADE;

ALTER TABLE ONLY publishers
    ADD CONSTRAINT publishers_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients(id);

ALTER TABLE ONLY role_permissions
    ADD CONSTRAINT role_permissions_permission_id_fkey FOREIGN KEY (permission_id) REFERENCES permissions(id) ON DELETE CASCADE;

ALTER TABLE ONLY role_permissions
    ADD CONSTRAINT role_permissions_role_id_fkey FOREIGN KEY (role_id) REFERENCES roles(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_aliases
    ADD CONSTRAINT series_aliases_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

ALTER TABLE ONLY series
    ADD CONSTRAINT series_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients(id);

ALTER TABLE ONLY series_contributors
    ADD CONSTRAINT series_contributors_contributor_id_fkey FOREIGN KEY (contributor_id) REFERENCES contributors(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_contributors
    ADD CONSTRAINT series_contributors_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_descriptions
    ADD CONSTRAINT series_descriptions_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_publishers
    ADD CONSTRAINT series_publishers_publisher_id_fkey FOREIGN KEY (publisher_id) REFERENCES publishers(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_publishers
    ADD CONSTRAINT series_publishers_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_tags
    ADD CONSTRAINT series_tags_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

ALTER TABLE ONLY series_tags
    ADD CONSTRAINT series_tags_tag_id_fkey FOREIGN KEY (tag_id) REFERENCES tags(id) ON DELETE CASCADE;

ALTER TABLE ONLY sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY tags
    ADD CONSTRAINT tags_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients(id);

ALTER TABLE ONLY user_locks
    ADD CONSTRAINT user_locks_locked_by_fkey FOREIGN KEY (locked_by) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY user_locks
    ADD CONSTRAINT user_locks_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY user_roles
    ADD CONSTRAINT user_roles_role_id_fkey FOREIGN KEY (role_id) REFERENCES roles(id) ON DELETE CASCADE;

ALTER TABLE ONLY user_roles
    ADD CONSTRAINT user_roles_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY volumes
    ADD CONSTRAINT volumes_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) ON DELETE CASCADE;

------------------------------------------------------------------------------
-- Triggers
------------------------------------------------------------------------------

CREATE TRIGGER contributors_count_del AFTER DELETE ON contributors REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_count();

CREATE TRIGGER contributors_count_ins AFTER INSERT ON contributors REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_count();

CREATE TRIGGER contributors_count_truncate AFTER TRUNCATE ON contributors FOR EACH STATEMENT EXECUTE FUNCTION contributors_count();

CREATE TRIGGER contributors_count_upd AFTER UPDATE ON contributors REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_count();

CREATE TRIGGER contributors_fill_search BEFORE INSERT OR UPDATE OF first_name, last_name, search ON contributors FOR EACH ROW EXECUTE FUNCTION contributors_fill_search();

CREATE TRIGGER contributors_search_grams_del AFTER DELETE ON contributors REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();

CREATE TRIGGER contributors_search_grams_ins AFTER INSERT ON contributors REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();

CREATE TRIGGER contributors_search_grams_truncate AFTER TRUNCATE ON contributors FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();

CREATE TRIGGER contributors_search_grams_upd AFTER UPDATE ON contributors REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contributors_search_grams();

CREATE TRIGGER publishers_count_del AFTER DELETE ON publishers REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();

CREATE TRIGGER publishers_count_ins AFTER INSERT ON publishers REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();

CREATE TRIGGER publishers_count_moved AFTER UPDATE OF client_id ON publishers FOR EACH ROW WHEN ((old.client_id IS DISTINCT FROM new.client_id)) EXECUTE FUNCTION publishers_count();

CREATE TRIGGER publishers_count_truncate AFTER TRUNCATE ON publishers FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();

CREATE TRIGGER publishers_recount BEFORE UPDATE OF client_id ON publishers FOR EACH ROW WHEN ((old.client_id IS DISTINCT FROM new.client_id)) EXECUTE FUNCTION publishers_recount();

CREATE TRIGGER series_aliases_sync_links_del AFTER DELETE ON series_aliases REFERENCING OLD TABLE AS old_aliases FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();

CREATE TRIGGER series_aliases_sync_links_ins AFTER INSERT ON series_aliases REFERENCING NEW TABLE AS new_aliases FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();

CREATE TRIGGER series_aliases_sync_links_upd AFTER UPDATE ON series_aliases REFERENCING OLD TABLE AS old_aliases NEW TABLE AS new_aliases FOR EACH STATEMENT EXECUTE FUNCTION series_aliases_sync_links();

CREATE TRIGGER series_publishers_count_del AFTER DELETE ON series_publishers REFERENCING OLD TABLE AS old_links FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();

CREATE TRIGGER series_publishers_count_ins AFTER INSERT ON series_publishers REFERENCING NEW TABLE AS new_links FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();

CREATE TRIGGER series_publishers_count_upd AFTER UPDATE ON series_publishers REFERENCING OLD TABLE AS old_links NEW TABLE AS new_links FOR EACH STATEMENT EXECUTE FUNCTION series_publishers_count();

CREATE TRIGGER series_publishers_fill BEFORE INSERT OR UPDATE OF series_id ON series_publishers FOR EACH ROW EXECUTE FUNCTION series_publishers_fill();

CREATE TRIGGER series_sync_links AFTER UPDATE ON series REFERENCING OLD TABLE AS old_series NEW TABLE AS new_series FOR EACH STATEMENT EXECUTE FUNCTION series_sync_links();

CREATE TRIGGER users_count_del AFTER DELETE ON users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION users_count();

CREATE TRIGGER users_count_ins AFTER INSERT ON users REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION users_count();

CREATE TRIGGER users_count_truncate AFTER TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION users_count();

CREATE TRIGGER users_fill_search BEFORE INSERT OR UPDATE OF username, search ON users FOR EACH ROW EXECUTE FUNCTION users_fill_search();

------------------------------------------------------------------------------
-- Built-in rows: the permissions the routes check, and the kept user count
------------------------------------------------------------------------------

INSERT INTO permissions VALUES (1, 'view-users', 'View the list and details of user accounts', 'view-users');
INSERT INTO permissions VALUES (2, 'edit-users', 'Edit user accounts, their roles and profile images, and log users out', 'edit-users');
INSERT INTO permissions VALUES (3, 'delete-users', 'Delete user accounts', 'delete-users');
INSERT INTO permissions VALUES (4, 'view-roles', 'View roles and their permissions', 'view-roles');
INSERT INTO permissions VALUES (5, 'edit-roles', 'Edit roles and the permissions they grant', 'edit-roles');
INSERT INTO permissions VALUES (6, 'add-roles', 'Add roles', 'add-roles');
INSERT INTO permissions VALUES (7, 'delete-roles', 'Delete roles', 'delete-roles');
INSERT INTO permissions VALUES (8, 'view-permissions', 'View permissions', 'view-permissions');
INSERT INTO permissions VALUES (9, 'edit-permissions', 'Edit permissions', 'edit-permissions');
INSERT INTO permissions VALUES (10, 'add-permissions', 'Add permissions', 'add-permissions');
INSERT INTO permissions VALUES (11, 'delete-permissions', 'Delete permissions', 'delete-permissions');
INSERT INTO permissions VALUES (12, 'view-contributors', 'View contributors', 'view-contributors');
INSERT INTO permissions VALUES (13, 'edit-contributors', 'Edit contributors and their avatars', 'edit-contributors');
INSERT INTO permissions VALUES (14, 'add-contributors', 'Add contributors', 'add-contributors');
INSERT INTO permissions VALUES (15, 'delete-contributors', 'Delete contributors', 'delete-contributors');
INSERT INTO user_count VALUES (true, 0);

SELECT setval(pg_get_serial_sequence('permissions', 'id'), (SELECT max(id) FROM permissions));
