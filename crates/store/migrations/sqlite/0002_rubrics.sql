-- The living rubric (seed 003): per rubric name, one JSON document with
-- its versions and the changes proposed to it. Times are Unix milliseconds.
CREATE TABLE rubrics (
    name       TEXT PRIMARY KEY NOT NULL,
    doc        TEXT NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
