// Part of schema step 1 (migrations.ts): `latch_write`, one tuple Write as one statement — one
// round trip, its own transaction, the store's row lock held only inside the server (tuples.ts
// calls it) — and the helpers every Write function shares: `latch_record_revision` (the
// changelog rows) and `latch_end_revision` (the revision's time and the commit NOTIFY), the one
// place each of those is written in SQL.
//
// It locks the store's row (FOR NO KEY UPDATE), applies the existence rules of docs/reference/http-api.md §4.11
// in request order (deletes first), writes the tuples and the changelog, records the revision and
// its time, bumps the store's revision and NOTIFYs 'latch_events', with the revision's changes
// inline when it has at most 32 and the payload fits in NOTIFY's 8000 bytes (events.ts). A broken
// rule raises, rolling everything back, with MESSAGE 'latch:missing' | 'latch:duplicate' |
// 'latch:conflict' and DETAIL '<1-based index>' (conflicts: '<index>:condition|expires_at'); an
// unknown or deleted store raises 'latch:store_not_found'. tuples.ts words these exactly as the
// key-value backends do.
//
// Two paths give the same result. When no key repeats within the deletes or within the writes
// (`p_distinct`, nearly always), the request's stored state is read by one set of primary-key
// probes and applied by set statements: no key's outcome depends on another's, so the first
// error in request order is the lowest failing index. Otherwise each key is applied in order,
// one statement at a time, so a repeated key sees the effect of its earlier occurrence.
//
// Delete rows of the changelog carry the deleted tuple's state. Every Write function records, on
// each delete row of `latch_changes`, the tuple as it was stored when deleted: its `condition`
// column holds the JSON pair `[condition, expires_ms]` (the stored condition text and expiry,
// each `null` when absent; `latch_prior`). The delete row's `expires_ms` keeps its meaning (the
// expiry a sweeper delete was guarded by, shown by ReadChanges); ReadChanges and the NOTIFY
// payload leave the pair out. Why: a query at a past revision (src/engine/state/past-views.ts)
// undoes the changes after its target from the live state; a delete undone restores the deleted
// tuple, which needs its condition and expiry, so with the pair it reads only the changes after
// the target. Example: `doc:1#viewer@user:anne` stored with condition `{"name":"office"}` and
// expiry 2030-01-01 is deleted → its delete row's condition is `[{"name":"office"},1893456000000]`;
// a plain tuple's is `[null,null]`.
//
// The rules are those of src/storage/write-plan.ts, the specification every backend follows
// (docs/architecture.md, "One specification of the write rules"); test/storage/postgres-write-rules.test.ts
// checks both paths and latch_write_all against it on random writes. Once released, a change to
// these functions is a new schema step (CREATE OR REPLACE), never an edit of step 1.

