//! What the worker crate's PostgreSQL tests share.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// A fresh database named `agon_t_PREFIX_…` on the server of
/// `AGON_TEST_DATABASE_URL`, as a URL.
pub async fn pg_url(prefix: &str) -> String {
    use sqlx::Connection;
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    let name = format!(
        "agon_t_{prefix}_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_subsec_nanos()
    );
    let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    format!("{base}/{name}")
}
