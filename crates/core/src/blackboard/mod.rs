//! The blackboard: the debate's shared state, derived from its events.
//!
//! Only [`Blackboard::apply`] changes it. Every handler validates the whole
//! event first and mutates only once nothing can fail, so a rejected event
//! leaves the blackboard exactly as it was.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::claim::LiveClaim;
use crate::crux::CruxCard;
use crate::deliberation::{Decision, Participation, Proposal};
use crate::detection::AnalyzedTurn;
use crate::error::ApplyError;
use crate::event::DebateEvent;
use crate::ids::{AspectId, ClaimId, CruxRoomId, DebateId, MessageId, PersonaId, ProposalId};
use crate::message::{DialogueMessage, MessageKind};
use crate::persona::{DebateAspect, Persona, Topic};
use crate::position::PersonaPositionState;
use crate::reflection::Reflection;
use crate::round::RoundRecord;
use crate::solution::Solution;
use crate::step::StepId;
use crate::step::TurnKey;
use crate::summary::{DebateSummary, SummaryScope};

mod apply;
mod index;

use index::Index;

/// Lifecycle of the debate as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebateStatus {
    /// No `debate_started` yet.
    #[default]
    NotStarted,
    /// Started and not finished.
    Running,
    /// Finished; no further events are accepted.
    Finished,
}

/// A recorded failure of an optional step (from [`DebateEvent::StepFailed`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepWarning {
    /// Which step, stored as the fields `step`, `message` and `scope`.
    #[serde(flatten)]
    pub step: StepId,
    /// Why it failed.
    pub reason: String,
    /// When.
    pub time: DateTime<Utc>,
}

/// Repairs validation made to a step's model output (from
/// [`DebateEvent::OutputRepaired`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRepair {
    /// Which step's output.
    #[serde(flatten)]
    pub step: StepId,
    /// What was repaired, one line each.
    pub notes: Vec<String>,
}

/// Accumulated model usage for one role and model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Calls made.
    pub calls: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Of the input tokens, those read from a prompt cache.
    #[serde(default, skip_serializing_if = "crate::serde_flags::is_zero")]
    pub cached_input_tokens: u64,
    /// Of the input tokens, those written to a prompt cache.
    #[serde(default, skip_serializing_if = "crate::serde_flags::is_zero")]
    pub cache_write_tokens: u64,
    /// Cost in millionths of a US dollar (priced calls only).
    pub cost_micro_usd: u64,
    /// What the priced calls would have cost without a prompt cache
    /// (their cost where no cache changed it).
    #[serde(default, skip_serializing_if = "crate::serde_flags::is_zero")]
    pub cost_without_cache_micro_usd: u64,
    /// Whether some calls had no known price.
    pub unpriced: bool,
}

impl UsageTotals {
    /// What prompt caching saved on the priced calls, in millionths of a
    /// US dollar: negative when cache writes cost more than the reads
    /// saved; 0 when nothing says (usage recorded before this was kept).
    pub fn cache_saving_micro_usd(&self) -> i64 {
        if self.cost_without_cache_micro_usd == 0 {
            return 0;
        }
        i64::try_from(self.cost_without_cache_micro_usd).unwrap_or(i64::MAX)
            - i64::try_from(self.cost_micro_usd).unwrap_or(i64::MAX)
    }
}

