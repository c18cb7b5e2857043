-- Agon event store, SQLite. Times are Unix milliseconds (UTC).
CREATE TABLE debates (
    id            TEXT PRIMARY KEY NOT NULL,
    topic         TEXT NOT NULL,
    config        TEXT NOT NULL,
    status        TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    last_seq      INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE events (
    debate_id  TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (debate_id, seq)
) WITHOUT ROWID;

CREATE TABLE snapshots (
    debate_id  TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    state      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (debate_id, seq)
);

CREATE TABLE leases (
    debate_id   TEXT PRIMARY KEY NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    holder      TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

CREATE TABLE persona_records (
    persona_id TEXT PRIMARY KEY NOT NULL,
    doc        TEXT NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
