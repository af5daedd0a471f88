// Schema step 7 (migrations.ts): delete rows of the changelog carry the deleted tuple's state.
//
// Every Write function records, on each delete row of `latch_changes`, the tuple as it was stored
// when deleted: its `condition` column holds the JSON pair `[condition, expires_ms]` (the stored
// condition text and expiry, each `null` when absent; `latch_prior`), where before this step it
// was always NULL. The delete row's `expires_ms` keeps its meaning (the expiry a sweeper delete
// was guarded by, shown by ReadChanges), so the pair is the only new information and ReadChanges,
// the NOTIFY payload and every other reader of a delete row see what they saw before.
//
// Why: a query at a past revision (src/engine/state/past-views.ts) undoes the changes after its
// target from the live state; a delete undone restores the deleted tuple, which needs its
// condition and expiry. With the pair it reads only the changes after the target; a delete row
// written before this step (condition NULL) falls back, for that key only, to the tuple's last
// write before the target (changes.ts: `prior` absent).
//
// Example: `doc:1#viewer@user:anne` stored with condition `{"name":"office"}` and expiry
// 2030-01-01 is deleted → its delete row's condition is `[{"name":"office"},1893456000000]`; a
// plain tuple's is `[null,null]`.
//
// The step replaces (same signatures) latch_record_revision, whose NOTIFY payload leaves the pair
// out of delete changes, and the functions that delete: latch_write (and so latch_write_group,
// which calls it), latch_write_all and latch_delete_matching, otherwise as steps 1 and 5 made them
// (step 8 replaces the last two again and keeps the pair).
// Once released, a change is a new step, never an edit of this one.

