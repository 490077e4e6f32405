package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
)

// Tags returns the client's tags ordered by name. A client without tags has none.
func (db *DB) Tags(ctx context.Context, client int64) ([]catalog.Tag, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT id, name, type
		FROM tags
		WHERE client_id = $1
		ORDER BY name, id`, client)
	// GET /tags is the catalog's most requested list: its rows are scanned by position
	// into one set of targets (ForEachRow). RowToStructByName would work each row's
	// targets out by reflection, and a function per row, as CollectRows takes, hands
	// pgx the addresses of a fresh tag, which then escapes to the heap: one allocation
	// per tag.
	tags := []catalog.Tag{} // a client without tags: [], not null
	var t catalog.Tag
	_, err := pgx.ForEachRow(rows, []any{&t.ID, &t.Name, &t.Type}, func() error {
		tags = append(tags, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tags of client %d: %w", client, err)
	}
	return tags, nil
}

// TagByID returns a tag with its number of series (of the tag's client);
// apperr.NotFound when there is none. The number is kept on the tag's row by triggers
// (migration 00024): counting the links on each request read about a 230th of the
// catalog per tag. A tag not counted yet (before 00026's backfill ends) is counted here.
func (db *DB) TagByID(ctx context.Context, id int64) (catalog.TagDetail, error) {
	rows, _ := db.Pool.Query(ctx, `
		SELECT t.id, t.name, t.type,
		       coalesce(t.series_count, tag_series_count(t.id, t.client_id)) AS series_count
		FROM tags t
		WHERE t.id = $1`, id)
	tag, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[catalog.TagDetail])
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.TagDetail{}, apperr.New(apperr.NotFound, catalog.MsgTagNotFound)
	}
	if err != nil {
		return catalog.TagDetail{}, fmt.Errorf("load tag %d: %w", id, err)
	}
	return tag, nil
}