export const WRITE_FUNCTION_SQL = `
  -- Same condition: same name and context, key order ignored, a missing context equal to {}
  -- (write-plan.ts sameCondition); identical text needs no parsing.
  CREATE FUNCTION latch_same_condition(a text, b text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    IF a IS NULL OR b IS NULL THEN RETURN a IS NULL AND b IS NULL; END IF;
    IF a = b THEN RETURN true; END IF;
    RETURN (a::jsonb -> 'name') = (b::jsonb -> 'name')
       AND coalesce(a::jsonb -> 'context', '{}'::jsonb) = coalesce(b::jsonb -> 'context', '{}'::jsonb);
  EXCEPTION WHEN others THEN
    RETURN false; -- a context jsonb cannot hold (an escaped NUL): the texts differ, so it differs
  END $fn$;

  -- An existing tuple met by a write under on_duplicate ignore: identical, or a conflict raised.
  CREATE FUNCTION latch_write_check(p_key integer, i integer, o text, r text, u text, c text, e bigint)
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    v_cond text;
    v_exp bigint;
  BEGIN
    SELECT t.condition, t.expires_ms INTO v_cond, v_exp FROM latch_tuples t
     WHERE t.store_key = p_key AND t.object = o AND t.relation = r AND t."user" = u;
    IF NOT latch_same_condition(v_cond, c) THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:conflict', DETAIL = i::text || ':condition';
    END IF;
    IF v_exp IS DISTINCT FROM e THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:conflict', DETAIL = i::text || ':expires_at';
    END IF;
  END $fn$;

  -- The store's row lock every Write function takes first (FOR NO KEY UPDATE: writers of one
  -- store queue here, on every node) and the store's revision, last write time and number (its
  -- key in latch_tuples) under it; an unknown or deleted store raises 'latch:store_not_found'.
  -- (latch_write_all takes the same lock by the UPDATE that allocates its revision.)
  CREATE FUNCTION latch_lock_store(p_store text, OUT o_revision bigint, OUT o_last_ms bigint, OUT o_key integer)
  LANGUAGE plpgsql AS $fn$
  BEGIN
    SELECT s.revision, s.last_ms, s.key INTO o_revision, o_last_ms, o_key FROM latch_stores s
     WHERE s.id = p_store AND s.deleted_ms IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
  END $fn$;

  -- The state of a deleted tuple as its delete row's condition column holds it: [condition, expiry].
  CREATE FUNCTION latch_prior(c text, e bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT '[' || coalesce(c, 'null') || ',' || coalesce(e::text, 'null') || ']'
  $fn$;

  -- The end of every Write function's revision: its time into latch_revisions and the commit
  -- NOTIFY on 'latch_events' (events.ts reads it), with p_changes (the revision's changes as
  -- [deleted, object, relation, user, condition, expires_ms], a delete's condition null) inline
  -- when given and the payload fits in NOTIFY's 8000 bytes; callers pass NULL for more than 32
  -- changes. The caller has bumped the store's revision under its row lock and written the
  -- changelog rows.
  CREATE FUNCTION latch_end_revision(p_store text, p_node text, p_rev bigint, p_ms bigint, p_changes jsonb)
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    v_payload text;
  BEGIN
    INSERT INTO latch_revisions (store_id, revision, ms) VALUES (p_store, p_rev, p_ms);
    IF p_changes IS NOT NULL THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', p_rev, 'c', p_changes)::text;
    END IF;
    IF v_payload IS NULL OR octet_length(v_payload) > 7999 THEN
      v_payload := jsonb_build_object('n', p_node, 'k', 't', 's', p_store, 'r', p_rev)::text;
    END IF;
    PERFORM pg_notify('latch_events', v_payload);
  END $fn$;

  -- The tail of latch_write and latch_write_all: the revision's changes into the changelog (seq
  -- from 0, in the order given: the deletes, then the writes, each in request order; a delete's
  -- c_c is its latch_prior pair), then latch_end_revision.
  CREATE FUNCTION latch_record_revision(
    p_store text, p_node text, p_rev bigint, p_ms bigint,
    c_del boolean[], c_o text[], c_ot text[], c_r text[], c_u text[], c_c text[], c_e bigint[])
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    v_changes jsonb;
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
    PERFORM latch_end_revision(p_store, p_node, p_rev, p_ms, v_changes);
  END $fn$;

  -- The elements of a at the 1-based indexes idx, in that order.
  CREATE FUNCTION latch_pick(a anyarray, idx integer[]) RETURNS anyarray LANGUAGE sql IMMUTABLE AS $fn$
    SELECT ARRAY(SELECT a[x.i] FROM unnest(idx) WITH ORDINALITY AS x(i, n) ORDER BY x.n)
  $fn$;

  CREATE FUNCTION latch_write(
    p_store text, p_now bigint, p_duplicate_error boolean, p_missing_error boolean, p_node text, p_distinct boolean,
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[],
    OUT out_revision bigint, OUT out_ms bigint, OUT out_deleted integer[], OUT out_written integer[])
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_before bigint;
    v_last bigint;
    v_key integer;
    v_rev bigint;
    v_seq integer;
    v_ctids tid[];
    v_prior text[] := '{}';
    v_one text;
    v_existing integer[];
    v_missing integer;
  BEGIN
    SELECT x.o_revision, x.o_last_ms, x.o_key INTO v_before, v_last, v_key FROM latch_lock_store(p_store) AS x;
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
                            WHERE x.store_key = v_key AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
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
                            WHERE x.store_key = v_key AND x.object = k.o AND x.relation = k.r AND x."user" = k.u LIMIT 1) AS t;
      IF cardinality(v_existing) > 0 AND p_duplicate_error THEN
        RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = v_existing[1]::text;
      END IF;
      FOR j IN 1 .. cardinality(v_existing) LOOP
        PERFORM latch_write_check(v_key, v_existing[j], w_o[v_existing[j]], w_r[v_existing[j]], w_u[v_existing[j]],
                                  w_c[v_existing[j]], w_e[v_existing[j]]);
      END LOOP;
      out_written := ARRAY(SELECT i FROM generate_subscripts(w_o, 1) AS i WHERE NOT (i = ANY (v_existing)) ORDER BY i);
      INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms, expires_ms)
      SELECT v_key, w_o[i], w_r[i], w_u[i], w_c[i], out_ms, w_e[i] FROM unnest(out_written) AS i;
    ELSE
      FOR i IN 1 .. coalesce(cardinality(d_o), 0) LOOP
        DELETE FROM latch_tuples t
         WHERE t.store_key = v_key AND t.object = d_o[i] AND t.relation = d_r[i] AND t."user" = d_u[i]
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
        INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms, expires_ms)
        VALUES (v_key, w_o[i], w_r[i], w_u[i], w_c[i], out_ms, w_e[i])
        ON CONFLICT DO NOTHING;
        IF FOUND THEN
          out_written := out_written || i;
        ELSIF p_duplicate_error THEN
          RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = i::text;
        ELSE
          PERFORM latch_write_check(v_key, i, w_o[i], w_r[i], w_u[i], w_c[i], w_e[i]);
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
`;