/// Serializable state of the blackboard (the snapshot format).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BlackboardData {
    debate: Option<DebateId>,
    /// The protocol `debate_started` recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol: Option<crate::ProtocolKind>,
    topic: Option<Topic>,
    aspects: Vec<DebateAspect>,
    personas: Vec<Persona>,
    status: DebateStatus,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    current_round: u32,
    current_aspect: Option<AspectId>,
    positions: BTreeMap<PersonaId, PersonaPositionState>,
    claims: Vec<LiveClaim>,
    messages: Vec<DialogueMessage>,
    rounds: Vec<RoundRecord>,
    reflections: Vec<Reflection>,
    crux_cards: Vec<CruxCard>,
    decisions: Vec<Decision>,
    proposals: Vec<Proposal>,
    participation: BTreeMap<PersonaId, Participation>,
    summaries: Vec<DebateSummary>,
    #[serde(default)]
    solutions: Vec<Solution>,
    /// The budget stop, once a limit was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget_stop: Option<crate::budget::BudgetStop>,
    /// The limit spent in full and the step whose call was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget_exhausted: Option<(StepId, crate::budget::BudgetStop)>,
    /// The problem's requirements and their coverage.
    #[serde(
        default,
        skip_serializing_if = "crate::requirement::RequirementLedger::is_empty_default"
    )]
    requirements: crate::requirement::RequirementLedger,
    /// Devil's advocates drawn from the trust memory, by round.
    #[serde(default)]
    devils_advocates: BTreeMap<u32, PersonaId>,
    /// The agents' trust standings, once read (`None` before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trust_standings: Option<BTreeMap<PersonaId, crate::trust::TrustStanding>>,
    /// The rubric the debate is judged by, once read (`None` before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rubric: Option<crate::rubric::Rubric>,
    /// Critiques judged taken in (or not) by their target's refinement.
    #[serde(default)]
    critique_impacts: BTreeMap<MessageId, bool>,
    /// Listening agents' bids, by deliberation turn.
    #[serde(default)]
    bids: BTreeMap<u32, Vec<crate::deliberation::Bid>>,
    /// Messages the analysis model has read for decisions and proposals.
    #[serde(default)]
    detected: std::collections::BTreeSet<MessageId>,
    warnings: Vec<StepWarning>,
    /// Moderator notes, in order.
    #[serde(default)]
    notes: Vec<crate::steering::ModeratorNote>,
    /// Whether a person paused the debate.
    #[serde(default)]
    paused: bool,
    /// A person's latest rating of the outcome: `1` up, `-1` down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_feedback: Option<i8>,
    #[serde(default)]
    repairs: Vec<StepRepair>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    citations: Vec<crate::evidence::EvidenceCitation>,
    /// The tools agents called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallRecord>,
    /// Questions asked in each clarification round (dialectic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    clarification_rounds: Vec<u32>,
    #[serde(default)]
    analyzed: Vec<AnalyzedTurn>,
    #[serde(default)]
    usage: BTreeMap<crate::UsageRole, BTreeMap<String, UsageTotals>>,
    weight_since_reflection: u32,
    events_applied: u64,
}

/// A tool an agent called ([`DebateEvent::ToolCalled`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The turn.
    pub turn: TurnKey,
    /// Who called it.
    pub persona: PersonaId,
    /// Its number within the turn.
    pub call: u32,
    /// The tool.
    pub name: String,
    /// The arguments, as the model wrote them.
    pub arguments: serde_json::Value,
    /// Whether the tool worked.
    pub ok: bool,
    /// What it returned, or why it failed.
    pub result: String,
}

/// The debate's shared state: topic, personas, position ledger, claims,
/// transcript, round records, reflections, crux cards, deliberation tracking
/// and summaries. Built only by applying [`DebateEvent`]s.
///
/// Serializes to a snapshot that deserializes back to an equal blackboard.
#[derive(Debug, Clone, Default)]
pub struct Blackboard {
    data: BlackboardData,
    index: Index,
}

impl PartialEq for Blackboard {
    fn eq(&self, other: &Self) -> bool {
        self.data == other.data
    }
}

impl Eq for Blackboard {}

impl Serialize for Blackboard {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.data.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Blackboard {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let data = BlackboardData::deserialize(deserializer)?;
        let index = Index::build(&data);
        Ok(Self { data, index })
    }
}

