//! Queries written once for both database backends (as `agon-store` does):
//! a macro instantiates them for each backend's row type. Both databases
//! accept `$N` placeholders. What differs by design — vector storage and
//! search (exact in process over SQLite, HNSW in pgvector) — stays in each
//! backend.

/// Implements, for `$backend` (a struct with `pool` and `url`) whose rows
/// are `$row`: `meta_of` (a `memories` row's metadata, with the backend's
/// integer types `$importance` and `$round`), and the inherent `db`,
/// `debate_infos` and `unembedded_metas`.
macro_rules! shared_queries {
    ($backend:ty, $row:ty, $importance:ty, $round:ty) => {
        /// A memory's metadata from a `memories` row.
        fn meta_of(row: &$row) -> Result<$crate::MemoryMeta, $crate::MemoryError> {
            use sqlx::Row;
            Ok($crate::MemoryMeta {
                id: row.get("id"),
                debate: agon_core::DebateId::new(row.get::<String, _>("debate_id")),
                persona: agon_core::PersonaId::new(row.get::<String, _>("persona")),
                content: row.get("content"),
                kind: row.get::<String, _>("kind").parse()?,
                importance: row.get::<$importance, _>("importance").clamp(1, 10) as u8,
                round: row.get::<$round, _>("round").max(0) as u32,
                created: $crate::sql::from_millis(row.get("created_at")),
                subject: row.get("subject"),
            })
        }

        impl $backend {
            /// Maps a database error to [`MemoryError::Database`] naming
            /// this store (password redacted).
            fn db(&self) -> impl Fn(sqlx::Error) -> $crate::MemoryError + '_ {
                |e| $crate::MemoryError::Database {
                    url: self.url.clone(),
                    message: e.to_string(),
                }
            }

            /// Topic and creation of `ids` (unknown ones skipped), from the
            /// event store's `debates` table: the memory lives in the
            /// store's database and keeps no copy.
            async fn debate_infos(
                &self,
                ids: &[agon_core::DebateId],
            ) -> Result<Vec<$crate::DebateInfo>, $crate::MemoryError> {
                use sqlx::Row;
                let mut out = Vec::new();
                for id in ids {
                    let row = sqlx::query("SELECT topic, created_at FROM debates WHERE id = $1")
                        .bind(id.as_str())
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(self.db())?;
                    if let Some(row) = row {
                        out.push($crate::DebateInfo {
                            debate: id.clone(),
                            topic: row.get("topic"),
                            started: $crate::sql::from_millis(row.get("created_at")),
                        });
                    }
                }
                Ok(out)
            }

            /// Every memory of `persona` on `subject`.
            async fn subject_metas(
                &self,
                persona: &agon_core::PersonaId,
                subject: &str,
            ) -> Result<Vec<$crate::MemoryMeta>, $crate::MemoryError> {
                let rows = sqlx::query(
                    "SELECT id, debate_id, persona, content, kind, importance, round, created_at, subject \
                     FROM memories WHERE persona = $1 AND subject = $2",
                )
                .bind(persona.as_str())
                .bind(subject)
                .fetch_all(&self.pool)
                .await
                .map_err(self.db())?;
                rows.iter().map(meta_of).collect()
            }

            /// Sets `superseded_by` and `valid_until` of each memory of
            /// `items` (both NULL for a current one), in one transaction.
            async fn write_superseded(
                &self,
                items: Vec<(String, Option<$crate::Superseded>)>,
            ) -> Result<(), $crate::MemoryError> {
                let mut tx = self.pool.begin().await.map_err(self.db())?;
                for (id, superseded) in &items {
                    sqlx::query(
                        "UPDATE memories SET superseded_by = $1, valid_until = $2 WHERE id = $3",
                    )
                    .bind(superseded.as_ref().map(|s| s.by.as_str()))
                    .bind(superseded.as_ref().map(|s| $crate::sql::millis(s.until)))
                    .bind(id.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(self.db())?;
                }
                tx.commit().await.map_err(self.db())
            }

            /// The closed memories among `ids`, with what closed them.
            async fn read_superseded(
                &self,
                ids: &[String],
            ) -> Result<std::collections::HashMap<String, $crate::Superseded>, $crate::MemoryError>
            {
                use sqlx::Row;
                let mut out = std::collections::HashMap::new();
                for chunk in ids.chunks(200) {
                    let placeholders: Vec<String> =
                        (1..=chunk.len()).map(|i| format!("${i}")).collect();
                    let sql = format!(
                        "SELECT id, superseded_by, valid_until FROM memories \
                         WHERE superseded_by IS NOT NULL AND id IN ({})",
                        placeholders.join(", ")
                    );
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                    for id in chunk {
                        query = query.bind(id.as_str());
                    }
                    let rows = query.fetch_all(&self.pool).await.map_err(self.db())?;
                    for row in rows {
                        out.insert(
                            row.get::<String, _>("id"),
                            $crate::Superseded {
                                by: row.get("superseded_by"),
                                until: $crate::sql::from_millis(
                                    row.get::<Option<i64>, _>("valid_until").unwrap_or_default(),
                                ),
                            },
                        );
                    }
                }
                Ok(out)
            }

            /// Up to `limit` memories without a vector, oldest first.
            async fn unembedded_metas(
                &self,
                limit: usize,
            ) -> Result<Vec<$crate::MemoryMeta>, $crate::MemoryError> {
                let rows = sqlx::query(
                    "SELECT id, debate_id, persona, content, kind, importance, round, created_at, subject \
                     FROM memories WHERE embedding IS NULL ORDER BY seq LIMIT $1",
                )
                .bind(limit as i64)
                .fetch_all(&self.pool)
                .await
                .map_err(self.db())?;
                rows.iter().map(meta_of).collect()
            }
        }
    };
}

pub(crate) use shared_queries;

/// Unix milliseconds of a time (how both backends store times).
pub(crate) fn millis(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_millis()
}

/// The time of Unix milliseconds (the epoch for an impossible value).
pub(crate) fn from_millis(ms: i64) -> chrono::DateTime<chrono::Utc> {
    use chrono::TimeZone;
    chrono::Utc
        .timestamp_millis_opt(ms)
        .single()
        .unwrap_or_default()
}

/// Runs the memory migrations `$files` ([`crate::migrations`]) on `$pool`
/// (their own history table, beside the store's), naming `$shown` and
/// `$hint` on failure.
macro_rules! migrate_memory {
    ($pool:expr, $files:expr, $shown:expr, $hint:literal) => {{
        let mut migrator = agon_store::migrations::migrator($files);
        migrator.dangerous_set_table_name("_agon_memory_migrations");
        migrator
            .run($pool)
            .await
            .map_err(|e| $crate::MemoryError::Database {
                url: $shown.clone(),
                message: format!(concat!("migrating the memory tables", $hint, ": {}"), e),
            })
    }};
}

pub(crate) use migrate_memory;
