// Schema step 5 (migrations.ts): `latch_delete_matching`, delete by filter as one statement.
//
// Under the store's row lock (FOR NO KEY UPDATE, the lock every Write function takes, so the
// selection and the delete see no other writer of the store on any node) it selects the first
// `p_limit` + 1 tuples of the filter in Read order (tuples.ts readPlan: (object, relation, user),
// or (relation, object) for an object type with a user), deletes the first `p_limit` by row id
// and hands them to latch_record_revision (changelog rows in that order, revision time, NOTIFY):
// one round trip and three set statements per request, where reading the keys in pages and
// sending them back through latch_write cost a probe and array walks per key. The changelog rows
// are those latch_write writes for the same deletes (no condition, no expiry on a delete row).
// Nothing matched → nothing changes and the revision is the store's current one.
//
// The filter: `p_type` (object type) or `p_object` (one object), and optionally `p_relation` and
// `p_user`; the statement is built from fixed fragments and takes every value as a parameter.
// Once released, a change is a new schema step (CREATE OR REPLACE), never an edit of this one.

export const DELETE_MATCHING_FUNCTION_SQL = `
  CREATE FUNCTION latch_delete_matching(
    p_store text, p_now bigint, p_node text,
    p_type text, p_object text, p_relation text, p_user text, p_limit integer,
    OUT out_revision bigint, OUT out_ms bigint, OUT out_more boolean,
    OUT out_o text[], OUT out_r text[], OUT out_u text[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_before bigint;
    v_last bigint;
    v_where text := 'store_id = $1';
    v_order text := 'object, relation, "user"';
    v_ctids tid[];
    v_ot text[];
    v_n integer;
  BEGIN
    SELECT s.revision, s.last_ms INTO v_before, v_last FROM latch_stores s
     WHERE s.id = p_store AND s.deleted_ms IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
    IF p_type IS NOT NULL THEN v_where := v_where || ' AND object_type = $2'; END IF;
    IF p_object IS NOT NULL THEN v_where := v_where || ' AND object = $3'; END IF;
    IF p_relation IS NOT NULL THEN v_where := v_where || ' AND relation = $4'; END IF;
    IF p_user IS NOT NULL THEN v_where := v_where || ' AND "user" = $5'; END IF;
    IF p_type IS NOT NULL AND p_user IS NOT NULL THEN v_order := 'relation, object'; END IF;
    EXECUTE format(
      'SELECT array_agg(ctid ORDER BY n), array_agg(object ORDER BY n), array_agg(object_type ORDER BY n),
              array_agg(relation ORDER BY n), array_agg("user" ORDER BY n)
         FROM (SELECT ctid, object, object_type, relation, "user", row_number() OVER (ORDER BY %s) AS n
                 FROM (SELECT ctid, object, object_type, relation, "user" FROM latch_tuples
                        WHERE %s ORDER BY %s LIMIT $6) AS picked) AS numbered', v_order, v_where, v_order)
      INTO v_ctids, out_o, v_ot, out_r, out_u
      USING p_store, p_type, p_object, p_relation, p_user, p_limit + 1;
    v_n := coalesce(cardinality(v_ctids), 0);
    out_more := v_n > p_limit;
    IF out_more THEN
      v_n := p_limit;
      v_ctids := v_ctids[1:v_n];
      out_o := out_o[1:v_n];
      v_ot := v_ot[1:v_n];
      out_r := out_r[1:v_n];
      out_u := out_u[1:v_n];
    END IF;
    IF v_n = 0 THEN
      out_revision := v_before;
      out_ms := greatest(p_now, v_last);
      out_o := '{}';
      out_r := '{}';
      out_u := '{}';
      RETURN;
    END IF;
    DELETE FROM latch_tuples WHERE ctid = ANY (v_ctids);
    out_ms := greatest(p_now, v_last);
    out_revision := v_before + 1;
    UPDATE latch_stores SET revision = out_revision, last_ms = out_ms WHERE id = p_store;
    PERFORM latch_record_revision(p_store, p_node, out_revision, out_ms,
      array_fill(true, ARRAY[v_n]), out_o, v_ot, out_r, out_u,
      array_fill(NULL::text, ARRAY[v_n]), array_fill(NULL::bigint, ARRAY[v_n]));
  END $fn$;
`;

// Schema step 8 (migrations.ts): `latch_delete_matching` again, same signature and result, as ONE
// set-based statement after the row lock: the filter's rows are picked in Read order straight off
// an index, numbered by a row_number whose run condition stops the scan at `p_limit` + 1 rows, then
// one DELETE … USING (by row id) feeds one INSERT of the changelog rows (a data-modifying CTE), and
// the same statement aggregates the deleted keys for the answer. Step 5 planned the selection on
// the by-user index for an object type (every row of the type read and sorted, e.g. 50,000 rows
// for 10,000 deletes) and deleted `WHERE ctid = ANY (…)` by a sequential scan of the whole table.
//
// Access paths (enable_seqscan / hashjoin / mergejoin off inside the function: a scan of the
// whole table is never right here, and right after a bulk load the statistics may say otherwise):
//   an object type, no user → the primary key's range of the type's objects (`T:` ≤ object < `T;`,
//     byte order), relation a residual filter; an object type and a user → the by-user index,
//     in (relation, object) order; an object → the primary key's prefix.
// The deleted rows' `condition` and `expires_ms` are carried through the `gone` CTE into the
// changelog row's condition as the pair `latch_prior` makes (step 7, prior-step.ts); its
// `expires_ms` stays NULL, as for every delete that no expiry guards. The row lock,
// revision, latch_revisions row and NOTIFY (the changes inline for at most 32, as
// latch_record_revision sends them) are those of every write function.
export const DELETE_MATCHING_SET_SQL = `
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
         INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms)
         SELECT $1, $7, g.n - 1, true, g.object, g.object_type, g.relation, g."user", latch_prior(g.condition, g.expires_ms), $8, NULL FROM gone g)
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
