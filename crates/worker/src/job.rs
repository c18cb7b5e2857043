//! The one job of the queue: advance a debate by one step.

use agon_core::DebateId;
use graphile_worker::{JobKeyMode, JobSpec, JobSpecBuilder};
use serde::{Deserialize, Serialize};

/// graphile_worker's schema for Agon's queue (in the store's database).
pub const SCHEMA: &str = "graphile_worker";

/// The task identifier of [`AdvanceDebate`].
pub const TASK: &str = "agon_advance_debate";

/// How many times a job that fails (a provider down, a lease held by a
/// runner not yet expired) is tried, with graphile_worker's exponential
/// backoff (e^attempt seconds, at most about 10 minutes) between tries.
pub const MAX_ATTEMPTS: i16 = 12;

/// The payload of a job: which debate to advance. Everything else is in
/// the debate's event log, so a duplicated or retried job is harmless: it
/// plans from the log and finds the step it was meant for already done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdvanceDebate {
    /// The debate id.
    pub debate: String,
    /// Lift a pause the debate is in before its step (`agon resume
    /// --detach`); the jobs a worker queues after a step leave it unset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resume: bool,
}

/// The queue (and job key) of a debate's jobs: graphile_worker runs the
/// jobs of one named queue one at a time, so a debate's steps never run
/// concurrently, and the key keeps at most one waiting job per debate.
pub fn debate_queue(debate: &DebateId) -> String {
    format!("agon:debate:{debate}")
}

/// The debate a queue name or job key names, if it is one of ours.
pub fn debate_of_key(key: &str) -> Option<DebateId> {
    key.strip_prefix("agon:debate:").map(DebateId::new)
}

/// The job spec of a debate's next step.
pub(crate) fn spec(debate: &DebateId) -> JobSpec {
    JobSpecBuilder::new()
        .queue_name(debate_queue(debate))
        .job_key(debate_queue(debate))
        .job_key_mode(JobKeyMode::Replace)
        .max_attempts(MAX_ATTEMPTS)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_debates_queue_names_it_and_reads_back() {
        let id = DebateId::new("d-1".to_owned());
        let key = debate_queue(&id);
        assert_eq!(key, "agon:debate:d-1");
        assert_eq!(debate_of_key(&key), Some(id));
        assert_eq!(debate_of_key("other:d-1"), None);
        let spec = spec(&DebateId::new("d-1".to_owned()));
        assert_eq!(spec.queue_name.as_deref(), Some("agon:debate:d-1"));
        assert_eq!(spec.job_key.as_deref(), Some("agon:debate:d-1"));
        assert_eq!(spec.max_attempts, Some(MAX_ATTEMPTS));
    }

    #[test]
    fn a_resume_job_says_so_and_a_plain_one_reads_without_the_field() {
        let plain: AdvanceDebate = serde_json::from_str(r#"{"debate":"d"}"#).unwrap();
        assert!(!plain.resume);
        assert_eq!(serde_json::to_string(&plain).unwrap(), r#"{"debate":"d"}"#);
        let resume = AdvanceDebate {
            debate: "d".into(),
            resume: true,
        };
        let text = serde_json::to_string(&resume).unwrap();
        assert_eq!(
            serde_json::from_str::<AdvanceDebate>(&text).unwrap(),
            resume
        );
    }
}