impl Blackboard {
    /// How many turns the `which` predicate picks out were skipped
    /// (recorded as warnings instead of messages): matched on the typed
    /// turn, as in `bb.skipped_turns(|t| matches!(t, TurnKey::Closing { .. }))`.
    pub fn skipped_turns(&self, which: impl Fn(&TurnKey) -> bool) -> usize {
        self.warnings()
            .iter()
            .filter(|w| match &w.step {
                StepId::Utterance(key) => which(key),
                _ => false,
            })
            .count()
    }

    /// An empty blackboard, waiting for `debate_started`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies events in order to a new blackboard. Stops at the first rejected
    /// event, reporting its position in the sequence.
    pub fn replay<'a, I>(events: I) -> Result<Self, (usize, ApplyError)>
    where
        I: IntoIterator<Item = &'a DebateEvent>,
    {
        let mut blackboard = Self::new();
        for (position, event) in events.into_iter().enumerate() {
            blackboard.apply(event).map_err(|e| (position, e))?;
        }
        Ok(blackboard)
    }

    // ── Accessors ──────────────────────────────────────────────────────

    /// The protocol the debate runs: the one `debate_started` recorded,
    /// else (a log written before it was recorded, or a protocol of one's
    /// own) read from the debate's shape: agents with roles run dialectic,
    /// a first message of kind `deliberation` a deliberation, anything else
    /// the structured debate.
    pub fn protocol(&self) -> crate::ProtocolKind {
        if let Some(p) = self.data.protocol {
            return p;
        }
        if self.data.personas.iter().any(|p| p.specialty.is_some()) {
            crate::ProtocolKind::Dialectic
        } else if self
            .data
            .messages
            .first()
            .is_some_and(|m| m.kind == MessageKind::Deliberation)
        {
            crate::ProtocolKind::Deliberation
        } else {
            crate::ProtocolKind::Structured
        }
    }

    /// Whether `debate_started` recorded the protocol (see
    /// [`Blackboard::protocol`]).
    pub fn protocol_recorded(&self) -> bool {
        self.data.protocol.is_some()
    }

    /// The debate id (`None` before `debate_started`).
    pub fn debate(&self) -> Option<&DebateId> {
        self.data.debate.as_ref()
    }

    /// The topic (`None` before `debate_started`).
    pub fn topic(&self) -> Option<&Topic> {
        self.data.topic.as_ref()
    }

    /// Aspects, in debate order.
    pub fn aspects(&self) -> &[DebateAspect] {
        &self.data.aspects
    }

    /// The aspect with this id.
    pub fn aspect(&self, id: &AspectId) -> Option<&DebateAspect> {
        self.index.aspects.get(id).map(|&i| &self.data.aspects[i])
    }

    /// 1-based position of the aspect in debate order.
    pub fn aspect_number(&self, id: &AspectId) -> Option<usize> {
        self.index.aspects.get(id).map(|&i| i + 1)
    }

    /// All personas (debaters and judge), in configured order.
    pub fn personas(&self) -> &[Persona] {
        &self.data.personas
    }

    /// Debaters only, in configured order.
    pub fn debaters(&self) -> impl Iterator<Item = &Persona> {
        self.data.personas.iter().filter(|p| p.is_debater())
    }

    /// The persona with this id.
    pub fn persona(&self, id: &PersonaId) -> Option<&Persona> {
        self.index.personas.get(id).map(|&i| &self.data.personas[i])
    }

    /// Display name of a persona, falling back to its id.
    pub fn persona_name<'a>(&'a self, id: &'a PersonaId) -> &'a str {
        self.persona(id).map_or(id.as_str(), |p| p.name.as_str())
    }

    /// Finds a persona by display name or id, ignoring case and surrounding whitespace.
    pub fn find_persona(&self, name_or_id: &str) -> Option<&Persona> {
        let needle = name_or_id.trim();
        self.data.personas.iter().find(|p| {
            p.name.eq_ignore_ascii_case(needle) || p.id.as_str().eq_ignore_ascii_case(needle)
        })
    }

