// Part of schema step 1 (migrations.ts): `latch_write_all`, the all-or-nothing Write as one statement.
//
// A Write whose keys are distinct within its deletes and within its writes, and whose existence
// rules are 'error' wherever it has changes (the API's default), either applies every change in
// the request or raises. tuples.ts sends such a Write here instead of to `latch_write`
// (write-function.ts), which keeps every other case, and so does latch_write_group for each such
// Write of a group. Both give the same rows, revision, changelog and NOTIFY for the same request,
// and both queue on the store's row lock, so nodes of either kind may write one store together.
//
// Its statements, in order: the UPDATE of the store's row takes the row lock and allocates the
// revision at once; one set DELETE (the deleted tuples' state kept for the changelog as
// latch_prior pairs) and one set INSERT (ON CONFLICT DO NOTHING) apply the changes, and only when
// a count falls short is the failing index looked for (then it raises, rolling everything back,
// with the MESSAGE/DETAIL words of latch_write); then latch_record_revision, the changelog,
// revision and NOTIFY tail latch_write shares. A duplicate is a stored row its own INSERT did not
// make: the INSERT returns the id its rows carry (RETURNING xmin, the same for every row of one
// statement) and the search excludes exactly those rows, which is right alone and inside a
// group's subtransaction (whose rows carry the subtransaction's id, not the top transaction's).
// Measured on one connection (bench/README.md, "PostgreSQL writes"): a one-tuple Write costs the
// server about a third of latch_write's CPU.
//
// Once released, a change is a new schema step (CREATE OR REPLACE), never an edit of step 1.

export const WRITE_ALL_FUNCTION_SQL = `
  CREATE FUNCTION latch_write_all(
    p_store text, p_now bigint, p_node text,
    d_o text[], d_ot text[], d_r text[], d_u text[], d_e bigint[],
    w_o text[], w_ot text[], w_r text[], w_u text[], w_c text[], w_e bigint[],
    OUT out_revision bigint, OUT out_ms bigint)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_key integer;
    v_nd integer := coalesce(cardinality(d_o), 0);
    v_nw integer := coalesce(cardinality(w_o), 0);
    v_gone integer[];
    v_prior text[] := '{}';
    v_n integer;
    v_mine xid;
    v_at integer;
  BEGIN
    UPDATE latch_stores SET revision = revision + 1, last_ms = greatest(last_ms, p_now)
     WHERE id = p_store AND deleted_ms IS NULL RETURNING revision, last_ms, key INTO out_revision, out_ms, v_key;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING MESSAGE = 'latch:store_not_found';
    END IF;
    IF v_nd > 0 THEN
      -- a delete carrying expires_ms takes the tuple only while it still expires then
      WITH gone AS (
        DELETE FROM latch_tuples x USING unnest(d_o, d_r, d_u, d_e) WITH ORDINALITY AS k(o, r, u, e, n)
         WHERE x.store_key = v_key AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
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
        INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms, expires_ms)
        SELECT v_key, k.o, k.r, k.u, k.c, out_ms, k.e FROM unnest(w_o, w_r, w_u, w_c, w_e) AS k(o, r, u, c, e)
        ON CONFLICT DO NOTHING
        RETURNING xmin)
      SELECT count(*), min(xmin::text)::xid INTO v_n, v_mine FROM ins;
      IF v_n < v_nw THEN
        -- the first key stored before this statement (the rows it inserted carry v_mine)
        SELECT min(k.n) INTO v_at FROM unnest(w_o, w_r, w_u) WITH ORDINALITY AS k(o, r, u, n)
          JOIN latch_tuples x ON x.store_key = v_key AND x.object = k.o AND x.relation = k.r AND x."user" = k.u
         WHERE v_mine IS NULL OR x.xmin <> v_mine;
        RAISE EXCEPTION USING MESSAGE = 'latch:duplicate', DETAIL = v_at::text;
      END IF;
    END IF;
    PERFORM latch_record_revision(p_store, p_node, out_revision, out_ms,
      array_fill(true, ARRAY[v_nd]) || array_fill(false, ARRAY[v_nw]),
      d_o || w_o, d_ot || w_ot, d_r || w_r, d_u || w_u, coalesce(v_prior, '{}') || w_c, d_e || w_e);
  END $fn$;
`;
