-- Requests for a debate's run (notes, pauses, resumes, stops, answers),
-- recorded by whichever process a person reaches; the process holding the
-- run's lease takes them before its next step (`taken_at` is set in the
-- transaction that appends what they became). Times are Unix milliseconds.
CREATE TABLE requests (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    debate_id TEXT NOT NULL REFERENCES debates(id) ON DELETE CASCADE,
    body      TEXT NOT NULL,
    posted_at INTEGER NOT NULL,
    taken_at  INTEGER
);
CREATE INDEX requests_pending ON requests (debate_id, id) WHERE taken_at IS NULL;

-- A fork's origin: the debate and the last event of it that it copied.
ALTER TABLE debates ADD COLUMN forked_from TEXT;
ALTER TABLE debates ADD COLUMN forked_at_seq INTEGER;
-- Whether the debate was ever queued for the workers (a resume queues it again).
ALTER TABLE debates ADD COLUMN on_workers INTEGER NOT NULL DEFAULT 0;
