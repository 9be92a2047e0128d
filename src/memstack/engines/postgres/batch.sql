-- The seam's batch interpreter (memstack.engines.postgres.schema renders the placeholders from
-- the command table). argv holds, all as text: the sorted lock ids of the batch's keys, comma
-- separated ({s}._lock_id, computed by the client; write batches), the number of keys and the
-- keys (each once), then the ops flat: name, argument count, arguments (NULL for an absent
-- optional value); one array, as one parameter costs the client least. Created twice from this
-- one body: {fn}_write (VOLATILE: each statement sees the latest commits, under advisory locks on
-- every key of the batch) and {fn}_read (STABLE: the whole batch reads one snapshot and cannot
-- write). A write call carries its batch id, and its first reply is kept under it; a call sent
-- again (replay: the client lost the first one's reply) answers that reply and applies nothing
-- when the id is known. Any error aborts the statement, so a failing batch leaves nothing
-- behind. Replies are the JSON the Redis codec decodes (memstack.engines.redis.codec): hashes
-- and score pairs flat, numbers as text.
--
-- A small batch's time is mostly fixed costs per SQL statement (plan checks, executor start) and
-- per PL/pgSQL expression, not the work (bench/session_ops.py: "where a put's time goes"): locks
-- are taken by expressions, each command's facts come from one constant lookup ({meta}: family
-- bits 0-2, 8 a one-key command that checks its key's type, 16 empty is a no-op, 32 writes all
-- its keys, 64 writes its key, 128 a guard), and every command runs at most one statement in
-- the common case.
CREATE OR REPLACE FUNCTION {s}.{fn}(argv text[], now_ms bigint, bid bigint, keep_ms bigint, replay boolean)
RETURNS text LANGUAGE plpgsql {volatility}
-- One generic plan per statement, made once per connection: the planner would otherwise plan
-- several statements afresh on every call (their custom plans look cheaper than the generic
-- ones), a large part of a small batch's time. Every statement here reaches a few keys through
-- an index; a generic plan does not know how few, and one made while a table was small would
-- scan it whole for as long as the connection lives: index scans only.
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off AS $$
DECLARE
  top int := cardinality(argv);
  nk int := argv[2]::int;
  ks text[] := argv[3:nk + 2];
  p int := nk + 3;
  op text;
  c int;
  a int;
  k text;
  fx int;
  fam text;
  live boolean;
  rk text;
  rv text;
  re bigint;
  rlo bigint;
  rn bigint;
  writing boolean := bid IS NOT NULL;
  parts text[] := '{}';
  res text;
  cnt bigint;
  e bigint;
  i0 bigint;
  i1 bigint;
  fl text;
  ok boolean;
  eid bigint;
  payload text;
  zm text[];
  zs double precision[];
  c_key text[];
  c_rows {s}.keys[];
  row1 {s}.keys;
  locks int[];
  touched text[] := '{}';
  j int;
  h int;
  junk text;
