// Schema step 9 (migrations.ts): delete by filter logs ONE compact changelog row per object type
// of a request, not one row per deleted tuple.
//
// `latch_changes` gains a `bulk` column. A row with `bulk` set stands for the revision's changes
// at seq `seq - n + 1` … `seq` (n = the number of entries; the row's key is its LAST change's
// position, as the key-value backends key a bulk record, codec.ts BULK_DELETE), all deletes at the
// row's `ms`, all of the row's `object_type`. `bulk` is JSON text `[[o, r, u, p], …]` in seq
// order: the deleted tuple's stored object, relation and user (column encoding, db.ts enc) and
// `p`, its state as step 7's pair `[condition, expires_ms]` (prior-step.ts), or 0 for a tuple with
// neither. The row's own object, relation and user are '' and its condition and expires_ms NULL.
//
// Every reader expands it into the per-change rows step 8 wrote for the same request (changes.ts:
// ReadChanges pages whose cursor may fall inside a row, the type filter, start times; the
// changesSince stream of index catch-up, followers and past views), so nothing a client sees
// changes. The NOTIFY payload is unchanged (inline changes for at most 32, else the revision).
//
// Why: the INSERT of one changelog row per tuple (a heap tuple, two index entries and their WAL)
// was about half of the statement; the compact row is one heap tuple per request, its JSON built
// by the same statement from the rows the DELETE returned.
//
// Seq ranges: rows are picked in Read order, (object, relation, user) for a filter without a user
// and (relation, object) for one object type with a user; the tuples of one object type share the
// prefix `T:`, so in object order they form one contiguous run of `n`, and a filter with a user is
// always of one type. Hence grouping the deleted rows by object type gives contiguous seq ranges.
//
// Once released, a change is a new step, never an edit of this one.

export const BULK_CHANGE_STEP_SQL = `
  ALTER TABLE latch_changes ADD COLUMN bulk text;

  CREATE OR REPLACE FUNCTION latch_delete_matching(
    p_store text, p_now bigint, p_node text,
    p_type text, p_object text, p_relation text, p_user text, p_limit integer,
    OUT out_revision bigint, OUT out_ms bigint, OUT out_more boolean,
    OUT out_o text[], OUT out_r text[], OUT out_u text[])
  LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  AS $fn$
  DECLARE
    v_before bigint;
    v_last bigint;
    v_where text := 'store_id = $1';
    v_order text := 'object, relation, "user"';
    v_seen bigint;
    v_n integer;
    v_changes jsonb;
    v_payload text;
  BEGIN
    SELECT s.revision, s.last_ms INTO v_before, v_last FROM latch_stores s
     WHERE s.id = p_store AND s.deleted_ms IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
    out_ms := greatest(p_now, v_last);
    IF p_type IS NOT NULL THEN
      v_where := v_where || ' AND object_type = $2';
      IF p_user IS NULL THEN
        v_where := v_where || ' AND object >= ($2 || '':'') COLLATE "C" AND object < ($2 || '';'') COLLATE "C"';
      END IF;
    END IF;
    IF p_object IS NOT NULL THEN v_where := v_where || ' AND object = $3'; END IF;
    IF p_relation IS NOT NULL THEN v_where := v_where || ' AND relation = $4'; END IF;
    IF p_user IS NOT NULL THEN v_where := v_where || ' AND "user" = $5'; END IF;
    IF p_type IS NOT NULL AND p_user IS NOT NULL THEN v_order := 'relation, object'; END IF;
    EXECUTE format(
      'WITH picked AS MATERIALIZED (
         SELECT * FROM (SELECT ctid AS id, object, object_type, relation, "user", condition, expires_ms,
                               row_number() OVER (ORDER BY %1$s) AS n
                          FROM latch_tuples WHERE %2$s) AS s
          WHERE n <= $6 + 1),
       gone AS (
         DELETE FROM latch_tuples t USING picked p WHERE t.ctid = p.id AND p.n <= $6
         RETURNING p.n, p.object, p.object_type, p.relation, p."user", p.condition, p.expires_ms),
       logged AS (
         INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms, bulk)
         SELECT $1, $7, max(g.n) - 1, true, '''', g.object_type, '''', '''', NULL, $8, NULL,
                json_agg(json_build_array(g.object, g.relation, g."user",
                  CASE WHEN g.condition IS NULL AND g.expires_ms IS NULL THEN ''0''::json
                       ELSE latch_prior(g.condition, g.expires_ms)::json END) ORDER BY g.n)::text
           FROM gone g GROUP BY g.object_type)
       SELECT count(*),
              coalesce(array_agg(object ORDER BY n) FILTER (WHERE n <= $6), ''{}''),
              coalesce(array_agg(relation ORDER BY n) FILTER (WHERE n <= $6), ''{}''),
              coalesce(array_agg("user" ORDER BY n) FILTER (WHERE n <= $6), ''{}''),
              jsonb_agg(jsonb_build_array(true, object, relation, "user", NULL, NULL) ORDER BY n) FILTER (WHERE n <= 32)
         FROM picked', v_order, v_where)
      INTO v_seen, out_o, out_r, out_u, v_changes
      USING p_store, p_type, p_object, p_relation, p_user, p_limit, v_before + 1, out_ms;
    out_more := v_seen > p_limit;
    v_n := least(v_seen, p_limit);
    IF v_n = 0 THEN
      out_revision := v_before;
      RETURN;
    END IF;
    out_revision := v_before + 1;
    UPDATE latch_stores SET revision = out_revision, last_ms = out_ms WHERE id = p_store;
    INSERT INTO latch_revisions (store_id, revision, ms) VALUES (p_store, out_revision, out_ms);
    IF v_n <= 32 THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', out_revision, 'c', v_changes)::text;
    END IF;
    IF v_payload IS NULL OR octet_length(v_payload) > 7999 THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', out_revision)::text;
    END IF;
    PERFORM pg_notify('latch_events', v_payload);
  END $fn$;
`;

/** The compact row's step 9 function body alone (the bench's same-run step 8 → step 9 compare). */
export const BULK_DELETE_MATCHING_SQL = BULK_CHANGE_STEP_SQL.slice(
  BULK_CHANGE_STEP_SQL.indexOf('CREATE OR REPLACE FUNCTION latch_delete_matching'),
);