    /// Lifecycle status.
    pub fn status(&self) -> DebateStatus {
        self.data.status
    }

    /// When the debate started.
    pub fn started_at(&self) -> Option<DateTime<Utc>> {
        self.data.started_at
    }

    /// When the debate finished.
    pub fn finished_at(&self) -> Option<DateTime<Utc>> {
        self.data.finished_at
    }

    /// Current round number (0 before the first aspect).
    pub fn current_round(&self) -> u32 {
        self.data.current_round
    }

    /// The aspect being debated now.
    pub fn current_aspect(&self) -> Option<&DebateAspect> {
        self.data
            .current_aspect
            .as_ref()
            .and_then(|id| self.aspect(id))
    }

    /// The position ledger of a debater.
    pub fn position(&self, persona: &PersonaId) -> Option<&PersonaPositionState> {
        self.data.positions.get(persona)
    }

    /// The whole position ledger, keyed by persona id.
    pub fn positions(&self) -> &BTreeMap<PersonaId, PersonaPositionState> {
        &self.data.positions
    }

    /// All claims, in the order they were opened.
    pub fn claims(&self) -> &[LiveClaim] {
        &self.data.claims
    }

    /// The claim with this id.
    pub fn claim(&self, id: &ClaimId) -> Option<&LiveClaim> {
        self.index.claims.get(id).map(|&i| &self.data.claims[i])
    }

    /// The claim a crux room works on.
    pub fn claim_for_room(&self, room: &CruxRoomId) -> Option<&LiveClaim> {
        self.index.rooms.get(room).map(|&i| &self.data.claims[i])
    }

    /// The full transcript, in order.
    pub fn messages(&self) -> &[DialogueMessage] {
        &self.data.messages
    }

    /// The message with this id.
    pub fn message(&self, id: &MessageId) -> Option<&DialogueMessage> {
        self.index.messages.get(id).map(|&i| &self.data.messages[i])
    }

    /// Transcript positions of the messages said on an aspect, in order.
    pub fn message_indices_for_aspect(&self, aspect: &AspectId) -> &[usize] {
        self.index
            .messages_by_aspect
            .get(aspect)
            .map_or(&[], Vec::as_slice)
    }

    /// Transcript positions of the messages said in a crux room, in order.
    pub fn message_indices_for_room(&self, room: &CruxRoomId) -> &[usize] {
        self.index
            .messages_by_room
            .get(room)
            .map_or(&[], Vec::as_slice)
    }

    /// Round records, in order.
    pub fn rounds(&self) -> &[RoundRecord] {
        &self.data.rounds
    }

    /// Reflections, in order.
    pub fn reflections(&self) -> &[Reflection] {
        &self.data.reflections
    }

    /// Crux cards, in order.
    pub fn crux_cards(&self) -> &[CruxCard] {
        &self.data.crux_cards
    }

    /// Decisions, in order.
    pub fn decisions(&self) -> &[Decision] {
        &self.data.decisions
    }

    /// Proposals, in order.
    pub fn proposals(&self) -> &[Proposal] {
        &self.data.proposals
    }

    /// The proposal with this id.
    pub fn proposal(&self, id: &ProposalId) -> Option<&Proposal> {
        self.index
            .proposals
            .get(id)
            .map(|&i| &self.data.proposals[i])
    }

    /// Per-persona participation counters.
    pub fn participation(&self) -> &BTreeMap<PersonaId, Participation> {
        &self.data.participation
    }

    /// Summaries, in order.
    pub fn summaries(&self) -> &[DebateSummary] {
        &self.data.summaries
    }

    /// The answer given to a clarifying question, if any.
    pub fn answer_to(&self, question: &MessageId) -> Option<&DialogueMessage> {
        self.data.messages.iter().find(|m| {
            m.kind == MessageKind::ClarificationAnswer && m.reply_to.as_ref() == Some(question)
        })
    }

    /// Solutions the judge synthesized, in order (the last is the answer).
    pub fn solutions(&self) -> &[Solution] {
        &self.data.solutions
    }

