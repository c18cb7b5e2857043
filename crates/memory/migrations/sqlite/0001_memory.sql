-- Agon vector memory, embedded (SQLite). Times are Unix milliseconds (UTC).
CREATE TABLE memory_space (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    model       TEXT NOT NULL,
    dimensions  INTEGER NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE memories (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    debate_id   TEXT NOT NULL,
    persona     TEXT NOT NULL,
    content     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    importance  INTEGER NOT NULL,
    round       INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    -- little-endian f32 × dimensions, unit length; NULL while being reindexed
    embedding   BLOB
);
CREATE INDEX memories_persona ON memories (persona);

CREATE TABLE memory_debates (
    debate_id   TEXT PRIMARY KEY,
    topic       TEXT NOT NULL,
    started_at  INTEGER NOT NULL
);