BEGIN
  -- Locks in ascending id order (no two batches deadlock): a replay of a batch still running
  -- waits for it on the same keys, then finds its reply; a batch naming no key locks its id.
  IF writing THEN
    locks := string_to_array(argv[1], ',')::int[];
    IF cardinality(locks) > 64 THEN  -- one statement beats many expressions
      PERFORM pg_advisory_xact_lock({lock}, l) FROM unnest(locks) WITH ORDINALITY AS u(l, o) ORDER BY o;
    ELSIF cardinality(locks) > 0 THEN
      FOREACH h IN ARRAY locks LOOP junk := pg_advisory_xact_lock({lock}, h)::text; END LOOP;
    ELSE
      junk := pg_advisory_xact_lock({lock}, (bid % 2147483647)::int)::text;
    END IF;
    IF replay THEN  -- a fresh id cannot have been seen: only a resent call looks
      SELECT reply INTO res FROM {s}.batches WHERE id = bid;
      IF FOUND THEN RETURN res; END IF;
    END IF;
  END IF;
  -- The keys' rows, read in one statement once locked. An op reads its key's row from there
  -- until an op of the batch wrote it.
  IF nk = 1 THEN  -- no aggregate for one key
    SELECT * INTO row1 FROM {s}.keys WHERE key = ks[1];
    IF FOUND THEN c_key := ks; c_rows := ARRAY[row1]; END IF;
  ELSIF nk > 1 THEN
    SELECT array_agg(key), array_agg(t) INTO c_key, c_rows FROM {s}.keys t WHERE key = ANY (ks);
  END IF;
  WHILE p <= top LOOP
    op := argv[p]; c := argv[p + 1]::int; a := p + 2; p := a + c;
    k := argv[a];
    fx := ({meta}::jsonb ->> op)::int;  -- NULL for an unknown command: refused below
    live := false;
    IF fx & 8 <> 0 THEN
      IF k = ANY (touched) THEN
        SELECT kind, value, expire, lo, n INTO rk, rv, re, rlo, rn FROM {s}.keys WHERE key = k;
        live := FOUND;
      ELSE
        j := array_position(c_key, k);
        live := j IS NOT NULL;
        IF live THEN row1 := c_rows[j]; rk := row1.kind; rv := row1.value; re := row1.expire; rlo := row1.lo; rn := row1.n; END IF;
      END IF;
      IF live AND re <= now_ms THEN
        live := false;  -- expired: absent to every command, purged by any write that meets it
        IF writing THEN PERFORM {s}._drop(ARRAY[k], now_ms); END IF;
      END IF;
      fam := (ARRAY['string', 'hash', 'set', 'list', 'zset'])[fx & 7];  -- memstack.engines.postgres.schema._FAMILIES
      IF live AND rk <> fam AND (c > 1 OR fx & 16 = 0) THEN
        RAISE EXCEPTION USING ERRCODE = 'MSWRT', MESSAGE = json_build_array(k, rk, fam)::text;
      END IF;
    END IF;
    res := NULL;
    CASE op
    -- Branches in order of use (a CASE tests them one by one).
    WHEN 'set' THEN
      ok := true;
      e := NULL;
      IF c > 2 THEN  -- flags (n: nx, x: xx, k: keepttl) and px ('' for none)
        fl := argv[a + 2];
        IF (position('n' IN fl) > 0 AND live) OR (position('x' IN fl) > 0 AND NOT live) THEN ok := false;
        ELSIF argv[a + 3] <> '' THEN e := now_ms + argv[a + 3]::bigint;
        ELSIF position('k' IN fl) > 0 AND live THEN e := re;
        END IF;
      END IF;
      IF ok THEN
        -- The batch holds the key's lock: its row is there when live, and stays so.
        IF live AND rk <> 'string' THEN PERFORM {s}._clear(k, rk); END IF;
        IF live THEN UPDATE {s}.keys SET kind = 'string', value = argv[a + 1], expire = e, lo = NULL, n = NULL WHERE key = k;
        ELSE INSERT INTO {s}.keys (key, kind, value, expire) VALUES (k, 'string', argv[a + 1], e);
        END IF;
      END IF;
      res := ok::text;
    WHEN 'get' THEN
      IF live THEN res := to_json(rv)::text; END IF;
    WHEN 'hset', 'sadd', 'zadd' THEN
      -- The elements and the count in the keys row in one statement (its row made when the key
      -- is new; as the key's lock is held, a conflict means it is live).
      cnt := 0;
      IF c > 1 AND op = 'sadd' THEN
        WITH ins AS (
          INSERT INTO {s}.sets (key, member) SELECT k, m FROM unnest(argv[a + 1:a + c - 1]) AS u(m)
          ON CONFLICT DO NOTHING RETURNING true AS fresh
        ), added AS (SELECT count(*) AS fresh_n FROM ins), meta AS (
          INSERT INTO {s}.keys AS t (key, kind, lo, n) SELECT k, 'set', 0, fresh_n FROM added WHERE fresh_n > 0
          ON CONFLICT (key) DO UPDATE SET n = t.n + excluded.n
        ) SELECT fresh_n INTO cnt FROM added;
      ELSIF c > 1 AND op = 'hset' THEN
        WITH ins AS (
          INSERT INTO {s}.hashes (key, field, value)
          SELECT k, argv[a + 2 * i - 1], argv[a + 2 * i] FROM generate_series(1, (c - 1) / 2) AS i
          ON CONFLICT (key, field) DO UPDATE SET value = excluded.value RETURNING xmax = 0 AS fresh
        ), added AS (SELECT count(*) FILTER (WHERE fresh) AS fresh_n FROM ins), meta AS (
          INSERT INTO {s}.keys AS t (key, kind, lo, n) SELECT k, 'hash', 0, fresh_n FROM added WHERE fresh_n > 0
          ON CONFLICT (key) DO UPDATE SET n = t.n + excluded.n
        ) SELECT fresh_n INTO cnt FROM added;
      ELSIF c > 1 THEN
        WITH ins AS (
          INSERT INTO {s}.zsets (key, member, score)
          SELECT k, argv[a + 2 * i], argv[a + 2 * i - 1]::double precision FROM generate_series(1, (c - 1) / 2) AS i
          ON CONFLICT (key, member) DO UPDATE SET score = excluded.score RETURNING xmax = 0 AS fresh
        ), added AS (SELECT count(*) FILTER (WHERE fresh) AS fresh_n FROM ins), meta AS (
          INSERT INTO {s}.keys AS t (key, kind, lo, n) SELECT k, 'zset', 0, fresh_n FROM added WHERE fresh_n > 0
          ON CONFLICT (key) DO UPDATE SET n = t.n + excluded.n
        ) SELECT fresh_n INTO cnt FROM added;
      END IF;
      res := cnt::text;
    WHEN 'rpush', 'lpush' THEN
      IF c < 2 THEN
        res := CASE WHEN live THEN rn ELSE 0 END::text;
      ELSE
        -- Elements and the keys row in one statement: [i0, i0 + rn) is the list before.
        IF NOT live THEN rlo := 0; rn := 0; END IF;
        i0 := rlo;
        IF op = 'lpush' THEN rlo := rlo - (c - 1); END IF;
        rn := rn + c - 1;
        IF live AND c = 2 THEN  -- one element (a log's append): no function scan to set up
          WITH ins AS (
            INSERT INTO {s}.lists (key, seq, value)
            VALUES (k, CASE WHEN op = 'rpush' THEN i0 + rn - 1 ELSE i0 - 1 END, argv[a + 1])
          ) UPDATE {s}.keys SET lo = rlo, n = rn WHERE key = k;
        ELSIF live THEN
          WITH ins AS (
            INSERT INTO {s}.lists (key, seq, value)
            SELECT k, CASE WHEN op = 'rpush' THEN i0 + rn - c + o ELSE i0 - o END, v
            FROM unnest(argv[a + 1:a + c - 1]) WITH ORDINALITY AS u(v, o)
          ) UPDATE {s}.keys SET lo = rlo, n = rn WHERE key = k;
        ELSE
          WITH ins AS (
            INSERT INTO {s}.lists (key, seq, value)
            SELECT k, CASE WHEN op = 'rpush' THEN o - 1 ELSE i0 - o END, v
            FROM unnest(argv[a + 1:a + c - 1]) WITH ORDINALITY AS u(v, o)
          ) INSERT INTO {s}.keys (key, kind, lo, n) VALUES (k, 'list', rlo, rn);
        END IF;
        res := rn::text;
      END IF;
    WHEN 'exists', 'require_exists' THEN
      res := live::text;
    WHEN 'copy_ttl' THEN
      IF k = ANY (touched) THEN
        SELECT expire INTO e FROM {s}.keys WHERE key = k AND (expire IS NULL OR expire > now_ms);
      ELSE  -- the source as the batch read it
        j := array_position(c_key, k);
        e := (c_rows[j]).expire;
        IF e <= now_ms THEN e := NULL; END IF;
      END IF;
      res := '0';
      IF e IS NOT NULL THEN
        SELECT count(*) INTO cnt FROM unnest(argv[a + 1:a + c - 1]) AS u(dk)
        JOIN {s}.keys ON key = dk WHERE expire IS NULL OR expire > now_ms;
        UPDATE {s}.keys SET expire = e
        WHERE key = ANY (argv[a + 1:a + c - 1]) AND (expire IS NULL OR expire > now_ms) AND expire IS DISTINCT FROM e;
        res := cnt::text;
      END IF;
    WHEN 'incr' THEN
      IF (NOT live OR rv ~ '^-?(0|[1-9][0-9]{0,17})$') AND argv[a + 1] ~ '^-?[0-9]{1,18}$' THEN
        -- Integers of at most 18 digits: their sum fits 64 bits (the usual case, done here).
        rv := (CASE WHEN live THEN rv::bigint ELSE 0 END + argv[a + 1]::bigint)::text;
      ELSE
        rv := {s}._incr(CASE WHEN live THEN rv END, argv[a + 1], k, NULL);
      END IF;
      IF live THEN UPDATE {s}.keys SET value = rv WHERE key = k;
      ELSE INSERT INTO {s}.keys (key, kind, value) VALUES (k, 'string', rv);
      END IF;
      res := to_json(rv)::text;
    WHEN 'mget' THEN
      SELECT coalesce(json_agg(CASE WHEN kind = 'string' AND (expire IS NULL OR expire > now_ms) THEN value END ORDER BY o), '[]')::text
      INTO res FROM unnest(argv[a:a + c - 1]) WITH ORDINALITY AS u(uk, o) LEFT JOIN {s}.keys ON key = uk;
    WHEN 'require_equal' THEN
      res := CASE WHEN c = 1 THEN NOT live  -- no value: the key must be missing
        ELSE live AND rk = 'string' AND rv = argv[a + 1] END::text;
    WHEN 'require_missing' THEN
      res := (NOT live)::text;
    WHEN 'hget' THEN
      IF live THEN SELECT to_json(value)::text INTO res FROM {s}.hashes WHERE key = k AND field = argv[a + 1]; END IF;
    WHEN 'hgetall' THEN  -- flat: field, value, field, value...
      res := '[]';
      IF live THEN
        SELECT json_agg(x ORDER BY field, o)::text INTO res
        FROM {s}.hashes, LATERAL (VALUES (1, field), (2, value)) AS t(o, x) WHERE key = k;
      END IF;
    WHEN 'lrange' THEN
      res := '[]';
      IF live THEN
        SELECT lo, hi INTO i0, i1 FROM {s}._bounds(argv[a + 1]::bigint, argv[a + 2]::bigint, rn);
        IF i0 < i1 THEN
          SELECT coalesce(json_agg(value ORDER BY seq), '[]')::text INTO res
          FROM {s}.lists WHERE key = k AND seq >= rlo + i0 AND seq < rlo + i1;
        END IF;
      END IF;
    WHEN 'smembers' THEN
      res := '[]';
      IF live THEN SELECT coalesce(json_agg(member), '[]')::text INTO res FROM {s}.sets WHERE key = k; END IF;
    WHEN 'zrange' THEN
      res := '[]';
      IF live THEN
        SELECT lo, hi INTO i0, i1 FROM {s}._bounds(argv[a + 1]::bigint, argv[a + 2]::bigint, rn);
        zm := NULL; zs := NULL;
        IF i0 < i1 AND argv[a + 3] = '1' THEN  -- ranks from the top are ascending ranks from the end
          e := i0; i0 := rn - i1; i1 := rn - e;
        END IF;
        -- OFFSET walks the rows it skips: read the ascending window [i0, i1) from the nearer end.
        IF i0 >= i1 THEN NULL;
        ELSIF i0 <= rn - i1 THEN
          SELECT array_agg(member ORDER BY score, member), array_agg(score ORDER BY score, member) INTO zm, zs
          FROM (SELECT member, score FROM {s}.zsets WHERE key = k ORDER BY score, member LIMIT i1 - i0 OFFSET i0) q;
        ELSE
          SELECT array_agg(member ORDER BY score, member), array_agg(score ORDER BY score, member) INTO zm, zs
          FROM (SELECT member, score FROM {s}.zsets WHERE key = k ORDER BY score DESC, member DESC LIMIT i1 - i0 OFFSET rn - i1) q;
        END IF;
        res := {s}._pairs(zm, zs, argv[a + 3] = '1');
      END IF;
    WHEN 'zrangebyscore' THEN  -- key, min, max, desc, offset (>= 0), count (< 0: all)
      res := '[]';
      i0 := argv[a + 4]::bigint;
      i1 := CASE WHEN argv[a + 5]::bigint >= 0 THEN argv[a + 5]::bigint END;
      zm := NULL; zs := NULL;
      IF live AND argv[a + 3] = '1' THEN
        SELECT array_agg(member ORDER BY score DESC, member DESC), array_agg(score ORDER BY score DESC, member DESC)
        INTO zm, zs FROM (
          SELECT member, score FROM {s}.zsets
          WHERE key = k AND score >= argv[a + 1]::double precision AND score <= argv[a + 2]::double precision
          ORDER BY score DESC, member DESC LIMIT i1 OFFSET i0) q;
      ELSIF live THEN
        SELECT array_agg(member ORDER BY score, member), array_agg(score ORDER BY score, member) INTO zm, zs FROM (
          SELECT member, score FROM {s}.zsets
          WHERE key = k AND score >= argv[a + 1]::double precision AND score <= argv[a + 2]::double precision
          ORDER BY score, member LIMIT i1 OFFSET i0) q;
      END IF;
      res := {s}._pairs(zm, zs, false);
    WHEN 'delete' THEN
      res := {s}._drop(argv[a:a + c - 1], now_ms)::text;
    WHEN 'pexpire' THEN
      res := live::text;
      IF live AND argv[a + 1]::bigint <= 0 THEN PERFORM {s}._drop(ARRAY[k], now_ms);
      ELSIF live THEN UPDATE {s}.keys SET expire = now_ms + argv[a + 1]::bigint WHERE key = k;
      END IF;
    WHEN 'pttl' THEN
      res := CASE WHEN NOT live THEN -2 WHEN re IS NULL THEN -1 ELSE re - now_ms END::text;
    WHEN 'hlen', 'scard', 'zcard', 'llen' THEN
      res := CASE WHEN live THEN rn ELSE 0 END::text;
    WHEN 'hdel', 'srem', 'zrem' THEN
      cnt := 0;
      IF live AND c > 1 THEN
        IF op = 'hdel' THEN DELETE FROM {s}.hashes WHERE key = k AND field = ANY (argv[a + 1:a + c - 1]);
        ELSIF op = 'srem' THEN DELETE FROM {s}.sets WHERE key = k AND member = ANY (argv[a + 1:a + c - 1]);
        ELSE DELETE FROM {s}.zsets WHERE key = k AND member = ANY (argv[a + 1:a + c - 1]);
        END IF;
        GET DIAGNOSTICS cnt = ROW_COUNT;
        IF cnt = rn THEN DELETE FROM {s}.keys WHERE key = k;  -- an emptied container no longer exists
        ELSIF cnt > 0 THEN UPDATE {s}.keys SET n = n - cnt WHERE key = k;
        END IF;
      END IF;
      res := cnt::text;
    WHEN 'ltrim' THEN
      IF live THEN  -- {s}._bounds inline (a log trimmed after each push is a hot path)
        i0 := argv[a + 1]::bigint;
        i1 := argv[a + 2]::bigint;
        IF i0 < 0 THEN i0 := greatest(rn + i0, 0); END IF;
        IF i1 < 0 THEN i1 := rn + i1; END IF;
        i1 := least(i1, rn - 1) + 1;
        IF i0 >= i1 THEN PERFORM {s}._drop(ARRAY[k], now_ms);
        ELSIF i0 > 0 OR i1 < rn THEN
          -- Each end a range of the primary key's index (one OR-ed scan would read every element);
          -- a log trims its head only: one statement with its keys row.
          IF i1 < rn THEN DELETE FROM {s}.lists WHERE key = k AND seq >= rlo + i1; END IF;
          IF i0 > 0 THEN
            WITH gone AS (DELETE FROM {s}.lists WHERE key = k AND seq < rlo + i0)
            UPDATE {s}.keys SET lo = rlo + i0, n = i1 - i0 WHERE key = k;
          ELSE
            UPDATE {s}.keys SET lo = rlo + i0, n = i1 - i0 WHERE key = k;
          END IF;
        END IF;
      END IF;
    WHEN 'hincr' THEN
      rv := NULL;
      IF live THEN SELECT value INTO rv FROM {s}.hashes WHERE key = k AND field = argv[a + 1]; END IF;
      res := {s}._incr(rv, argv[a + 2], k, argv[a + 1]);
      IF rv IS NOT NULL THEN UPDATE {s}.hashes SET value = res WHERE key = k AND field = argv[a + 1];
      ELSE
        INSERT INTO {s}.hashes (key, field, value) VALUES (k, argv[a + 1], res);
        IF live THEN UPDATE {s}.keys SET n = n + 1 WHERE key = k;
        ELSE INSERT INTO {s}.keys (key, kind, lo, n) VALUES (k, 'hash', 0, 1);
        END IF;
      END IF;
      res := to_json(res)::text;
    WHEN 'hmget' THEN
      SELECT coalesce(json_agg(h.value ORDER BY o), '[]')::text INTO res
      FROM unnest(argv[a + 1:a + c - 1]) WITH ORDINALITY AS u(uf, o)
      LEFT JOIN {s}.hashes h ON live AND h.key = k AND h.field = uf;
    WHEN 'hkeys' THEN
      res := '[]';
      IF live THEN SELECT coalesce(json_agg(field), '[]')::text INTO res FROM {s}.hashes WHERE key = k; END IF;
    WHEN 'sismember' THEN
      res := (live AND EXISTS (SELECT 1 FROM {s}.sets WHERE key = k AND member = argv[a + 1]))::text;
    WHEN 'lindex' THEN
      i0 := argv[a + 1]::bigint;
      IF live AND i0 >= -rn AND i0 < rn THEN
        IF i0 < 0 THEN i0 := i0 + rn; END IF;
        SELECT to_json(value)::text INTO res FROM {s}.lists WHERE key = k AND seq = rlo + i0;
      END IF;
    WHEN 'lpop', 'rpop' THEN
      IF live THEN
        DELETE FROM {s}.lists WHERE key = k AND seq = CASE WHEN op = 'lpop' THEN rlo ELSE rlo + rn - 1 END
        RETURNING to_json(value)::text INTO res;
        IF rn = 1 THEN DELETE FROM {s}.keys WHERE key = k;
        ELSIF op = 'lpop' THEN UPDATE {s}.keys SET lo = rlo + 1, n = rn - 1 WHERE key = k;
        ELSE UPDATE {s}.keys SET n = rn - 1 WHERE key = k;
        END IF;
      END IF;
    WHEN 'zscore' THEN
      IF live THEN SELECT to_json(score)::text INTO res FROM {s}.zsets WHERE key = k AND member = argv[a + 1]; END IF;
    WHEN 'persist' THEN
      res := (live AND re IS NOT NULL)::text;
      IF live AND re IS NOT NULL THEN UPDATE {s}.keys SET expire = NULL WHERE key = k; END IF;
    WHEN 'publish' THEN
      -- Delivered by NOTIFY at commit (never for a batch that aborts), in commit order; kept in
      -- the events table for listeners catching up, and fetched from it when too long for NOTIFY.
      INSERT INTO {s}.events (channel, message) VALUES (k, argv[a + 1]) RETURNING id INTO eid;
      payload := json_build_array(eid, k, argv[a + 1])::text;
      IF octet_length(payload) > 7999 THEN payload := json_build_array(eid)::text; END IF;
      PERFORM pg_notify({channel}, payload);
    ELSE
      RAISE EXCEPTION USING ERRCODE = 'MSBAD', MESSAGE = 'unknown command ' || op;
    END CASE;
    IF fx & 32 <> 0 THEN touched := touched || argv[a:a + c - 1];
    ELSIF fx & 64 <> 0 THEN touched := array_append(touched, k);
    END IF;
    parts := array_append(parts, coalesce(res, 'null'));
    IF res = 'false' AND fx & 128 <> 0 THEN  -- guards come first: nothing was written
      RETURN '[false,[' || array_to_string(parts, ',') || ']]';
    END IF;
  END LOOP;
  res := '[true,[' || array_to_string(parts, ',') || ']]';
  IF writing THEN
    -- Kept keep_ms from now on the server's clock (a retry's deadline is wall time, not data time).
    INSERT INTO {s}.batches (id, reply, keys, expire)
    VALUES (bid, res, array_to_json(ks)::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + keep_ms);
  END IF;
  RETURN res;
END $$;
