-- Validity (issue 54): a memory of what a persona holds names its subject;
-- a later memory of the same persona on the same subject closes it
-- (superseded_by, valid_until in Unix milliseconds); nothing is deleted.
ALTER TABLE memories ADD COLUMN subject TEXT;
ALTER TABLE memories ADD COLUMN superseded_by TEXT;
ALTER TABLE memories ADD COLUMN valid_until INTEGER;
CREATE INDEX memories_subject ON memories (persona, subject) WHERE subject IS NOT NULL;