export const PRIOR_STEP_SQL = `
  -- The state of a deleted tuple as its delete row's condition column holds it: [condition, expiry].
  CREATE FUNCTION latch_prior(c text, e bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT '[' || coalesce(c, 'null') || ',' || coalesce(e::text, 'null') || ']'
  $fn$;

  CREATE OR REPLACE FUNCTION latch_record_revision(
    p_store text, p_node text, p_rev bigint, p_ms bigint,
    c_del boolean[], c_o text[], c_ot text[], c_r text[], c_u text[], c_c text[], c_e bigint[])
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    v_changes jsonb;
    v_payload text;
  BEGIN
    WITH c AS (
      SELECT k.del, k.n, k.o, k.ot, k.r, k.u, k.cnd, k.e
        FROM unnest(c_del, c_o, c_ot, c_r, c_u, c_c, c_e) WITH ORDINALITY AS k(del, o, ot, r, u, cnd, e, n)),
    ins AS (
      INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms)
      SELECT p_store, p_rev, c.n - 1, c.del, c.o, c.ot, c.r, c.u, c.cnd, p_ms, c.e FROM c)
    SELECT jsonb_agg(jsonb_build_array(c.del, c.o, c.r, c.u, CASE WHEN c.del THEN NULL ELSE c.cnd END, c.e) ORDER BY c.n)
           FILTER (WHERE cardinality(c_o) <= 32)
      INTO v_changes FROM c;
    INSERT INTO latch_revisions (store_id, revision, ms) VALUES (p_store, p_rev, p_ms);
    IF v_changes IS NOT NULL THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', p_rev, 'c', v_changes)::text;
    END IF;
    IF v_payload IS NULL OR octet_length(v_payload) > 7999 THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', p_rev)::text;
    END IF;
    PERFORM pg_notify('latch_events', v_payload);
  END $fn$;

  CREATE OR REPLACE FUNCTION latch_write(
    p_store text, p_now bigint, p_duplicate_error boolean, p_missing_error boolean, p_node text, p_distinct boolean,
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[],
    OUT out_revision bigint, OUT out_ms bigint, OUT out_deleted integer[], OUT out_written integer[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_before bigint;
    v_last bigint;
    v_rev bigint;
    v_seq integer;
    v_ctids tid[];
    v_prior text[] := '{}';
    v_one text;
    v_existing integer[];
    v_missing integer;
  BEGIN
    SELECT s.revision, s.last_ms INTO v_before, v_last FROM latch_stores s
     WHERE s.id = p_store AND s.deleted_ms IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
    out_ms := greatest(p_now, v_last);
    v_rev := v_before + 1;
    out_deleted := '{}';
    out_written := '{}';
    IF p_distinct THEN
      -- deletes: the stored tuple of each by a primary-key probe (a delete carrying expires_ms, the
      -- expiry sweeper's, takes the tuple only while it still expires then), then by row id
      SELECT coalesce(array_agg(k.n ORDER BY k.n), '{}'), coalesce(array_agg(t.ctid), '{}'),
             coalesce(array_agg(latch_prior(t.condition, t.expires_ms) ORDER BY k.n), '{}')
        INTO out_deleted, v_ctids, v_prior
        FROM unnest(d_o, d_r, d_u, d_e) WITH ORDINALITY AS k(o, r, u, e, n)
       CROSS JOIN LATERAL (SELECT x.ctid, x.condition, x.expires_ms FROM latch_tuples x
                            WHERE x.store_id = p_store AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
                              AND (k.e IS NULL OR x.expires_ms = k.e) LIMIT 1) AS t;
      IF p_missing_error AND cardinality(out_deleted) < cardinality(d_o) THEN
        SELECT min(i) INTO v_missing FROM generate_subscripts(d_o, 1) AS i WHERE NOT (i = ANY (out_deleted));
        RAISE EXCEPTION USING MESSAGE = 'latch:missing', DETAIL = v_missing::text;
      END IF;
      DELETE FROM latch_tuples WHERE ctid = ANY (v_ctids);
      -- writes: the ones already stored (after the deletes) are duplicates, ignored or conflicts
      SELECT coalesce(array_agg(k.n ORDER BY k.n), '{}') INTO v_existing
        FROM unnest(w_o, w_r, w_u) WITH ORDINALITY AS k(o, r, u, n)
       CROSS JOIN LATERAL (SELECT 1 FROM latch_tuples x
                            WHERE x.store_id = p_store AND x.object = k.o AND x.relation = k.r AND x."user" = k.u LIMIT 1) AS t;
      IF cardinality(v_existing) > 0 AND p_duplicate_error THEN
        RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = v_existing[1]::text;
      END IF;
      FOR j IN 1 .. cardinality(v_existing) LOOP
        PERFORM latch_write_check(p_store, v_existing[j], w_o[v_existing[j]], w_r[v_existing[j]], w_u[v_existing[j]],
                                  w_c[v_existing[j]], w_e[v_existing[j]]);
      END LOOP;
      out_written := ARRAY(SELECT i FROM generate_subscripts(w_o, 1) AS i WHERE NOT (i = ANY (v_existing)) ORDER BY i);
      INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
      SELECT p_store, w_o[i], w_ot[i], w_r[i], w_u[i], w_c[i], out_ms, w_e[i] FROM unnest(out_written) AS i;
    ELSE
      FOR i IN 1 .. coalesce(cardinality(d_o), 0) LOOP
        DELETE FROM latch_tuples t
         WHERE t.store_id = p_store AND t.object = d_o[i] AND t.relation = d_r[i] AND t."user" = d_u[i]
           AND (d_e[i] IS NULL OR t.expires_ms = d_e[i])
        RETURNING latch_prior(t.condition, t.expires_ms) INTO v_one;
        IF FOUND THEN
          out_deleted := out_deleted || i;
          v_prior := v_prior || v_one;
        ELSIF p_missing_error THEN
          RAISE EXCEPTION USING MESSAGE = 'latch:missing', DETAIL = i::text;
        END IF;
      END LOOP;
      FOR i IN 1 .. coalesce(cardinality(w_o), 0) LOOP
        INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
        VALUES (p_store, w_o[i], w_ot[i], w_r[i], w_u[i], w_c[i], out_ms, w_e[i])
        ON CONFLICT DO NOTHING;
        IF FOUND THEN
          out_written := out_written || i;
        ELSIF p_duplicate_error THEN
          RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = i::text;
        ELSE
          PERFORM latch_write_check(p_store, i, w_o[i], w_r[i], w_u[i], w_c[i], w_e[i]);
        END IF;
      END LOOP;
    END IF;
    v_seq := cardinality(out_deleted) + cardinality(out_written);
    IF v_seq = 0 THEN
      out_revision := v_before;
      RETURN;
    END IF;
    UPDATE latch_stores SET revision = v_rev, last_ms = out_ms WHERE id = p_store;
    PERFORM latch_record_revision(p_store, p_node, v_rev, out_ms,
      array_fill(true, ARRAY[cardinality(out_deleted)]) || array_fill(false, ARRAY[cardinality(out_written)]),
      latch_pick(d_o, out_deleted) || latch_pick(w_o, out_written),
      latch_pick(d_ot, out_deleted) || latch_pick(w_ot, out_written),
      latch_pick(d_r, out_deleted) || latch_pick(w_r, out_written),
      latch_pick(d_u, out_deleted) || latch_pick(w_u, out_written),
      v_prior || latch_pick(w_c, out_written),
      latch_pick(d_e, out_deleted) || latch_pick(w_e, out_written));
    out_revision := v_rev;
  END $fn$;

  CREATE OR REPLACE FUNCTION latch_write_all(
    p_store text, p_now bigint, p_node text,
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[],
    OUT out_revision bigint, OUT out_ms bigint)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_nd integer := coalesce(cardinality(d_o), 0);
    v_nw integer := coalesce(cardinality(w_o), 0);
    v_gone integer[];
    v_prior text[] := '{}';
    v_n integer;
    v_at integer;
  BEGIN
    UPDATE latch_stores SET revision = revision + 1, last_ms = greatest(last_ms, p_now)
     WHERE id = p_store AND deleted_ms IS NULL RETURNING revision, last_ms INTO out_revision, out_ms;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
    IF v_nd > 0 THEN
      -- a delete carrying expires_ms takes the tuple only while it still expires then
      WITH gone AS (
        DELETE FROM latch_tuples x USING unnest(d_o, d_r, d_u, d_e) WITH ORDINALITY AS k(o, r, u, e, n)
         WHERE x.store_id = p_store AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
           AND (k.e IS NULL OR x.expires_ms = k.e)
        RETURNING k.n, latch_prior(x.condition, x.expires_ms) AS p)
      SELECT array_agg(n), array_agg(p ORDER BY n) INTO v_gone, v_prior FROM gone;
      IF coalesce(cardinality(v_gone), 0) < v_nd THEN
        SELECT min(i) INTO v_at FROM generate_subscripts(d_o, 1) AS i WHERE NOT (i = ANY (coalesce(v_gone, '{}')));
        RAISE EXCEPTION USING MESSAGE = 'latch:missing', DETAIL = v_at::text;
      END IF;
    END IF;
    IF v_nw > 0 THEN
      INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
      SELECT p_store, k.o, k.ot, k.r, k.u, k.c, out_ms, k.e FROM unnest(w_o, w_ot, w_r, w_u, w_c, w_e) AS k(o, ot, r, u, c, e)
      ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS v_n = ROW_COUNT;
      IF v_n < v_nw THEN
        -- the first key stored before this transaction (the rows it inserted carry its own xmin)
        SELECT min(k.n) INTO v_at FROM unnest(w_o, w_r, w_u) WITH ORDINALITY AS k(o, r, u, n)
          JOIN latch_tuples x ON x.store_id = p_store AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
         WHERE x.xmin <> pg_current_xact_id()::xid;
        RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = v_at::text;
      END IF;
    END IF;
    PERFORM latch_record_revision(p_store, p_node, out_revision, out_ms,
      array_fill(true, ARRAY[v_nd]) || array_fill(false, ARRAY[v_nw]),
      d_o || w_o, d_ot || w_ot, d_r || w_r, d_u || w_u, coalesce(v_prior, '{}') || w_c, d_e || w_e);
  END $fn$;

  CREATE OR REPLACE FUNCTION latch_delete_matching(
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
    v_prior text[];
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
              array_agg(relation ORDER BY n), array_agg("user" ORDER BY n), array_agg(prior ORDER BY n)
         FROM (SELECT ctid, object, object_type, relation, "user", latch_prior(condition, expires_ms) AS prior,
                      row_number() OVER (ORDER BY %s) AS n
                 FROM (SELECT ctid, object, object_type, relation, "user", condition, expires_ms FROM latch_tuples
                        WHERE %s ORDER BY %s LIMIT $6) AS picked) AS numbered', v_order, v_where, v_order)
      INTO v_ctids, out_o, v_ot, out_r, out_u, v_prior
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
      v_prior := v_prior[1:v_n];
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
      v_prior, array_fill(NULL::bigint, ARRAY[v_n]));
  END $fn$;
`;
