-- +goose Up
-- What TestSquawk must refuse: a rewrite-free but ACCESS EXCLUSIVE change of a live
-- table, without a lock timeout, that would queue every read of users behind it.
ALTER TABLE users ADD COLUMN nickname text;
