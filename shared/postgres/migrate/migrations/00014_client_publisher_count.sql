-- The number of a client's publishers, kept in clients by triggers as 00008 keeps its
-- contributors (issue 13): the publishers list without a search reads a page near its
-- end backwards, and needs the list's length to know which end is nearer without
-- counting the client's index on every page.
-- Forward-only and safe on a live database: the column's constant default is metadata
-- only; creating the triggers locks publishers against writes until this transaction
-- commits, so the backfill below counts exactly what the triggers take over from.
-- +goose Up
ALTER TABLE clients ADD COLUMN publisher_count bigint NOT NULL DEFAULT 0;

-- Per statement, the net change of each client's count when publishers are added or
-- removed. A publisher moved to another client is counted per row: its row is updated
-- on every change of its links (series_count, 00003), and a statement trigger with
-- transition tables (they cannot go with UPDATE OF a column list) would collect those
-- rows on every link written; the row trigger's WHEN skips them without a call. One
-- UPDATE changes both clients, locking their rows in index order.
-- +goose StatementBegin
CREATE FUNCTION publishers_count() RETURNS trigger
LANGUAGE plpgsql AS $$
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
CREATE TRIGGER publishers_count_ins AFTER INSERT ON publishers
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();
CREATE TRIGGER publishers_count_moved AFTER UPDATE OF client_id ON publishers
    FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id)
    EXECUTE FUNCTION publishers_count();
CREATE TRIGGER publishers_count_del AFTER DELETE ON publishers
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();
CREATE TRIGGER publishers_count_truncate AFTER TRUNCATE ON publishers
    FOR EACH STATEMENT EXECUTE FUNCTION publishers_count();

UPDATE clients c SET publisher_count = (SELECT count(*) FROM publishers WHERE client_id = c.id);
