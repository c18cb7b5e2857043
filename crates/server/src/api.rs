//! The API's response bodies as types: what each route answers, and what
//! the OpenAPI document (`GET /api/openapi.json`) describes from them.
//! The request bodies are typed beside their routes.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// `GET /api/health`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Health {
    /// Always true when the server answers.
    pub ok: bool,
    /// `sqlite` or `postgres`.
    pub store: String,
}

/// A stored debate as `GET /api/debates` lists it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DebateRow {
    /// Its id.
    pub id: String,
    /// Its topic.
    pub topic: String,
    /// `structured`, `dialectic` or `deliberation`.
    pub protocol: String,
    /// `created`, `queued`, `running`, `finished`, `failed`, `interrupted` or `budget`.
    pub status: String,
    /// Whether this server's process runs it.
    pub running_here: bool,
    /// Messages in its transcript.
    pub messages: u64,
    /// The sequence of its last event.
    pub last_seq: u64,
    /// The debate and event it was forked from, if it is a fork.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkPoint>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// `GET /api/debates`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DebateList {
    /// Newest first.
    pub debates: Vec<DebateRow>,
}

/// A debate created (`POST /api/debates`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Started {
    /// Its id.
    pub id: String,
}

/// `GET /api/debates/{id}`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DebateDetail {
    /// Its id.
    pub id: String,
    /// Its stored run status.
    pub status: String,
    /// Whether this server's process runs it.
    pub running_here: bool,
    /// The last event the view holds (where a live stream picks up).
    pub last_seq: u64,
    /// The report's JSON (`agon report --json`).
    pub view: Value,
}

/// A debate deleted.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DeletedDebate {
    /// The debate.
    pub id: String,
    /// Events of its log.
    pub events: u64,
    /// Its vector memories.
    pub memories: u64,
}

/// Where a debate runs, so who takes a request.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Runs {
    /// `here`, `elsewhere` (another process holds its lease), `queued` (the
    /// next worker takes it) or `idle` (its next run takes it).
    #[serde(rename = "where")]
    pub place: String,
    /// The lease holder (`host:pid`), when `elsewhere`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
}

impl From<&agon_app::RunsWhere> for Runs {
    fn from(runs: &agon_app::RunsWhere) -> Self {
        let (place, holder) = match runs {
            agon_app::RunsWhere::Here => ("here", None),
            agon_app::RunsWhere::Elsewhere { holder } => ("elsewhere", Some(holder.clone())),
            agon_app::RunsWhere::Queued => ("queued", None),
            agon_app::RunsWhere::Idle => ("idle", None),
        };
        Self {
            place: place.to_owned(),
            holder,
        }
    }
}

/// A note, a pause or answers recorded for a debate's run (`202`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Queued {
    /// The debate.
    pub id: String,
    /// What was recorded: `note`, `pause` or `answers`.
    pub queued: String,
    /// The request's id in the store.
    pub request: u64,
    /// Where the debate runs.
    pub runs: Runs,
}

/// A stop requested (`202`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Stopping {
    /// The debate.
    pub id: String,
    /// Always true.
    pub stopping: bool,
    /// Where the debate runs.
    pub runs: Runs,
}

/// A resume (`202`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Resumed {
    /// The debate.
    pub id: String,
    /// Always true.
    pub resumed: bool,
    /// Whether this server started a run of it.
    pub restarted: bool,
    /// `running` (the run that holds it takes the resume), `queued` (for
    /// the workers) or `started` (here).
    pub how: String,
}

/// Where a fork was copied from.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ForkPoint {
    /// The parent debate.
    pub debate: String,
    /// The last of its events the fork copied.
    pub seq: u64,
}

/// A fork made (`201`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Forked {
    /// The new debate.
    pub id: String,
    /// Where it was copied from.
    pub forked_from: ForkPoint,
    /// Whether it runs here now (`"run": true`), or waits for a resume.
    pub running: bool,
}

/// A clarifying question a debate waits on.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Question {
    /// The asking agent's id.
    pub agent: String,
    /// Its display name.
    pub agent_name: String,
    /// Its role, if it has one.
    pub role: Option<String>,
    /// `q1`, `q2`, … within the agent's questions.
    pub id: String,
    /// The question.
    pub text: String,
}

/// `GET /api/debates/{id}/questions` (and the stream's `questions` event).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Questions {
    /// In order; empty when the debate waits on none.
    pub questions: Vec<Question>,
}

impl Questions {
    /// The questions as the API shows them.
    pub(crate) fn of(questions: &[agon_app::PendingQuestion]) -> Self {
        Self {
            questions: questions
                .iter()
                .map(|q| Question {
                    agent: q.agent.clone(),
                    agent_name: q.agent_name.clone(),
                    role: q.role.clone(),
                    id: q.id.clone(),
                    text: q.text.clone(),
                })
                .collect(),
        }
    }
}

/// Answers recorded (`202`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Answered {
    /// The debate.
    pub id: String,
    /// Always true.
    pub answered: bool,
}

/// A rating recorded (`201`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Rated {
    /// The debate.
    pub id: String,
    /// `1` (up) or `-1` (down).
    pub user_feedback: i8,
}

/// A rubric change proposed on an override.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RubricProposal {
    /// The rubric.
    pub rubric: String,
    /// The proposal's number (`agon rubric accept N`).
    pub id: u32,
    /// The agent on whose behalf it is proposed.
    pub by: String,
}

/// An override recorded (`201`).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Overridden {
    /// The debate.
    pub id: String,
    /// The agents whose trust memory took it.
    pub agents: Vec<String>,
    /// The rubric change proposed, if one was asked and made.
    pub proposal: Option<RubricProposal>,
    /// Why the change asked for was not proposed.
    pub not_proposed: Option<String>,
}

/// A rubric's version, after a proposal was accepted.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RubricVersion {
    /// The rubric.
    pub rubric: String,
    /// Its new version.
    pub version: u32,
    /// Its criteria's names.
    pub criteria: Vec<String>,
}

/// A proposal rejected.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Rejected {
    /// The rubric.
    pub rubric: String,
    /// The proposal.
    pub proposal: u32,
}

/// An agent's trust memory, summed up.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AgentRow {
    /// Its name.
    pub agent: String,
    /// Its trust score (0-1).
    pub trust: f64,
    /// Whether it is on probation.
    pub on_probation: bool,
    /// Its regret rate.
    pub regret_rate: f64,
    /// Rounds it took part in.
    pub rounds: u64,
    /// The whole memory (seed 003's layout).
    pub memory: Value,
}

/// `GET /api/agents`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Agents {
    /// Every agent of the trust memory.
    pub agents: Vec<AgentRow>,
}

/// One debate's metrics in a comparison.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Compared {
    /// The debate.
    pub debate: String,
    /// Its debate-quality metrics (`agon show --metrics --json`).
    pub metrics: Value,
}

/// `GET /api/compare`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Comparison {
    /// In the order asked.
    pub debates: Vec<Compared>,
    /// For two debates: where their logs and transcripts part (`agon
    /// compare A B`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Value>,
}

/// Any JSON document: a report, metrics, a memory (their own schemas are
/// those of `agon report --json`, `agon show --metrics --json`, `agon
/// recall --json`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct Document(pub Value);

/// An error: what was wrong, naming the field, the debate or the route.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ErrorBody {
    /// The message.
    pub error: String,
}
