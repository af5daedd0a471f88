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
