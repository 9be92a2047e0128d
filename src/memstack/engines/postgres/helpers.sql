-- Helpers of the batch functions (memstack.engines.postgres.schema renders {s} and {lock}):
-- dropping keys, Redis index ranges, the seam's number rules (JSON numbers, 64-bit integers,
-- Python's float text) and the sweep of expired keys, old batch replies and old events.

-- Remove the elements of key k of type kind (its keys row stays).
CREATE OR REPLACE FUNCTION {s}._clear(k text, kind text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF kind = 'hash' THEN DELETE FROM {s}.hashes WHERE key = k;
  ELSIF kind = 'set' THEN DELETE FROM {s}.sets WHERE key = k;
  ELSIF kind = 'list' THEN DELETE FROM {s}.lists WHERE key = k;
  ELSIF kind = 'zset' THEN DELETE FROM {s}.zsets WHERE key = k;
  END IF;
END $$;

-- Delete keys ks (their elements too); returns how many distinct ones were live at now_ms.
CREATE OR REPLACE FUNCTION {s}._drop(ks text[], now_ms bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  live bigint;
BEGIN
  WITH gone AS (DELETE FROM {s}.keys WHERE key = ANY (ks) RETURNING key, kind, expire),
  h AS (DELETE FROM {s}.hashes WHERE key IN (SELECT key FROM gone WHERE kind = 'hash')),
  st AS (DELETE FROM {s}.sets WHERE key IN (SELECT key FROM gone WHERE kind = 'set')),
  l AS (DELETE FROM {s}.lists WHERE key IN (SELECT key FROM gone WHERE kind = 'list')),
  z AS (DELETE FROM {s}.zsets WHERE key IN (SELECT key FROM gone WHERE kind = 'zset'))
  SELECT count(*) FILTER (WHERE expire IS NULL OR expire > now_ms) INTO live FROM gone;
  RETURN live;
END $$;

-- Redis inclusive start..stop (negative from the end) over len elements as [lo, hi).
CREATE OR REPLACE FUNCTION {s}._bounds(start bigint, stop bigint, len bigint, OUT lo bigint, OUT hi bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF start < 0 THEN start := greatest(len + start, 0); END IF;
  IF stop < 0 THEN stop := len + stop; END IF;
  stop := least(stop, len - 1);
  IF start > stop OR start >= len THEN lo := 0; hi := 0;
  ELSE lo := start; hi := stop + 1;
  END IF;
END $$;

-- Sorted-set members and scores as one flat JSON array (member, score, member...), in their
-- order or reversed.
CREATE OR REPLACE FUNCTION {s}._pairs(zm text[], zs double precision[], rev boolean) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(json_agg(x ORDER BY CASE WHEN rev THEN -i ELSE i END, o), '[]')::text
  FROM unnest(zm, zs) WITH ORDINALITY AS u(m, sc, i), LATERAL (VALUES (1, to_json(m)), (2, to_json(sc))) AS t(o, x)
$$;

-- A JSON number as a double, the way Python's float() reads it: beyond the double range it is
-- infinite, below the smallest denormal it is zero.
CREATE OR REPLACE FUNCTION {s}._f8(t text) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m text[];
  whole text;
  magnitude numeric;
BEGIN
  RETURN t::double precision;
EXCEPTION WHEN numeric_value_out_of_range THEN
  m := regexp_match(t, '^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$');
  whole := ltrim(m[2], '0');
  magnitude := coalesce(m[4], '0')::numeric;
  IF whole <> '' THEN magnitude := magnitude + length(whole);
  ELSE magnitude := magnitude - (length(coalesce(m[3], '')) - length(ltrim(coalesce(m[3], ''), '0')));
  END IF;
  IF magnitude > 0 THEN
    RETURN CASE WHEN m[1] = '-' THEN '-Infinity'::double precision ELSE 'Infinity'::double precision END;
  END IF;
  RETURN CASE WHEN m[1] = '-' THEN '-0'::double precision ELSE 0::double precision END;
END $$;

-- Python's repr() of a finite double: the shortest text that reads back as the same double
-- (PostgreSQL's own output is not always the shortest), in Python's layout.
CREATE OR REPLACE FUNCTION {s}._pyrepr(x double precision) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  lo int := 0;
  hi int := 16;
  mid int;
  t text;
  m text[];
  digits text;
  e10 int;
BEGIN
  IF x = 0 THEN
    RETURN CASE WHEN x::text LIKE '-%' THEN '-0.0' ELSE '0.0' END;
  END IF;
  WHILE lo < hi LOOP  -- the fewest digits after the first that read back as x
    mid := (lo + hi) / 2;
    IF {s}._f8(trim(to_char(x, '9' || CASE WHEN mid > 0 THEN '.' || repeat('9', mid) ELSE '' END || 'EEEE'))) = x
    THEN hi := mid;
    ELSE lo := mid + 1;
    END IF;
  END LOOP;
  t := trim(to_char(x, '9' || CASE WHEN lo > 0 THEN '.' || repeat('9', lo) ELSE '' END || 'EEEE'));
  m := regexp_match(t, '^(-?)([0-9])\.?([0-9]*)e([+-][0-9]+)$');
  digits := rtrim(m[2] || m[3], '0');
  e10 := m[4]::int;
  IF e10 < -4 OR e10 >= 16 THEN
    RETURN m[1] || left(digits, 1) || CASE WHEN length(digits) > 1 THEN '.' || substr(digits, 2) ELSE '' END
      || 'e' || CASE WHEN e10 < 0 THEN '-' ELSE '+' END || CASE WHEN abs(e10) < 10 THEN '0' ELSE '' END
      || abs(e10)::text;
  ELSIF e10 < 0 THEN
    RETURN m[1] || '0.' || repeat('0', -e10 - 1) || digits;
  ELSIF length(digits) <= e10 + 1 THEN
    RETURN m[1] || digits || repeat('0', e10 + 1 - length(digits)) || '.0';
  END IF;
  RETURN m[1] || left(digits, e10 + 1) || '.' || substr(digits, e10 + 2);
END $$;

-- The seam's increment: cur (stored text, NULL = 0) + amt (decimal int or Python float text),
-- as stored text; ints stay ints within 64 bits. Raises MSNAN [key, field, why].
CREATE OR REPLACE FUNCTION {s}._incr(cur text, amt text, k text, f text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m text[];
  total numeric;
  x double precision;
  why text;
BEGIN
  cur := coalesce(cur, '0');
  m := regexp_match(cur, '^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$');
  IF m IS NULL THEN
    why := 'stored value ' || left(cur, 60) || ' is not a JSON number';
  ELSIF m[1] IS NULL AND m[2] IS NULL THEN
    total := cur::numeric;
    IF total < -9223372036854775808 OR total > 9223372036854775807 THEN
      why := left(cur, 60) || ' is out of the 64-bit range';
    ELSIF amt ~ '^-?[0-9]+$' THEN
      total := total + amt::numeric;
      IF total < -9223372036854775808 OR total > 9223372036854775807 THEN
        why := 'the increment would overflow a 64-bit integer';
      ELSE
        RETURN total::text;
      END IF;
    END IF;
  ELSIF {s}._f8(cur) IN ('Infinity', '-Infinity') THEN
    why := left(cur, 60) || ' is not finite';
  END IF;
  IF why IS NULL THEN
    BEGIN
      x := {s}._f8(cur) + amt::double precision;
    EXCEPTION WHEN numeric_value_out_of_range THEN  -- PostgreSQL raises where Python gives inf
      x := 'Infinity';
    END;
    IF x IN ('Infinity', '-Infinity') THEN
      why := 'the increment gives a non-finite number';
    ELSE
      RETURN {s}._pyrepr(x);
    END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'MSNAN', MESSAGE = json_build_array(k, f, why)::text;
END $$;

-- The advisory lock id of stored key k: the first four bytes of the SHA-256 of its UTF-8, signed
-- (memstack.engines.postgres.codec.lock_ids computes the same for the batches it sends).
CREATE OR REPLACE FUNCTION {s}._lock_id(k text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ('x' || encode(substr(sha256(convert_to(k, 'UTF8')), 1, 4), 'hex'))::bit(32)::int
$$;

-- One bounded sweep: expired keys (engine clock: now_ms; skipping any a batch holds), batch
-- replies and events past their time (server clock: they serve retries and listeners, not the
-- data's TTLs). Returns how many keys went.
CREATE OR REPLACE FUNCTION {s}.sweep(now_ms bigint, lim int, retention interval)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  victims text[];
  removed bigint := 0;
BEGIN
  SELECT array_agg(key) INTO victims FROM (
    SELECT key FROM {s}.keys WHERE expire <= now_ms ORDER BY expire LIMIT lim
  ) q WHERE pg_try_advisory_xact_lock({lock}, {s}._lock_id(key));
  IF victims IS NOT NULL THEN
    -- Each victim's lock is held: no batch changed it since; re-check its expiry all the same.
    SELECT array_agg(key) INTO victims FROM {s}.keys WHERE key = ANY (victims) AND expire <= now_ms;
    IF victims IS NOT NULL THEN
      PERFORM {s}._drop(victims, now_ms);
      removed := cardinality(victims);
    END IF;
  END IF;
  DELETE FROM {s}.batches WHERE expire < (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  DELETE FROM {s}.events WHERE at < clock_timestamp() - retention;
  RETURN removed;
END $$;

-- Delete every key and batch reply: row by row while the tables are small (a TRUNCATE costs
-- milliseconds of file work however little it removes), by TRUNCATE once they are not.
CREATE OR REPLACE FUNCTION {s}.flush() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF pg_relation_size('{s}.keys') + pg_relation_size('{s}.hashes') + pg_relation_size('{s}.sets')
     + pg_relation_size('{s}.lists') + pg_relation_size('{s}.zsets') + pg_relation_size('{s}.batches') < 4194304 THEN
    DELETE FROM {s}.keys;
    DELETE FROM {s}.hashes;
    DELETE FROM {s}.sets;
    DELETE FROM {s}.lists;
    DELETE FROM {s}.zsets;
    DELETE FROM {s}.batches;
  ELSE
    TRUNCATE {s}.keys, {s}.hashes, {s}.sets, {s}.lists, {s}.zsets, {s}.batches;
  END IF;
END $$;
