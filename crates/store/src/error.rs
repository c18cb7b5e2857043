//! `StoreError`: every way persistence can fail, naming the debate, the
//! sequence number or the (password-redacted) URL.

use std::time::Duration;

use agon_core::ApplyError;
use chrono::{DateTime, Utc};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL's scheme is neither `sqlite:` nor `postgres:`/`postgresql:`.
    #[error("unsupported store URL `{url}`: use sqlite://PATH or postgres://…")]
    UnsupportedUrl {
        /// The URL, password redacted.
        url: String,
    },
    /// The URL names a backend this build leaves out (a crate feature).
    #[error("`{url}` needs agon-store's feature `{feature}`, which this build leaves out")]
    NotBuilt {
        /// The URL, password redacted.
        url: String,
        /// The feature.
        feature: &'static str,
    },
    /// The database could not be opened or reached.
    #[error("cannot open the store at {url}: {message}")]
    Unavailable {
        /// The URL, password redacted.
        url: String,
        /// The driver's message.
        message: String,
    },
    /// Connecting took longer than the limit.
    #[error("connecting to {url} timed out after {after:?}")]
    ConnectTimeout {
        /// The URL, password redacted.
        url: String,
        /// The limit.
        after: Duration,
    },
    /// The database is locked by another writer for longer than the busy timeout.
    #[error("the store at {url} is locked by another process: {message}")]
    Locked {
        /// The URL, password redacted.
        url: String,
        /// The driver's message.
        message: String,
    },
    /// Migrations failed.
    #[error("migrating the store at {url} failed: {message}")]
    Migration {
        /// The URL, password redacted.
        url: String,
        /// Why.
        message: String,
    },
    /// Any other database error, with what was being done.
    #[error("store at {url}: {context}: {message}")]
    Database {
        /// The URL, password redacted.
        url: String,
        /// The operation.
        context: String,
        /// The driver's message.
        message: String,
    },
    /// No debate with this id.
    #[error("unknown debate `{debate}`")]
    DebateNotFound {
        /// The id.
        debate: String,
    },
    /// A debate with this id already exists.
    #[error("debate `{debate}` already exists")]
    DebateExists {
        /// The id.
        debate: String,
    },
    /// A fork asked for more events than the debate it copies has.
    #[error("debate `{debate}` has {last} events; a fork cannot copy it up to event #{seq}")]
    ForkBeyondLog {
        /// The debate forked.
        debate: String,
        /// The sequence asked for.
        seq: u64,
        /// The debate's last sequence.
        last: u64,
    },
    /// Optimistic concurrency: someone else appended first.
    #[error("debate `{debate}`: append expected sequence {expected}, the log is at {actual}")]
    Conflict {
        /// The debate.
        debate: String,
        /// What the caller expected.
        expected: u64,
        /// What the log holds.
        actual: u64,
    },
    /// An event row does not decode.
    #[error("debate `{debate}`, event #{seq}: corrupt event row: {message}")]
    CorruptEvent {
        /// The debate.
        debate: String,
        /// The sequence number.
        seq: u64,
        /// What is wrong.
        message: String,
    },
    /// An event row holds an event type this version does not know.
    #[error(
        "debate `{debate}`, event #{seq}: event type `{kind}` was written by a newer version of Agon; upgrade to read this debate"
    )]
    NewerVersion {
        /// The debate.
        debate: String,
        /// The sequence number.
        seq: u64,
        /// The unknown type.
        kind: String,
    },
    /// A snapshot does not decode (loading falls back to a full replay).
    #[error("debate `{debate}`, snapshot at #{seq}: {message}")]
    CorruptSnapshot {
        /// The debate.
        debate: String,
        /// Its sequence number.
        seq: u64,
        /// What is wrong.
        message: String,
    },
    /// A stored event does not apply to the blackboard.
    #[error("debate `{debate}`, event #{seq} does not apply: {source}")]
    Replay {
        /// The debate.
        debate: String,
        /// The sequence number.
        seq: u64,
        /// Why.
        #[source]
        source: ApplyError,
    },
    /// Another process holds the run lease.
    #[error(
        "debate `{debate}` is being run by another process since {since} (holder `{holder}`, lease until {until})"
    )]
    Leased {
        /// The debate.
        debate: String,
        /// Who holds it.
        holder: String,
        /// Since when.
        since: DateTime<Utc>,
        /// When it expires unless renewed.
        until: DateTime<Utc>,
    },
    /// The lease expired and was taken over, or was released.
    #[error("debate `{debate}`: the run lease of `{holder}` was lost")]
    LeaseLost {
        /// The debate.
        debate: String,
        /// The former holder.
        holder: String,
    },
    /// A value cannot be stored (e.g. a NUL character in PostgreSQL text).
    #[error("debate `{debate}`: {message}")]
    Unstorable {
        /// The debate.
        debate: String,
        /// Why.
        message: String,
    },
}

/// Redacts the password of a URL (`postgres://user:secret@host` →
/// `postgres://user:***@host`); other URLs are returned as they are.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!(
            "{}://{}:***{}",
            &url[..scheme_end],
            &authority[..colon],
            &rest[at..]
        ),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://agon:s3cr3t@127.0.0.1:5432/db"),
            "postgres://agon:***@127.0.0.1:5432/db"
        );
        assert_eq!(
            redact_url("postgres://agon@127.0.0.1/db"),
            "postgres://agon@127.0.0.1/db"
        );
        assert_eq!(redact_url("sqlite://debates.db"), "sqlite://debates.db");
        assert_eq!(
            redact_url("postgres://u:p@w@h/db?x=1"),
            "postgres://u:***@h/db?x=1"
        );
    }
}
