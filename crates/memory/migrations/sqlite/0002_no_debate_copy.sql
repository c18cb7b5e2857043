-- Debates' topic and start come from the event store's `debates` table (the
-- memory lives in the store's database): no second copy.
DROP TABLE IF EXISTS memory_debates;
