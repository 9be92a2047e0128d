-- The PostgreSQL engine's tables (memstack.engines.postgres.schema renders {s}, the schema).
-- One keys row per key (type, string value, expire-at in engine-clock ms, list start, element
-- count), one table per container type; text columns compare byte-wise (COLLATE "C"), so
-- sorted-set ties and prefix scans order as Redis and the other engines do.
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.meta (
    name text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.keys (
    key text COLLATE "C" PRIMARY KEY,
    kind text NOT NULL,
    value text,
    expire bigint,
    lo bigint,
    n bigint
);
CREATE INDEX IF NOT EXISTS keys_expire ON {s}.keys (expire) WHERE expire IS NOT NULL;
CREATE TABLE IF NOT EXISTS {s}.hashes (
    key text COLLATE "C" NOT NULL,
    field text COLLATE "C" NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (key, field)
);
CREATE TABLE IF NOT EXISTS {s}.sets (
    key text COLLATE "C" NOT NULL,
    member text COLLATE "C" NOT NULL,
    PRIMARY KEY (key, member)
);
CREATE TABLE IF NOT EXISTS {s}.lists (
    key text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS {s}.zsets (
    key text COLLATE "C" NOT NULL,
    member text COLLATE "C" NOT NULL,
    score double precision NOT NULL,
    PRIMARY KEY (key, member)
);
CREATE INDEX IF NOT EXISTS zsets_order ON {s}.zsets (key, score, member);
-- Published messages, kept a while so a listener that lost its connection catches up.
CREATE TABLE IF NOT EXISTS {s}.events (
    id bigserial PRIMARY KEY,
    channel text NOT NULL,
    message text NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS events_at ON {s}.events (at);
-- The first reply of each write batch and its keys (a JSON list: a forget finds the replies of
-- batches on its keys), by batch id, until expire (server-clock ms): a resent batch answers it
-- and applies nothing twice. No index on expire: the sweep scans a few seconds'
-- worth of rows, and every batch saves an index insert.
CREATE TABLE IF NOT EXISTS {s}.batches (
    id bigint PRIMARY KEY,
    reply text NOT NULL,
    keys text NOT NULL,
    expire bigint NOT NULL
);
