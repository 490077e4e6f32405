-- Links served are links: the API serves a contributor's links, a
-- publisher's website and the source of a description or an image only when they pass
-- catalog's link rule (catalog.WebLink, catalog.SourceText), whatever is stored; the
-- requests that write them are checked by the same rule. This cleans the values that
-- were stored before the check, by an import or by SQL, so that what the tables hold
-- is what the API serves:
--
--   * a link or website without a scheme that starts with a host name
--     ("twitter.com/oda", "//www.viz.com") gets https://, as the domain was already
--     read from it (catalog.WebsiteDomain);
--   * any other link that is not http(s)://host... is removed (a contributor's link)
--     or emptied (a website): javascript:, data:, ftp:, text;
--   * a source that a browser would read as an address of another scheme
--     ("javascript:...", also with tabs or line breaks inside, "data:...") is emptied;
--     plain text ("Wikipedia") stays.
--
-- The patterns here are the SQL reading of the Go rule, a little more lenient on what
-- they keep (the Go check at the output still decides what is served). Each table is
-- done in batches of 10,000 ids, each batch its own transaction under a lock timeout,
-- so a live database's writers wait for one batch at most; a rerun after an
-- interruption takes up the rows still to do (every step is idempotent). Forward-only:
-- what it removes was not a link to serve.
-- +goose NO TRANSACTION
-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    -- A value that starts as an http or https address with a host.
    web  constant text := '^https?://[^/?#\s\\]';
    -- A value without a scheme that starts with a host name (and perhaps a port).
    host constant text := '^(//)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+\.?(:[0-9]{1,5})?([/?#]|$)';
    -- A browser's reading of a scheme: leading C0 controls and spaces stripped, tabs
    -- and line breaks removed anywhere, then a letter, letters, digits, + - . and ":".
    scheme constant text := '^[a-z][a-z0-9+.-]*:';
    step constant bigint := 10000;
    lo   bigint;
    top  bigint;
BEGIN
    -- Contributors' links.
    lo := (SELECT min(id) FROM contributor_links);
    top := (SELECT max(id) FROM contributor_links);
    WHILE lo <= top LOOP
        SET LOCAL lock_timeout = '1s';
        SET LOCAL statement_timeout = 0;
        UPDATE contributor_links SET url = 'https://' || ltrim(btrim(url), '/')
         WHERE id >= lo AND id < lo + step
           AND btrim(url) !~* scheme AND btrim(url) ~* host;
        DELETE FROM contributor_links
         WHERE id >= lo AND id < lo + step
           AND (url !~* web OR url ~ '[\x01-\x1f\x7f]');
        COMMIT;
        lo := lo + step;
    END LOOP;

    -- Publishers' websites and image sources.
    lo := (SELECT min(id) FROM publishers);
    top := (SELECT max(id) FROM publishers);
    WHILE lo <= top LOOP
        SET LOCAL lock_timeout = '1s';
        SET LOCAL statement_timeout = 0;
        UPDATE publishers SET website = 'https://' || ltrim(btrim(website), '/')
         WHERE id >= lo AND id < lo + step
           AND btrim(website) !~* scheme AND btrim(website) ~* host;
        UPDATE publishers SET website = ''
         WHERE id >= lo AND id < lo + step AND website <> ''
           AND (website !~* web OR website ~ '[\x01-\x1f\x7f]');
        UPDATE publishers SET image_source = ''
         WHERE id >= lo AND id < lo + step AND image_source !~* web
           AND regexp_replace(regexp_replace(image_source, '^[\x01-\x20]+', ''), '[\t\n\r]', '', 'g') ~* scheme;
        COMMIT;
        lo := lo + step;
    END LOOP;

    -- Sources of publishers' descriptions.
    lo := (SELECT min(id) FROM publisher_descriptions);
    top := (SELECT max(id) FROM publisher_descriptions);
    WHILE lo <= top LOOP
        SET LOCAL lock_timeout = '1s';
        SET LOCAL statement_timeout = 0;
        UPDATE publisher_descriptions SET source = ''
         WHERE id >= lo AND id < lo + step AND source !~* web
           AND regexp_replace(regexp_replace(source, '^[\x01-\x20]+', ''), '[\t\n\r]', '', 'g') ~* scheme;
        COMMIT;
        lo := lo + step;
    END LOOP;

    -- Sources of contributors' descriptions.
    lo := (SELECT min(id) FROM contributor_descriptions);
    top := (SELECT max(id) FROM contributor_descriptions);
    WHILE lo <= top LOOP
        SET LOCAL lock_timeout = '1s';
        SET LOCAL statement_timeout = 0;
        UPDATE contributor_descriptions SET source = ''
         WHERE id >= lo AND id < lo + step AND source !~* web
           AND regexp_replace(regexp_replace(source, '^[\x01-\x20]+', ''), '[\t\n\r]', '', 'g') ~* scheme;
        COMMIT;
        lo := lo + step;
    END LOOP;
END
$$;
-- +goose StatementEnd