    /// The budget stop, once the debate reached a limit.
    pub fn budget_stop(&self) -> Option<&crate::budget::BudgetStop> {
        self.data.budget_stop.as_ref()
    }

    /// The limit spent in full, if it was, and the step whose model call
    /// was refused: no call is made after it.
    pub fn budget_exhausted(&self) -> Option<(&StepId, &crate::budget::BudgetStop)> {
        self.data.budget_exhausted.as_ref().map(|(s, b)| (s, b))
    }

    /// The problem's requirements and which contributions cover them.
    pub fn requirements(&self) -> &crate::requirement::RequirementLedger {
        &self.data.requirements
    }

    /// Whether the ledger's coverage can say a requirement is uncovered:
    /// the requirements are recorded and some contribution was analysed.
    pub fn coverage_tracked(&self) -> bool {
        self.data.requirements.is_recorded() && !self.data.analyzed.is_empty()
    }

    /// The devil's advocate drawn for `round`, if one was.
    pub fn devils_advocate(&self, round: u32) -> Option<&PersonaId> {
        self.data.devils_advocates.get(&round)
    }

    /// Whether the analysis model has read `message` for decisions and
    /// proposals (deliberation).
    pub fn is_detected(&self, message: &MessageId) -> bool {
        self.data.detected.contains(message)
    }

    /// The listening agents' bids for deliberation turn `turn`, if asked.
    pub fn bids(&self, turn: u32) -> Option<&[crate::deliberation::Bid]> {
        self.data.bids.get(&turn).map(Vec::as_slice)
    }

    /// Critiques whose impact the analysis model judged: critique id →
    /// whether its target's refinement took it in.
    pub fn critique_impacts(&self) -> &BTreeMap<MessageId, bool> {
        &self.data.critique_impacts
    }

    /// Whether the agents' trust standings were read
    /// ([`DebateEvent::TrustStandingsRead`]).
    pub fn trust_read(&self) -> bool {
        self.data.trust_standings.is_some()
    }

    /// The rubric the debate is judged by, once read
    /// ([`DebateEvent::RubricRead`]).
    pub fn rubric(&self) -> Option<&crate::rubric::Rubric> {
        self.data.rubric.as_ref()
    }

    /// `persona`'s trust standing, when the debate read one (agents with
    /// no memory have none).
    pub fn trust_standing(&self, persona: &PersonaId) -> Option<&crate::trust::TrustStanding> {
        self.data.trust_standings.as_ref()?.get(persona)
    }

    /// Every devil's advocate drawn, by round.
    pub fn devils_advocates(&self) -> &BTreeMap<u32, PersonaId> {
        &self.data.devils_advocates
    }

    /// The latest solution, if any.
    pub fn solution(&self) -> Option<&Solution> {
        self.data.solutions.last()
    }

    /// The latest summary of `scope`, if any.
    pub fn latest_summary(&self, scope: &SummaryScope) -> Option<&DebateSummary> {
        self.data.summaries.iter().rev().find(|s| &s.scope == scope)
    }

    /// The latest rolling summary, if any.
    pub fn latest_rolling_summary(&self) -> Option<&DebateSummary> {
        self.data
            .summaries
            .iter()
            .rev()
            .find(|s| s.scope == SummaryScope::Rolling)
    }

    /// Failures of optional steps, in order.
    pub fn warnings(&self) -> &[StepWarning] {
        &self.data.warnings
    }

    /// Moderator notes, in the order they were posted.
    pub fn notes(&self) -> &[crate::steering::ModeratorNote] {
        &self.data.notes
    }

    /// Whether a person paused the debate (no critical-path step runs
    /// until it is resumed).
    pub fn is_paused(&self) -> bool {
        self.data.paused
    }

    /// A person's latest rating of the outcome (dialectic's
    /// `userFeedback`): `1` up, `-1` down.
    pub fn user_feedback(&self) -> Option<i8> {
        self.data.user_feedback
    }

