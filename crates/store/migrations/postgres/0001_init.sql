-- Agon event store, PostgreSQL. Times are Unix milliseconds (UTC).
CREATE TABLE debates (
    id            TEXT PRIMARY KEY,
    topic         TEXT NOT NULL,
    config        JSONB NOT NULL,
    status        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    last_seq      BIGINT NOT NULL DEFAULT 0,
    message_count BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE events (
    debate_id  TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    payload    JSONB NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (debate_id, seq)
);

CREATE TABLE snapshots (
    debate_id  TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    state      JSONB NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (debate_id, seq)
);

CREATE TABLE leases (
    debate_id   TEXT PRIMARY KEY REFERENCES debates(id) ON DELETE CASCADE,
    holder      TEXT NOT NULL,
    acquired_at BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE TABLE persona_records (
    persona_id TEXT PRIMARY KEY,
    doc        JSONB NOT NULL,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
