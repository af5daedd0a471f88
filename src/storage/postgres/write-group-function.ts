// Schema step 6 (migrations.ts): `latch_write_group`, group commit of one store's concurrent
// Writes: several Writes in ONE statement and one transaction, so they share one round trip, one
// hold of the store's row lock and one commit flush (the ≈ 20 ms a Write of one store otherwise
// pays alone, writes queue behind each other on that lock).
//
// The Writes are applied in the order given, each by latch_write (the same rows, changelog,
// revision and NOTIFY as alone; not latch_write_all, whose duplicate search tells its own rows by
// the top transaction's id, which rows of a subtransaction do not carry) inside its own subtransaction (a BEGIN … EXCEPTION block): a Write that breaks a rule rolls back
// alone and reports its error (SQLSTATE, MESSAGE, DETAIL as latch_write raises them); the others
// commit, each with its own revision, consecutive in the order given (the row lock is taken by the
// first and held to the commit). One result row per Write, in order. The Writes' columns arrive
// concatenated: `g_nd[i]` deletes and `g_nw[i]` writes are Write i's, after those of Writes < i.
// Once released, a change is a new schema step (CREATE OR REPLACE), never an edit of this one.

export const WRITE_GROUP_FUNCTION_SQL = `
  CREATE FUNCTION latch_write_group(
    p_store text, p_now bigint, p_node text,
    g_dup boolean[], g_miss boolean[], g_distinct boolean[], g_nd integer[], g_nw integer[],
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[])
  RETURNS TABLE (r_revision bigint, r_ms bigint, r_deleted integer[], r_written integer[],
                 r_state text, r_message text, r_detail text)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_d integer := 0;
    v_w integer := 0;
    a integer;
    b integer;
    c integer;
    e integer;
  BEGIN
    FOR i IN 1 .. coalesce(cardinality(g_nd), 0) LOOP
      r_revision := NULL; r_ms := NULL; r_deleted := NULL; r_written := NULL;
      r_state := NULL; r_message := NULL; r_detail := NULL;
      a := v_d + 1; b := v_d + g_nd[i]; c := v_w + 1; e := v_w + g_nw[i];
      BEGIN
        SELECT x.out_revision, x.out_ms, x.out_deleted, x.out_written INTO r_revision, r_ms, r_deleted, r_written
          FROM latch_write(p_store, p_now, g_dup[i], g_miss[i], p_node, g_distinct[i],
                 d_o[a:b], d_ot[a:b], d_r[a:b], d_u[a:b], d_e[a:b],
                 w_o[c:e], w_ot[c:e], w_r[c:e], w_u[c:e], w_c[c:e], w_e[c:e]) AS x;
      EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS r_state = RETURNED_SQLSTATE, r_message = MESSAGE_TEXT, r_detail = PG_EXCEPTION_DETAIL;
      END;
      v_d := b;
      v_w := e;
      RETURN NEXT;
    END LOOP;
  END $fn$;
`;

// Schema step 8 (migrations.ts): the all-or-nothing Writes of a group go through latch_write_all.
//
// `latch_write_all` told the rows its own INSERT made by the top transaction's id; inside a
// group's subtransaction those rows carry the subtransaction's id, so its duplicate search could
// name a key the Write itself had just inserted. Now the INSERT returns the id its rows carry
// (RETURNING xmin, the same for every row of one statement) and the search excludes exactly
// those rows: the same answer alone, and right inside a subtransaction. latch_write_group then
// sends each Write that is whole (no key twice, existence rules 'error' wherever it has changes:
// what tuples.ts sends to latch_write_all alone) through latch_write_all, and the rest through
// latch_write, as before. A 100-tuple Write costs the server about a sixth less CPU that way
// (bench/postgres-writes.ts), a 1-tuple Write about a third of latch_write's.
export const WRITE_GROUP_WHOLE_SQL = `
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
    v_mine xid;
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
      WITH ins AS (
        INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
        SELECT p_store, k.o, k.ot, k.r, k.u, k.c, out_ms, k.e FROM unnest(w_o, w_ot, w_r, w_u, w_c, w_e) AS k(o, ot, r, u, c, e)
        ON CONFLICT DO NOTHING
        RETURNING xmin)
      SELECT count(*), min(xmin::text)::xid INTO v_n, v_mine FROM ins;
      IF v_n < v_nw THEN
        -- the first key stored before this statement (the rows it inserted carry v_mine)
        SELECT min(k.n) INTO v_at FROM unnest(w_o, w_r, w_u) WITH ORDINALITY AS k(o, r, u, n)
          JOIN latch_tuples x ON x.store_id = p_store AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
         WHERE v_mine IS NULL OR x.xmin <> v_mine;
        RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = v_at::text;
      END IF;
    END IF;
    PERFORM latch_record_revision(p_store, p_node, out_revision, out_ms,
      array_fill(true, ARRAY[v_nd]) || array_fill(false, ARRAY[v_nw]),
      d_o || w_o, d_ot || w_ot, d_r || w_r, d_u || w_u, coalesce(v_prior, '{}') || w_c, d_e || w_e);
  END $fn$;

  CREATE OR REPLACE FUNCTION latch_write_group(
    p_store text, p_now bigint, p_node text,
    g_dup boolean[], g_miss boolean[], g_distinct boolean[], g_nd integer[], g_nw integer[],
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[])
  RETURNS TABLE (r_revision bigint, r_ms bigint, r_deleted integer[], r_written integer[],
                 r_state text, r_message text, r_detail text)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_d integer := 0;
    v_w integer := 0;
    a integer;
    b integer;
    c integer;
    e integer;
  BEGIN
    FOR i IN 1 .. coalesce(cardinality(g_nd), 0) LOOP
      r_revision := NULL; r_ms := NULL; r_deleted := NULL; r_written := NULL;
      r_state := NULL; r_message := NULL; r_detail := NULL;
      a := v_d + 1; b := v_d + g_nd[i]; c := v_w + 1; e := v_w + g_nw[i];
      BEGIN
        IF g_distinct[i] AND g_nd[i] + g_nw[i] > 0 AND (g_nd[i] = 0 OR g_miss[i]) AND (g_nw[i] = 0 OR g_dup[i]) THEN
          SELECT x.out_revision, x.out_ms INTO r_revision, r_ms
            FROM latch_write_all(p_store, p_now, p_node,
                   d_o[a:b], d_ot[a:b], d_r[a:b], d_u[a:b], d_e[a:b],
                   w_o[c:e], w_ot[c:e], w_r[c:e], w_u[c:e], w_c[c:e], w_e[c:e]) AS x;
          r_deleted := ARRAY(SELECT generate_series(1, g_nd[i]));
          r_written := ARRAY(SELECT generate_series(1, g_nw[i]));
        ELSE
          SELECT x.out_revision, x.out_ms, x.out_deleted, x.out_written INTO r_revision, r_ms, r_deleted, r_written
            FROM latch_write(p_store, p_now, g_dup[i], g_miss[i], p_node, g_distinct[i],
                   d_o[a:b], d_ot[a:b], d_r[a:b], d_u[a:b], d_e[a:b],
                   w_o[c:e], w_ot[c:e], w_r[c:e], w_u[c:e], w_c[c:e], w_e[c:e]) AS x;
        END IF;
      EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS r_state = RETURNED_SQLSTATE, r_message = MESSAGE_TEXT, r_detail = PG_EXCEPTION_DETAIL;
      END;
      v_d := b;
      v_w := e;
      RETURN NEXT;
    END LOOP;
  END $fn$;
`;