    /// Repairs validation made to model outputs, in order.
    pub fn repairs(&self) -> &[StepRepair] {
        &self.data.repairs
    }

    /// Every tool call, in order.
    pub fn tool_calls(&self) -> &[ToolCallRecord] {
        &self.data.tool_calls
    }

    /// The tool calls of `turn`, in order.
    pub fn tool_calls_of<'a>(
        &'a self,
        turn: &'a TurnKey,
    ) -> impl Iterator<Item = &'a ToolCallRecord> {
        self.data.tool_calls.iter().filter(move |c| &c.turn == turn)
    }

    /// How many questions each clarification round asked, in order
    /// (round 1 first; empty before the first ends, and for debates
    /// recorded before follow-up rounds existed).
    pub fn clarification_rounds(&self) -> &[u32] {
        &self.data.clarification_rounds
    }

    /// The corpus citations of every message that cited any, in order.
    pub fn citations(&self) -> &[crate::evidence::EvidenceCitation] {
        &self.data.citations
    }

    /// The chunks of its corpus `persona` cited, each once, in order of
    /// first citation.
    pub fn sources_cited(&self, persona: &PersonaId) -> Vec<&crate::evidence::CitedEvidence> {
        let mut out: Vec<&crate::evidence::CitedEvidence> = Vec::new();
        for c in self.data.citations.iter().filter(|c| &c.persona == persona) {
            for e in &c.cited {
                if !out.iter().any(|o| o.id == e.id) {
                    out.push(e);
                }
            }
        }
        out
    }

    /// Weighted count of epistemic events (disagreements ×3, concessions ×4,
    /// shifts ×5) since the last reflection; see [`crate::ReflectionTrigger`].
    pub fn weight_since_reflection(&self) -> u32 {
        self.data.weight_since_reflection
    }

    /// Analysed messages with their disagreement judgements, in the order
    /// they were analysed.
    pub fn analyzed_turns(&self) -> &[AnalyzedTurn] {
        &self.data.analyzed
    }

    /// Whether `message` has been analysed (a `turn_analyzed` event exists).
    pub fn is_analyzed(&self, message: &MessageId) -> bool {
        self.index.analyzed.contains(message)
    }

    /// Position of `message` in the transcript.
    pub fn message_index(&self, message: &MessageId) -> Option<usize> {
        self.index.messages.get(message).copied()
    }

    /// Whether a failure of `step` was recorded.
    pub fn step_failed(&self, step: &StepId) -> bool {
        self.data.warnings.iter().any(|w| &w.step == step)
    }

    /// Model usage by role, then model, summed over every run of the debate.
    pub fn usage(&self) -> &BTreeMap<crate::UsageRole, BTreeMap<String, UsageTotals>> {
        &self.data.usage
    }

    /// All model usage of the debate, over every role and model (`unpriced`
    /// when any of it was).
    pub fn usage_total(&self) -> UsageTotals {
        let mut total = UsageTotals::default();
        for u in self.data.usage.values().flat_map(BTreeMap::values) {
            total.calls += u.calls;
            total.input_tokens += u.input_tokens;
            total.output_tokens += u.output_tokens;
            total.cached_input_tokens += u.cached_input_tokens;
            total.cache_write_tokens += u.cache_write_tokens;
            total.cost_micro_usd += u.cost_micro_usd;
            total.cost_without_cache_micro_usd += u.cost_without_cache_micro_usd;
            total.unpriced |= u.unpriced;
        }
        total
    }

    /// Number of events applied so far.
    pub fn events_applied(&self) -> u64 {
        self.data.events_applied
    }
}

impl crate::trigger::ReflectionTrigger {
    /// Whether a reflection is due on this blackboard.
    pub fn is_due(&self, blackboard: &Blackboard) -> bool {
        self.fires_at(blackboard.weight_since_reflection())
    }
}
