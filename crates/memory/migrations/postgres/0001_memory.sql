-- Agon vector memory, PostgreSQL + pgvector. Times are Unix milliseconds (UTC).
-- The `embedding vector(d)` column and its HNSW index are added when the
-- store is first bound to an embedder (d is the embedder's dimension).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE memory_space (
    id          INT PRIMARY KEY CHECK (id = 1),
    model       TEXT NOT NULL,
    dimensions  INT NOT NULL,
    generation  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE memories (
    seq         BIGSERIAL UNIQUE,
    id          TEXT PRIMARY KEY,
    debate_id   TEXT NOT NULL,
    persona     TEXT NOT NULL,
    content     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    importance  SMALLINT NOT NULL,
    round       INT NOT NULL,
    created_at  BIGINT NOT NULL,
    doc_len     INT NOT NULL
);
CREATE INDEX memories_persona ON memories (persona);
CREATE INDEX memories_debate ON memories (debate_id);

-- BM25 postings: term frequencies per memory (terms from agon-memory's analyzer).
CREATE TABLE memory_terms (
    term        TEXT NOT NULL,
    memory_seq  BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    tf          INT NOT NULL,
    PRIMARY KEY (term, memory_seq)
);

CREATE TABLE memory_debates (
    debate_id   TEXT PRIMARY KEY,
    topic       TEXT NOT NULL,
    started_at  BIGINT NOT NULL
);
