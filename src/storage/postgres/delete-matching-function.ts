// Part of schema step 1 (migrations.ts): `latch_delete_matching`, delete by filter as ONE
// set-based statement after the store's row lock (FOR NO KEY UPDATE, the lock every Write
// function takes, so the selection and the delete see no other writer of the store on any node):
// the filter's rows are picked in Read order (tuples.ts readPlan: (object, relation, user), or
// (relation, object) for an object type with a user) straight off an index, numbered by a
// row_number whose run condition stops the scan at `p_limit` + 1 rows, then one DELETE … USING (by
// row id) feeds one INSERT of the compact changelog rows (a data-modifying CTE, below), and the
// same statement aggregates the deleted keys for the answer: ONE text of every key's object,
// relation and user (column encoding, db.ts enc) in Read order, a tuple's fields separated by
// \x01\x03 and tuples by \x01\x04 (the column encoding writes \x01 only as \x01\x01 or \x01\x02,
// so no field holds a separator): one sort and one string, where three text arrays took three
// sorts and node-postgres's array parser.
// Nothing matched → nothing changes and the revision
// is the store's current one.
//
// The filter: `p_type` (object type) or `p_object` (one object), and optionally `p_relation` and
// `p_user`; the statement is built from fixed fragments and takes every value as a parameter.
// `p_after_*`: the revision the same filter's previous request committed and the last tuple it
// deleted (column encoding); when the store is still at that revision the scan starts after that
// tuple in Read order, instead of reading again every row it skips and every index entry of the
// rows already deleted (without it, 100k deleted in requests of 10,000 read the skipped rows 55
// times over in place of 10). NULL: from the start.
// Access paths (enable_seqscan / hashjoin / mergejoin off inside the function: a scan of the
// whole table is never right here, and right after a bulk load the statistics may say otherwise):
//   an object type, no user → the primary key's range of the type's objects (`T:` ≤ object < `T;`,
//     byte order), relation a residual filter; an object type and a user → the by-user index,
//     in (relation, object) order, the same object range within each relation (the index holds
//     no type); an object → the primary key's prefix.
//
// The changelog: ONE compact row per object type of a request, not one row per deleted tuple.
// `latch_changes.bulk` set means the row stands for the revision's changes at seq `seq - n + 1` …
// `seq` (n = its entries; the row is keyed at its LAST change's position, as the key-value
// backends key a bulk record, codec.ts BULK_DELETE), all deletes at the row's `ms` and of its
// `object_type`. `bulk` is JSON text `[[o, r, u, p], …]` in seq order: the deleted tuple's stored
// object, relation and user (column encoding, db.ts enc) and `p`, its state as the pair
// `latch_prior` makes (write-function.ts), or 0 for a tuple with neither condition nor expiry.
// The usual request (one object type, no condition or expiry, no field JSON escapes: `lean`) has
// its `bulk` made from the answer's key text by replacing the separators with JSON's punctuation
// (two passes of replace over one string; LEAN_UNSAFE checks the text once): json_agg of
// json_build_array per tuple took ≈ 12 ms of 10,000 tuples' ≈ 40 ms in the function, the
// replace ≈ 2. Any other request builds it with json_agg, per object type.
// The row's own object, relation and user are '' and its condition and expires_ms NULL. Every
// reader expands it into the per-change rows a Write's deletes would have given (changes.ts:
// ReadChanges pages whose cursor may fall inside a row, the type filter, start times; the
// changesSince stream of index catch-up, followers and past views), so no client sees a
// difference. Why: one changelog INSERT per tuple (a heap tuple, two index entries and their WAL)
// was about half of the statement. Seq ranges are contiguous per type: rows are picked in Read
// order, the tuples of one object type share the prefix `T:` so in object order they form one
// run, and a filter with a user is always of one type. The row lock, revision and
// the end every write function shares, latch_end_revision (the latch_revisions row and the
// NOTIFY, the changes inline for at most 32: the rows deleted, never the one picked past the
// limit), are those of every write function.
// Once released, a change is a new schema step (CREATE OR REPLACE), never an edit of step 1.

/**
 * A regular expression (a SQL literal) that finds, in `out_keys`, anything that keeps it from being
 * turned into the `bulk` JSON by replacing its separators (`lean`): a character JSON escapes (`"`,
 * `\`, a control character), where \x01 is allowed only as a separator's first character and \x03
 * and \x04 only as its second. A field holds \x01 only when its tuple holds U+0000 or U+0001.
 */
const LEAN_UNSAFE = String.raw`'["\\\x00\x02\x05-\x1f]|\x01([^\x03\x04]|$)|(^|[^\x01])[\x03\x04]'`;

