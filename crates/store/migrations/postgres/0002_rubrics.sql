-- The living rubric (seed 003): per rubric name, one JSON document with
-- its versions and the changes proposed to it. Times are Unix milliseconds.
CREATE TABLE rubrics (
    name       TEXT PRIMARY KEY,
    doc        JSONB NOT NULL,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
