//! The SQL implementation of [`EventStore`], shared by SQLite and
//! PostgreSQL: both accept `$N` placeholders (numbered in order of first
//! use), `ON CONFLICT … DO UPDATE … WHERE`, and `Json<Value>` columns (TEXT in
//! SQLite, JSONB in PostgreSQL). A macro instantiates it per database so the
//! queries are written once.

use sqlx::error::DatabaseError;

use crate::error::StoreError;

/// Maps a driver error to a typed one, naming the operation.
pub(crate) fn db_error(url: &str, context: &str, error: sqlx::Error) -> StoreError {
    match &error {
        sqlx::Error::Database(db) if is_locked(db.as_ref()) => StoreError::Locked {
            url: url.to_owned(),
            message: db.message().to_owned(),
        },
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed => {
            StoreError::Unavailable {
                url: url.to_owned(),
                message: error.to_string(),
            }
        }
        sqlx::Error::PoolTimedOut => StoreError::Unavailable {
            url: url.to_owned(),
            message: "no connection available (pool timed out)".to_owned(),
        },
        _ => StoreError::Database {
            url: url.to_owned(),
            context: context.to_owned(),
            message: error.to_string(),
        },
    }
}

fn is_locked(db: &dyn DatabaseError) -> bool {
    // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with extended codes.
    let sqlite_busy = db
        .code()
        .and_then(|c| c.parse::<i64>().ok())
        .is_some_and(|c| matches!(c & 0xff, 5 | 6));
    // PostgreSQL lock_not_available.
    sqlite_busy || db.code().as_deref() == Some("55P03")
}

pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Implements [`crate::EventStore`] for `$store` (a struct with `pool:
/// Pool<$db>` and `url: String`).
macro_rules! impl_event_store {
    ($store:ty, $db:ty, $backend:literal) => {
        impl $store {
            fn err(&self, context: &str, error: sqlx::Error) -> $crate::error::StoreError {
                $crate::sql::db_error(&self.url, context, error)
            }

            /// The document of `key` in `table` (keyed by `key_col`), if any.
            async fn doc_get(
                &self,
                table: &'static str,
                key_col: &'static str,
                key: &str,
                what: &str,
            ) -> Result<Option<$crate::types::DocRecord>, $crate::error::StoreError> {
                use sqlx::Row;
                let context = format!("reading {what}");
                let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT doc, version, updated_at FROM {table} WHERE {key_col} = $1")))
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.err(&context, e))?;
                let Some(row) = row else { return Ok(None) };
                let get = |e| self.err(&context, e);
                Ok(Some($crate::types::DocRecord {
                    key: key.to_owned(),
                    doc: row.try_get::<sqlx::types::Json<serde_json::Value>, _>("doc").map_err(get)?.0,
                    version: $crate::sql::to_u64(row.try_get("version").map_err(get)?),
                    updated_at: $crate::types::from_millis(row.try_get("updated_at").map_err(get)?),
                }))
            }

            /// Changes the document of `key` in `table` optimistically:
            /// `update` gets the current document (or `None`); a write that
            /// lost to a concurrent one is retried with the new document.
            async fn doc_update(
                &self,
                table: &'static str,
                key_col: &'static str,
                key: &str,
                update: $crate::store::RecordUpdate<'_>,
                what: &str,
            ) -> Result<$crate::types::DocRecord, $crate::error::StoreError> {
                const ATTEMPTS: u32 = 16;
                let context = format!("updating {what}");
                for attempt in 0..ATTEMPTS {
                    if attempt > 0 {
                        // Decorrelate the writers that lost: a random wait
                        // of up to 2^attempt ms (at most 64 ms), so none
                        // starves behind the others.
                        let cap = 1u64 << attempt.min(6);
                        let wait = fastrand::u64(0..cap * 1_000);
                        tokio::time::sleep(std::time::Duration::from_micros(wait)).await;
                    }
                    let current = self.doc_get(table, key_col, key, what).await?;
                    let doc = update(current.as_ref().map(|r| &r.doc));
                    let now = $crate::types::millis(chrono::Utc::now());
                    let written = match &current {
                        // `table` and `key_col` are the store's own constants.
                        None => sqlx::query(sqlx::AssertSqlSafe(format!(
                            "INSERT INTO {table} ({key_col}, doc, version, updated_at) VALUES ($1, $2, 1, $3) \
                             ON CONFLICT ({key_col}) DO NOTHING",
                        )))
                        .bind(key)
                        .bind(sqlx::types::Json(&doc))
                        .bind(now)
                        .execute(&self.pool)
                        .await,
                        Some(record) => sqlx::query(sqlx::AssertSqlSafe(format!(
                            "UPDATE {table} SET doc = $1, version = version + 1, updated_at = $2 \
                             WHERE {key_col} = $3 AND version = $4",
                        )))
                        .bind(sqlx::types::Json(&doc))
                        .bind(now)
                        .bind(key)
                        .bind($crate::sql::to_i64(record.version))
                        .execute(&self.pool)
                        .await,
                    }
                    .map_err(|e| self.err(&context, e))?;
                    if written.rows_affected() == 1 {
                        return Ok($crate::types::DocRecord {
                            key: key.to_owned(),
                            doc,
                            version: current.map_or(1, |r| r.version + 1),
                            updated_at: $crate::types::from_millis(now),
                        });
                    }
                }
                Err($crate::error::StoreError::Database {
                    url: self.url.clone(),
                    context,
                    message: format!("gave up after {ATTEMPTS} concurrent-update conflicts"),
                })
            }

            fn record(&self, row: &<$db as sqlx::Database>::Row) -> Result<$crate::types::DebateRecord, $crate::error::StoreError> {
                use sqlx::Row;
                let get = |e| self.err("reading a debate row", e);
                let status: String = row.try_get("status").map_err(get)?;
                let id: String = row.try_get("id").map_err(get)?;
                Ok($crate::types::DebateRecord {
                    status: status.parse().map_err(|message: String| $crate::error::StoreError::Database {
                        url: self.url.clone(),
                        context: format!("reading debate `{id}`"),
                        message,
                    })?,
                    topic: row.try_get("topic").map_err(get)?,
                    config: row.try_get::<sqlx::types::Json<serde_json::Value>, _>("config").map_err(get)?.0,
                    created_at: $crate::types::from_millis(row.try_get("created_at").map_err(get)?),
                    updated_at: $crate::types::from_millis(row.try_get("updated_at").map_err(get)?),
                    last_seq: $crate::sql::to_u64(row.try_get("last_seq").map_err(get)?),
                    message_count: $crate::sql::to_u64(row.try_get("message_count").map_err(get)?),
                    forked_from: match row.try_get::<Option<String>, _>("forked_from").map_err(get)? {
                        Some(parent) => Some($crate::types::ForkPoint {
                            debate: parent.into(),
                            seq: $crate::sql::to_u64(row.try_get::<Option<i64>, _>("forked_at_seq").map_err(get)?.unwrap_or(0)),
                        }),
                        None => None,
                    },
                    on_workers: row.try_get("on_workers").map_err(get)?,
                    id: id.into(),
                })
            }

            async fn lease_row(&self, id: &agon_core::DebateId) -> Result<Option<$crate::types::Lease>, $crate::error::StoreError> {
                use sqlx::Row;
                let row = sqlx::query("SELECT holder, acquired_at, expires_at FROM leases WHERE debate_id = $1")
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.err("reading a lease", e))?;
                let Some(row) = row else { return Ok(None) };
                let get = |e| self.err("reading a lease", e);
                Ok(Some($crate::types::Lease {
                    debate: id.clone(),
                    holder: row.try_get("holder").map_err(get)?,
                    acquired_at: $crate::types::from_millis(row.try_get("acquired_at").map_err(get)?),
                    expires_at: $crate::types::from_millis(row.try_get("expires_at").map_err(get)?),
                }))
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::EventStore for $store {
            fn backend(&self) -> &'static str {
                $backend
            }

            fn url(&self) -> &str {
                &self.url
            }

            async fn create_debate(&self, new: &$crate::types::NewDebate) -> Result<$crate::types::DebateRecord, $crate::error::StoreError> {
                let now = $crate::types::millis(chrono::Utc::now());
                let result = sqlx::query(
                    "INSERT INTO debates (id, topic, config, status, created_at, updated_at, last_seq, message_count) \
                     VALUES ($1, $2, $3, $4, $5, $5, 0, 0)",
                )
                .bind(new.id.as_str())
                .bind(&new.topic)
                .bind(sqlx::types::Json(&new.config))
                .bind($crate::types::RunStatus::Created.as_str())
                .bind(now)
                .execute(&self.pool)
                .await;
                match result {
                    Ok(_) => self.debate(&new.id).await,
                    Err(e) if $crate::sql::is_unique_violation(&e) => Err($crate::error::StoreError::DebateExists {
                        debate: new.id.to_string(),
                    }),
                    Err(e) => Err(self.err("creating a debate", e)),
                }
            }

            async fn debate(&self, id: &agon_core::DebateId) -> Result<$crate::types::DebateRecord, $crate::error::StoreError> {
                let row = sqlx::query("SELECT * FROM debates WHERE id = $1")
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.err("reading a debate", e))?;
                match row {
                    Some(row) => self.record(&row),
                    None => Err($crate::error::StoreError::DebateNotFound { debate: id.to_string() }),
                }
            }

            async fn set_status(&self, id: &agon_core::DebateId, status: $crate::types::RunStatus) -> Result<(), $crate::error::StoreError> {
                let done = sqlx::query("UPDATE debates SET status = $1, updated_at = $2 WHERE id = $3")
                    .bind(status.as_str())
                    .bind($crate::types::millis(chrono::Utc::now()))
                    .bind(id.as_str())
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.err("setting a debate's status", e))?;
                if done.rows_affected() == 0 {
                    return Err($crate::error::StoreError::DebateNotFound { debate: id.to_string() });
                }
                Ok(())
            }

            async fn append(&self, id: &agon_core::DebateId, expected_seq: u64, events: &[agon_core::DebateEvent]) -> Result<u64, $crate::error::StoreError> {
                self.append_taking(id, expected_seq, events, &[]).await
            }

            async fn append_taking(&self, id: &agon_core::DebateId, expected_seq: u64, events: &[agon_core::DebateEvent], requests: &[u64]) -> Result<u64, $crate::error::StoreError> {
                if events.is_empty() {
                    self.take_requests(id, requests).await?;
                    let actual = self.debate(id).await?.last_seq;
                    return if actual == expected_seq {
                        Ok(actual)
                    } else {
                        Err($crate::error::StoreError::Conflict { debate: id.to_string(), expected: expected_seq, actual })
                    };
                }
                let payloads = events
                    .iter()
                    .map(|e| $crate::codec::encode(id.as_str(), e).map(|v| (e.name(), v)))
                    .collect::<Result<Vec<_>, _>>()?;
                let now = $crate::types::millis(chrono::Utc::now());
                let mut tx = self.pool.begin().await.map_err(|e| self.err("starting an append", e))?;
                let claimed = sqlx::query(
                    "UPDATE debates SET last_seq = last_seq + $1, message_count = message_count + $2, updated_at = $3 \
                     WHERE id = $4 AND last_seq = $5",
                )
                .bind(events.len() as i64)
                .bind($crate::types::messages_in(events))
                .bind(now)
                .bind(id.as_str())
                .bind($crate::sql::to_i64(expected_seq))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err("appending events", e))?;
                if claimed.rows_affected() == 0 {
                    drop(tx);
                    let actual = self.debate(id).await?.last_seq;
                    return Err($crate::error::StoreError::Conflict { debate: id.to_string(), expected: expected_seq, actual });
                }
                let mut insert = sqlx::QueryBuilder::<$db>::new("INSERT INTO events (debate_id, seq, kind, payload, created_at) ");
                insert.push_values(payloads.iter().enumerate(), |mut row, (i, (kind, payload))| {
                    row.push_bind(id.as_str())
                        .push_bind($crate::sql::to_i64(expected_seq + 1 + i as u64))
                        .push_bind(*kind)
                        .push_bind(sqlx::types::Json(payload))
                        .push_bind(now);
                });
                insert
                    .build()
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.err("appending events", e))?;
                for request in requests {
                    sqlx::query("UPDATE requests SET taken_at = $1 WHERE debate_id = $2 AND id = $3")
                        .bind(now)
                        .bind(id.as_str())
                        .bind($crate::sql::to_i64(*request))
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| self.err("taking a request", e))?;
                }
                Self::announce(&mut tx, id).await.map_err(|e| self.err("announcing an append", e))?;
                tx.commit().await.map_err(|e| self.err("committing an append", e))?;
                Ok(expected_seq + events.len() as u64)
            }

            async fn post_request(&self, id: &agon_core::DebateId, body: &serde_json::Value) -> Result<u64, $crate::error::StoreError> {
                use sqlx::Row;
                self.debate(id).await?;
                let row = sqlx::query("INSERT INTO requests (debate_id, body, posted_at) VALUES ($1, $2, $3) RETURNING id")
                    .bind(id.as_str())
                    .bind(sqlx::types::Json(body))
                    .bind($crate::types::millis(chrono::Utc::now()))
                    .fetch_one(&self.pool)
                    .await
                    .map_err(|e| self.err("recording a request", e))?;
                Ok($crate::sql::to_u64(row.try_get("id").map_err(|e| self.err("recording a request", e))?))
            }

            async fn pending_requests(&self, id: &agon_core::DebateId) -> Result<Vec<$crate::types::PostedRequest>, $crate::error::StoreError> {
                use sqlx::Row;
                let rows = sqlx::query("SELECT id, body, posted_at FROM requests WHERE debate_id = $1 AND taken_at IS NULL ORDER BY id")
                    .bind(id.as_str())
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.err("reading requests", e))?;
                let get = |e| self.err("reading a request", e);
                rows.iter()
                    .map(|row| {
                        Ok($crate::types::PostedRequest {
                            id: $crate::sql::to_u64(row.try_get("id").map_err(get)?),
                            debate: id.clone(),
                            body: row.try_get::<sqlx::types::Json<serde_json::Value>, _>("body").map_err(get)?.0,
                            posted_at: $crate::types::from_millis(row.try_get("posted_at").map_err(get)?),
                        })
                    })
                    .collect()
            }

            async fn take_requests(&self, id: &agon_core::DebateId, requests: &[u64]) -> Result<(), $crate::error::StoreError> {
                let now = $crate::types::millis(chrono::Utc::now());
                for request in requests {
                    sqlx::query("UPDATE requests SET taken_at = $1 WHERE debate_id = $2 AND id = $3")
                        .bind(now)
                        .bind(id.as_str())
                        .bind($crate::sql::to_i64(*request))
                        .execute(&self.pool)
                        .await
                        .map_err(|e| self.err("taking a request", e))?;
                }
                Ok(())
            }

            async fn fork_debate(&self, new: &$crate::types::NewDebate, from: &agon_core::DebateId, upto: u64) -> Result<$crate::types::DebateRecord, $crate::error::StoreError> {
                let source = self.debate(from).await?;
                if upto > source.last_seq {
                    return Err($crate::error::StoreError::ForkBeyondLog { debate: from.to_string(), seq: upto, last: source.last_seq });
                }
                let now = $crate::types::millis(chrono::Utc::now());
                let status = if upto == 0 { $crate::types::RunStatus::Created } else { $crate::types::RunStatus::Interrupted };
                let mut tx = self.pool.begin().await.map_err(|e| self.err("forking a debate", e))?;
                let created = sqlx::query(
                    "INSERT INTO debates (id, topic, config, status, created_at, updated_at, last_seq, message_count, forked_from, forked_at_seq) \
                     VALUES ($1, $2, $3, $4, $5, $5, $6, \
                       (SELECT COUNT(*) FROM events WHERE debate_id = $7 AND seq <= $6 AND kind = 'message_appended'), $7, $6)",
                )
                .bind(new.id.as_str())
                .bind(&new.topic)
                .bind(sqlx::types::Json(&new.config))
                .bind(status.as_str())
                .bind(now)
                .bind($crate::sql::to_i64(upto))
                .bind(from.as_str())
                .execute(&mut *tx)
                .await;
                match created {
                    Ok(_) => {}
                    Err(e) if $crate::sql::is_unique_violation(&e) => {
                        return Err($crate::error::StoreError::DebateExists { debate: new.id.to_string() });
                    }
                    Err(e) => return Err(self.err("forking a debate", e)),
                }
                sqlx::query(
                    "INSERT INTO events (debate_id, seq, kind, payload, created_at) \
                     SELECT $1, seq, kind, payload, created_at FROM events WHERE debate_id = $2 AND seq <= $3",
                )
                .bind(new.id.as_str())
                .bind(from.as_str())
                .bind($crate::sql::to_i64(upto))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err("copying a forked debate's events", e))?;
                tx.commit().await.map_err(|e| self.err("forking a debate", e))?;
                self.debate(&new.id).await
            }

            async fn events_after(&self, id: &agon_core::DebateId, after: u64) -> Result<Vec<$crate::types::StoredEvent>, $crate::error::StoreError> {
                use sqlx::Row;
                let rows = sqlx::query("SELECT seq, kind, payload FROM events WHERE debate_id = $1 AND seq > $2 ORDER BY seq")
                    .bind(id.as_str())
                    .bind($crate::sql::to_i64(after))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.err("loading events", e))?;
                if rows.is_empty() && after == 0 {
                    self.debate(id).await?;
                }
                let mut out = Vec::with_capacity(rows.len());
                let mut expected = after + 1;
                for row in rows {
                    let seq = $crate::sql::to_u64(row.try_get("seq").map_err(|e| self.err("loading events", e))?);
                    let corrupt = |message: String| $crate::error::StoreError::CorruptEvent { debate: id.to_string(), seq, message };
                    if seq != expected {
                        return Err($crate::error::StoreError::CorruptEvent {
                            debate: id.to_string(),
                            seq: expected,
                            message: format!("missing from the log (next stored event is #{seq})"),
                        });
                    }
                    let kind: String = row.try_get("kind").map_err(|e| corrupt(e.to_string()))?;
                    let payload: sqlx::types::Json<serde_json::Value> =
                        row.try_get("payload").map_err(|e| corrupt(format!("payload is not JSON: {e}")))?;
                    let event = $crate::codec::decode_event(id.as_str(), seq, &kind, payload.0)?;
                    out.push($crate::types::StoredEvent { seq, event });
                    expected += 1;
                }
                Ok(out)
            }

            async fn save_snapshot(&self, id: &agon_core::DebateId, seq: u64, blackboard: &agon_core::Blackboard) -> Result<(), $crate::error::StoreError> {
                let state = $crate::codec::encode(id.as_str(), blackboard)?;
                let mut tx = self.pool.begin().await.map_err(|e| self.err("saving a snapshot", e))?;
                sqlx::query(
                    "INSERT INTO snapshots (debate_id, seq, state, created_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (debate_id, seq) DO UPDATE SET state = excluded.state, created_at = excluded.created_at",
                )
                .bind(id.as_str())
                .bind($crate::sql::to_i64(seq))
                .bind(sqlx::types::Json(&state))
                .bind($crate::types::millis(chrono::Utc::now()))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err("saving a snapshot", e))?;
                sqlx::query("DELETE FROM snapshots WHERE debate_id = $1 AND seq < $2")
                    .bind(id.as_str())
                    .bind($crate::sql::to_i64(seq))
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.err("pruning snapshots", e))?;
                tx.commit().await.map_err(|e| self.err("saving a snapshot", e))
            }

            async fn latest_snapshot(&self, id: &agon_core::DebateId) -> Result<Option<(u64, agon_core::Blackboard)>, $crate::error::StoreError> {
                use sqlx::Row;
                let row = sqlx::query("SELECT seq, state FROM snapshots WHERE debate_id = $1 ORDER BY seq DESC LIMIT 1")
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.err("loading a snapshot", e))?;
                let Some(row) = row else { return Ok(None) };
                let seq = $crate::sql::to_u64(row.try_get("seq").map_err(|e| self.err("loading a snapshot", e))?);
                let state: sqlx::types::Json<serde_json::Value> = row.try_get("state").map_err(|e| $crate::error::StoreError::CorruptSnapshot {
                    debate: id.to_string(),
                    seq,
                    message: e.to_string(),
                })?;
                Ok(Some((seq, $crate::codec::decode_snapshot(id.as_str(), seq, state.0)?)))
            }

            async fn list_debates(&self) -> Result<Vec<$crate::types::DebateRecord>, $crate::error::StoreError> {
                let rows = sqlx::query("SELECT * FROM debates ORDER BY created_at DESC, id")
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.err("listing debates", e))?;
                rows.iter().map(|row| self.record(row)).collect()
            }

            async fn delete_debate(&self, id: &agon_core::DebateId) -> Result<(), $crate::error::StoreError> {
                let mut tx = self.pool.begin().await.map_err(|e| self.err("deleting a debate", e))?;
                for statement in [
                    "DELETE FROM events WHERE debate_id = $1",
                    "DELETE FROM snapshots WHERE debate_id = $1",
                    "DELETE FROM leases WHERE debate_id = $1",
                    "DELETE FROM requests WHERE debate_id = $1",
                ] {
                    sqlx::query(statement)
                        .bind(id.as_str())
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| self.err("deleting a debate", e))?;
                }
                let done = sqlx::query("DELETE FROM debates WHERE id = $1")
                    .bind(id.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.err("deleting a debate", e))?;
                if done.rows_affected() == 0 {
                    return Err($crate::error::StoreError::DebateNotFound { debate: id.to_string() });
                }
                tx.commit().await.map_err(|e| self.err("deleting a debate", e))
            }

            async fn size_bytes(&self) -> Result<u64, $crate::error::StoreError> {
                self.measure().await.map_err(|e| self.err("measuring the store", e))
            }

            async fn compact(&self) -> Result<(u64, u64), $crate::error::StoreError> {
                let before = self.size_bytes().await?;
                self.vacuum().await.map_err(|e| self.err("compacting the store", e))?;
                Ok((before, self.size_bytes().await?))
            }

            async fn acquire_lease(&self, id: &agon_core::DebateId, holder: &str, ttl: std::time::Duration) -> Result<$crate::types::Lease, $crate::error::StoreError> {
                self.debate(id).await?;
                let now = chrono::Utc::now();
                let expires = now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX);
                let taken = sqlx::query(
                    "INSERT INTO leases (debate_id, holder, acquired_at, expires_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (debate_id) DO UPDATE SET holder = excluded.holder, \
                       acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END, \
                       expires_at = excluded.expires_at \
                     WHERE leases.holder = excluded.holder OR leases.expires_at < $3",
                )
                .bind(id.as_str())
                .bind(holder)
                .bind($crate::types::millis(now))
                .bind($crate::types::millis(expires))
                .execute(&self.pool)
                .await
                .map_err(|e| self.err("acquiring a lease", e))?;
                let current = self.lease_row(id).await?;
                match current {
                    Some(lease) if taken.rows_affected() == 1 && lease.holder == holder => Ok(lease),
                    Some(lease) => Err($crate::error::StoreError::Leased {
                        debate: id.to_string(),
                        holder: lease.holder,
                        since: lease.acquired_at,
                        until: lease.expires_at,
                    }),
                    None => Err($crate::error::StoreError::LeaseLost { debate: id.to_string(), holder: holder.to_owned() }),
                }
            }

            async fn lease(&self, id: &agon_core::DebateId) -> Result<Option<$crate::types::Lease>, $crate::error::StoreError> {
                self.lease_row(id).await
            }

            async fn renew_lease(&self, lease: &$crate::types::Lease, ttl: std::time::Duration) -> Result<$crate::types::Lease, $crate::error::StoreError> {
                let expires = chrono::Utc::now() + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX);
                let done = sqlx::query("UPDATE leases SET expires_at = $1 WHERE debate_id = $2 AND holder = $3")
                    .bind($crate::types::millis(expires))
                    .bind(lease.debate.as_str())
                    .bind(&lease.holder)
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.err("renewing a lease", e))?;
                if done.rows_affected() == 0 {
                    return Err($crate::error::StoreError::LeaseLost { debate: lease.debate.to_string(), holder: lease.holder.clone() });
                }
                Ok($crate::types::Lease { expires_at: $crate::types::from_millis($crate::types::millis(expires)), ..lease.clone() })
            }

            async fn release_lease(&self, lease: &$crate::types::Lease) -> Result<(), $crate::error::StoreError> {
                sqlx::query("DELETE FROM leases WHERE debate_id = $1 AND holder = $2")
                    .bind(lease.debate.as_str())
                    .bind(&lease.holder)
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.err("releasing a lease", e))?;
                Ok(())
            }

            async fn persona_record(&self, persona: &agon_core::PersonaId) -> Result<Option<$crate::types::PersonaRecord>, $crate::error::StoreError> {
                Ok(self.doc_get("persona_records", "persona_id", persona.as_str(), "a persona record").await?.map(|d| $crate::types::PersonaRecord {
                    persona: persona.clone(),
                    doc: d.doc,
                    version: d.version,
                    updated_at: d.updated_at,
                }))
            }

            async fn persona_records(&self) -> Result<Vec<$crate::types::PersonaRecord>, $crate::error::StoreError> {
                use sqlx::Row;
                let rows = sqlx::query("SELECT persona_id, doc, version, updated_at FROM persona_records ORDER BY persona_id")
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.err("listing persona records", e))?;
                let get = |e| self.err("reading a persona record", e);
                rows.iter()
                    .map(|row| {
                        Ok($crate::types::PersonaRecord {
                            persona: agon_core::PersonaId::new(row.try_get::<String, _>("persona_id").map_err(get)?),
                            doc: row.try_get::<sqlx::types::Json<serde_json::Value>, _>("doc").map_err(get)?.0,
                            version: $crate::sql::to_u64(row.try_get("version").map_err(get)?),
                            updated_at: $crate::types::from_millis(row.try_get("updated_at").map_err(get)?),
                        })
                    })
                    .collect()
            }

            async fn update_persona_record(
                &self,
                persona: &agon_core::PersonaId,
                update: $crate::store::RecordUpdate<'_>,
            ) -> Result<$crate::types::PersonaRecord, $crate::error::StoreError> {
                let d = self
                    .doc_update("persona_records", "persona_id", persona.as_str(), update, &format!("the record of persona `{persona}`"))
                    .await?;
                Ok($crate::types::PersonaRecord {
                    persona: persona.clone(),
                    doc: d.doc,
                    version: d.version,
                    updated_at: d.updated_at,
                })
            }

            async fn rubric_record(&self, name: &str) -> Result<Option<$crate::types::DocRecord>, $crate::error::StoreError> {
                self.doc_get("rubrics", "name", name, "a rubric").await
            }

            async fn update_rubric_record(
                &self,
                name: &str,
                update: $crate::store::RecordUpdate<'_>,
            ) -> Result<$crate::types::DocRecord, $crate::error::StoreError> {
                self.doc_update("rubrics", "name", name, update, &format!("rubric `{name}`")).await
            }
        }
    };
}

pub(crate) use impl_event_store;
