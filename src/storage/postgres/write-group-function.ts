// Part of schema step 1 (migrations.ts): `latch_write_group`, group commit of one store's
// concurrent Writes: several Writes in ONE statement and one transaction, so they share one round
// trip, one hold of the store's row lock and one commit flush (the ≈ 20 ms a Write of one store
// otherwise pays alone, writes queue behind each other on that lock).
//
// The Writes are applied in the order given, each inside its own subtransaction (a BEGIN …
// EXCEPTION block) by the function it would take alone: a whole Write (no key twice, existence
// rules 'error' wherever it has changes: what tuples.ts sends to latch_write_all alone) by
// latch_write_all, the rest by latch_write; so each gets the same rows, changelog, revision and
// NOTIFY as alone. A Write that breaks a rule rolls back alone and reports its error (SQLSTATE,
// MESSAGE, DETAIL as the function raised them); the others commit, each with its own revision,
// consecutive in the order given (the row lock is taken by the first and held to the commit). One
// result row per Write, in order. The Writes' columns arrive concatenated: `g_nd[i]` deletes and
// `g_nw[i]` writes are Write i's, after those of Writes < i. A 100-tuple Write costs the server
// about a sixth less CPU through latch_write_all than through latch_write
// (bench/postgres-writes.ts), a 1-tuple Write about a third.
// Once released, a change is a new schema step (CREATE OR REPLACE), never an edit of step 1.

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