export const DELETE_MATCHING_FUNCTION_SQL = `
  CREATE FUNCTION latch_delete_matching(
    p_store text, p_now bigint, p_node text,
    p_type text, p_object text, p_relation text, p_user text, p_limit integer,
    p_after_revision bigint, p_after_o text, p_after_r text, p_after_u text,
    OUT out_revision bigint, OUT out_ms bigint, OUT out_more boolean,
    OUT out_keys text)
  LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  AS $fn$
  DECLARE
    v_before bigint;
    v_last bigint;
    v_key integer;
    v_where text := 'store_key = $12';
    v_order text := 'object, relation, "user"';
    v_seen bigint;
    v_n integer;
    v_changes jsonb;
  BEGIN
    SELECT x.o_revision, x.o_last_ms, x.o_key INTO v_before, v_last, v_key FROM latch_lock_store(p_store) AS x;
    out_ms := greatest(p_now, v_last);
    IF p_type IS NOT NULL THEN
      v_where := v_where || ' AND object >= ($2 || '':'') COLLATE "C" AND object < ($2 || '';'') COLLATE "C"';
    END IF;
    IF p_object IS NOT NULL THEN v_where := v_where || ' AND object = $3'; END IF;
    IF p_relation IS NOT NULL THEN v_where := v_where || ' AND relation = $4'; END IF;
    IF p_user IS NOT NULL THEN v_where := v_where || ' AND "user" = $5'; END IF;
    IF p_type IS NOT NULL AND p_user IS NOT NULL THEN v_order := 'relation, object'; END IF;
    -- Resume after the last tuple the same filter's previous request deleted, while the store is
    -- still at the revision that request committed (no write since: every match before it is gone).
    IF p_after_revision = v_before THEN
      IF p_type IS NOT NULL AND p_user IS NOT NULL THEN
        v_where := v_where || ' AND (relation, object) > ($10, $9)';
      ELSE
        v_where := v_where || ' AND (object, relation, "user") > ($9, $10, $11)';
      END IF;
    END IF;
    EXECUTE format(
      'WITH picked AS MATERIALIZED (
         SELECT * FROM (SELECT ctid AS id, object, split_part(object, '':'', 1) AS object_type, relation, "user", condition, expires_ms,
                               row_number() OVER (ORDER BY %1$s) AS n
                          FROM latch_tuples WHERE %2$s) AS s
          WHERE n <= $6 + 1),
       gone AS (
         DELETE FROM latch_tuples t USING picked p WHERE t.ctid = p.id AND p.n <= $6
         RETURNING p.n, p.object, p.object_type, p.relation, p."user", p.condition, p.expires_ms),
       k AS (
         SELECT s.seen, s.keys, s.changes, s.ot, s.bare AND s.ot = s.ot_max AND s.keys !~ %3$L AS lean
           FROM (SELECT count(*) AS seen,
                        coalesce(string_agg(object || chr(1) || chr(3) || relation || chr(1) || chr(3) || "user",
                                            chr(1) || chr(4) ORDER BY n) FILTER (WHERE n <= $6), '''') AS keys,
                        bool_and(condition IS NULL AND expires_ms IS NULL) FILTER (WHERE n <= $6) AS bare,
                        min(object_type) FILTER (WHERE n <= $6) AS ot,
                        max(object_type) FILTER (WHERE n <= $6) AS ot_max,
                        jsonb_agg(jsonb_build_array(true, object, relation, "user", NULL, NULL) ORDER BY n)
                          FILTER (WHERE n <= least($6, 32)) AS changes
                   FROM picked) AS s),
       logged AS (
         INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms, bulk)
         SELECT $1, $7, least(k.seen, $6) - 1, true, '''', k.ot, '''', '''', NULL::text, $8, NULL::bigint,
                ''[["'' || replace(replace(k.keys, chr(1) || chr(3), ''","''), chr(1) || chr(4), ''",0],["'') || ''",0]]''
           FROM k WHERE k.lean AND k.seen > 0
         UNION ALL
         SELECT $1, $7, max(g.n) - 1, true, '''', g.object_type, '''', '''', NULL, $8, NULL,
                json_agg(json_build_array(g.object, g.relation, g."user",
                  CASE WHEN g.condition IS NULL AND g.expires_ms IS NULL THEN ''0''::json
                       ELSE latch_prior(g.condition, g.expires_ms)::json END) ORDER BY g.n)::text
           FROM k, gone g WHERE NOT k.lean GROUP BY g.object_type)
       SELECT seen, keys, changes FROM k', v_order, v_where, ${LEAN_UNSAFE})
      INTO v_seen, out_keys, v_changes
      USING p_store, p_type, p_object, p_relation, p_user, p_limit, v_before + 1, out_ms,
            p_after_o, p_after_r, p_after_u, v_key;
    out_more := v_seen > p_limit;
    v_n := least(v_seen, p_limit);
    IF v_n = 0 THEN
      out_revision := v_before;
      RETURN;
    END IF;
    out_revision := v_before + 1;
    UPDATE latch_stores SET revision = out_revision, last_ms = out_ms WHERE id = p_store;
    PERFORM latch_end_revision(p_store, p_node, out_revision, out_ms, CASE WHEN v_n <= 32 THEN v_changes END);
  END $fn$;
`;
