//! Debate events: every state change of a debate is one of these.
//!
//! A debate is an append-only log of events; the blackboard is
//! `fold(Blackboard::apply, events)`. Events carry all the data their effect
//! needs (ids, times, rounds), so applying them is deterministic.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::claim::ClaimTransition;
use crate::crux::CruxCard;
use crate::deliberation::{Decision, ProposalStatus, Reaction};
use crate::detection::JudgedDisagreement;
use crate::ids::{AspectId, ClaimId, DebateId, MessageId, PersonaId, ProposalId};
use crate::message::DialogueMessage;
use crate::persona::{DebateAspect, Persona, Topic};
use crate::position::Intensity;
use crate::reflection::Reflection;
use crate::round::RoundRecord;
use crate::solution::Solution;
use crate::step::StepId;
use crate::summary::DebateSummary;

/// A change to one aspect's position in a [`DebateEvent::PositionUpdated`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AspectPositionUpdate {
    /// The aspect.
    pub aspect: AspectId,
    /// New one-sentence position, or `None` to keep the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Evidence to add (duplicates are ignored).
    #[serde(default)]
    pub evidence: Vec<String>,
    /// New unanswered challenges to add (duplicates are ignored).
    #[serde(default)]
    pub challenged: Vec<String>,
    /// Challenges now answered, removed from the unanswered list.
    #[serde(default)]
    pub answered: Vec<String>,
}

/// One state change of a debate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DebateEvent {
    /// The first event of every debate: its static frame.
    DebateStarted {
        /// The debate.
        debate: DebateId,
        /// What is debated.
        topic: Topic,
        /// Aspects, in debate order.
        aspects: Vec<DebateAspect>,
        /// Participants (debaters and optionally a judge).
        personas: Vec<Persona>,
        /// When it started.
        time: DateTime<Utc>,
        /// The protocol it runs (absent in logs written before it was
        /// recorded, and for protocols outside Agon's own; see
        /// `Blackboard::protocol`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol: Option<crate::ProtocolKind>,
    },
    /// A new aspect round begins.
    AspectStarted {
        /// The aspect.
        aspect: AspectId,
        /// Its round number (1-based).
        round: u32,
    },
    /// A new round of a protocol without aspects begins (a dialectic round:
    /// proposals, critiques, refinements).
    RoundStarted {
        /// Its number (1-based, each one higher than the last).
        round: u32,
    },
    /// A round of dialectic's clarifying questions ended (its questions and
    /// answers are the messages just before): round 1 is the first asking,
    /// 2 and up the follow-ups; `questions` is how many were asked.
    ClarificationRoundEnded {
        /// 1-based.
        round: u32,
        /// Questions asked in it.
        questions: u32,
    },
    /// A message joins the transcript.
    MessageAppended {
        /// The message.
        message: DialogueMessage,
    },
    /// A persona's stance or aspect position changed.
    PositionUpdated {
        /// Whose position.
        persona: PersonaId,
        /// Round of the update.
        round: u32,
        /// New overall stance, or `None` to keep it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overall_stance: Option<String>,
        /// Aspect-level change, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        aspect: Option<AspectPositionUpdate>,
    },
    /// `persona` agrees with `with` on `on`.
    AgreementRecorded {
        /// Who agrees.
        persona: PersonaId,
        /// With whom.
        with: PersonaId,
        /// On what.
        on: String,
        /// Round.
        round: u32,
    },
    /// `persona` disagrees with `with` on `on`.
    DisagreementRecorded {
        /// Who disagrees.
        persona: PersonaId,
        /// With whom.
        with: PersonaId,
        /// On what.
        on: String,
        /// How heated.
        intensity: Intensity,
        /// Round.
        round: u32,
        /// The rubric criteria the disagreement turns on, as the analysis
        /// cited them from the debate's rubric (seed 003's rubric
        /// citations).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        criteria: Vec<String>,
    },
    /// `persona` conceded something.
    ConcessionRecorded {
        /// Who conceded.
        persona: PersonaId,
        /// What.
        text: String,
        /// Round.
        round: u32,
    },
    /// `persona`'s position shifted.
    ShiftRecorded {
        /// Whose position.
        persona: PersonaId,
        /// How it changed (with direction).
        text: String,
        /// Round.
        round: u32,
    },
    /// A contested claim surfaced.
    ClaimOpened {
        /// New claim id.
        claim: ClaimId,
        /// The disputed statement.
        text: String,
        /// The two parties.
        personas: [PersonaId; 2],
        /// Round in which it surfaced.
        round: u32,
        /// Messages that surfaced it.
        source_messages: Vec<MessageId>,
    },
    /// A claim moved along its lifecycle.
    ClaimStatusChanged {
        /// The claim.
        claim: ClaimId,
        /// The transition.
        #[serde(flatten)]
        transition: ClaimTransition,
    },
    /// A round's structured record.
    RoundRecorded {
        /// The record.
        record: RoundRecord,
    },
    /// A reflection was generated.
    ReflectionAdded {
        /// The reflection.
        reflection: Reflection,
    },
    /// A crux card was produced (and attached to its claim, if any).
    CruxCardAdded {
        /// The card.
        card: CruxCard,
    },
    /// A decision was recorded.
    DecisionRecorded {
        /// The decision.
        decision: Decision,
    },
    /// A proposal was made.
    ProposalRecorded {
        /// New proposal id.
        proposal: ProposalId,
        /// Who proposed it.
        proposer: PersonaId,
        /// What is proposed.
        content: String,
        /// When.
        time: DateTime<Utc>,
    },
    /// A persona reacted to a proposal (the latest reaction counts).
    ProposalReaction {
        /// The proposal.
        proposal: ProposalId,
        /// Who reacted.
        persona: PersonaId,
        /// How.
        reaction: Reaction,
    },
    /// A proposal's status changed.
    ProposalStatusChanged {
        /// The proposal.
        proposal: ProposalId,
        /// Its new status.
        status: ProposalStatus,
    },
    /// A notable contribution of a persona.
    KeyContributionRecorded {
        /// Whose.
        persona: PersonaId,
        /// What, one sentence.
        text: String,
    },
    /// A summary was produced.
    SummaryRecorded {
        /// The summary and its metadata.
        summary: DebateSummary,
    },
    /// The judge synthesized a solution.
    SolutionRecorded {
        /// The solution.
        solution: Solution,
    },
    /// The problem's requirements, found once before the first round (by
    /// the analysis model, or by dialectic's keyword inference).
    RequirementsRecorded {
        /// The requirements, `R1`, `R2`, … in order.
        requirements: Vec<crate::requirement::Requirement>,
        /// How they were found.
        method: crate::requirement::RequirementMethod,
    },
    /// The analysis's verdict on which requirements a contribution covers
    /// or weakens, read in the call that analysed its round.
    RequirementsCovered {
        /// The contribution.
        message: MessageId,
        /// One verdict per requirement it addresses.
        coverage: Vec<crate::requirement::Coverage>,
    },
    /// The debate reached its budget: from here every protocol wraps up
    /// (its judge or synthesis, where it has one) and finishes.
    BudgetReached {
        /// Which limit, how much was spent, where the debate stood.
        stop: crate::budget::BudgetStop,
    },
    /// The debate spent a limit in full (reserve included): a model call
    /// (`refused`) was not made, and from here every protocol finishes
    /// without further calls. Records the stop too when no
    /// [`DebateEvent::BudgetReached`] came before (one step crossed both).
    BudgetExhausted {
        /// The step whose call was refused first.
        refused: StepId,
        /// Which limit, how much was spent, where the debate stood.
        stop: crate::budget::BudgetStop,
    },
    /// The agents' standings in the trust memory, read once when the
    /// debate started (seed 003: trust weights feedback): prompts that
    /// show an agent's feedback order and label it by them. Agents with
    /// no memory yet are left out (new agents are not labelled).
    TrustStandingsRead {
        /// Each known agent's standing.
        standings: BTreeMap<PersonaId, crate::trust::TrustStanding>,
    },
    /// The rubric the debate is judged by, read once when it started (the
    /// living rubric's current version, seed 003): analyses cite its
    /// criteria and the judge or synthesis weighs by them. A resumed debate
    /// keeps the version it started with.
    RubricRead {
        /// The rubric.
        rubric: crate::rubric::Rubric,
    },
    /// The devil's advocate of a round was drawn from the trust memory
    /// (seed 003): recorded so a resumed debate repeats the choice.
    DevilsAdvocateChosen {
        /// The round.
        round: u32,
        /// Who was chosen.
        persona: PersonaId,
        /// The pool drawn from, with each one's trust in thousandths.
        pool: BTreeMap<PersonaId, u16>,
        /// Whether nobody was viable and everyone was in the pool.
        fallback: bool,
        /// The seed of the draw.
        seed: u64,
    },
    /// The analysis model's judgement of which critiques a dialectic
    /// refinement took in (seed 003's dissent impact), read in the same
    /// call that analysed the round.
    CritiquesJudged {
        /// The refinement.
        refinement: MessageId,
        /// Each critique of the refinement's author in that round that
        /// the call judged, with whether the refinement took it in.
        critiques: Vec<CritiqueTaken>,
    },
    /// The listening agents' answers to "should you respond?" before a
    /// deliberation turn (seed 002): the protocol picks the speaker from
    /// them, and a resumed session repeats the pick.
    SpeakersEvaluated {
        /// The turn the bids are for (1-based).
        turn: u32,
        /// One answer per agent asked, in the order asked.
        bids: Vec<crate::deliberation::Bid>,
    },
    /// The analysis model read these messages for decisions, proposals and
    /// reactions (deliberation); what it found precedes this event.
    DeliberationDetected {
        /// The messages read.
        messages: Vec<MessageId>,
    },
    /// An optional step failed; the debate continues. A warning, not an error.
    StepFailed {
        /// Which step, stored as the fields `step`, `message` and `scope`.
        #[serde(flatten)]
        step: StepId,
        /// Why it failed.
        reason: String,
        /// When.
        time: DateTime<Utc>,
    },
    /// A message was analysed (position extraction and disagreement
    /// judgement over the window it ends). Marks the message as done, so a
    /// resumed debate never analyses it twice.
    TurnAnalyzed {
        /// The message analysed.
        message: MessageId,
        /// Disagreements judged in the window ending at this message.
        #[serde(default)]
        disagreements: Vec<JudgedDisagreement>,
        /// The analysis model's rating of the message, 1-10, when it gave
        /// one (vector memory uses it; without it, a heuristic).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        importance: Option<u8>,
        /// What in the speaker's own earlier position the message
        /// contradicts, when the analysis flagged it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contradiction: Option<String>,
        /// Whether the message ends a judged window (default). `false` for
        /// the earlier messages of a batch analysis, whose window is judged
        /// once, with the batch's last message: claim detection counts
        /// consecutive windows over the turns where this is `true`.
        #[serde(
            default = "crate::serde_flags::yes",
            skip_serializing_if = "crate::serde_flags::is_true"
        )]
        window_end: bool,
    },
    /// Validation repaired a step's model output (clamped, cut, dropped
    /// unknown references) before it became the events just before this one.
    OutputRepaired {
        /// Which step, stored as the fields `step`, `message` and `scope`.
        #[serde(flatten)]
        step: StepId,
        /// What was repaired, one line each.
        notes: Vec<String>,
    },
    /// An agent called a tool during its turn (dialectic's `tools`): the
    /// call's number within the turn, the tool, the arguments as the model
    /// wrote them and what the tool gave back (appended as each call
    /// returns, so a resumed turn reuses it instead of calling again).
    ToolCalled {
        /// The turn (its key as text: `proposal/1/agent-architect`).
        #[schemars(with = "String")]
        turn: crate::step::TurnKey,
        /// Who called it.
        persona: PersonaId,
        /// 0, 1, … within the turn.
        call: u32,
        /// The tool.
        name: String,
        /// The arguments, as the model wrote them.
        arguments: serde_json::Value,
        /// Whether the tool worked.
        ok: bool,
        /// What it returned (or why it failed), as the model was shown it.
        result: String,
    },
    /// What the orchestrator found of a message's `[E:ID]` citations of
    /// the speaker's corpus (appended with the message).
    EvidenceCited {
        /// The message.
        message: MessageId,
        /// Its speaker.
        persona: PersonaId,
        /// Chunks it cited that exist, with their source and passage.
        cited: Vec<crate::evidence::CitedEvidence>,
        /// Ids it cited that name no chunk of the speaker's corpus.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rejected: Vec<String>,
    },
    /// Model usage of one run of the debate (one event per role and model,
    /// appended when a run stops; a resumed debate adds its own).
    UsageRecorded {
        /// The model role ("debater", "extractor", …; another name is
        /// kept as written).
        role: crate::UsageRole,
        /// The model id.
        model: String,
        /// Calls made.
        calls: u64,
        /// Input tokens.
        input_tokens: u64,
        /// Output tokens.
        output_tokens: u64,
        /// Of the input tokens, those read from the provider's prompt
        /// cache.
        #[serde(default, skip_serializing_if = "crate::serde_flags::is_zero")]
        cached_input_tokens: u64,
        /// Of the input tokens, those written to the provider's prompt
        /// cache.
        #[serde(default, skip_serializing_if = "crate::serde_flags::is_zero")]
        cache_write_tokens: u64,
        /// Cost in millionths of a US dollar, when the model is priced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_micro_usd: Option<u64>,
        /// What the same calls would have cost had no prompt cache served
        /// or written any input, when the model is priced and the cache
        /// changed the cost (against `cost_micro_usd`: what it saved).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_without_cache_micro_usd: Option<u64>,
    },
    /// A moderator posted a note that every agent's next context shows.
    NoteAdded {
        /// The note (at most [`crate::steering::MAX_NOTE_CHARS`] characters).
        text: String,
        /// Who posted it, when they gave a name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        author: Option<String>,
        /// When.
        time: DateTime<Utc>,
    },
    /// A person paused the debate: no further step on the critical path
    /// runs until [`DebateEvent::DebateResumed`] (background analyses of
    /// what was said still finish).
    DebatePaused {
        /// Who paused it, when they gave a name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// When.
        time: DateTime<Utc>,
    },
    /// A paused debate goes on.
    DebateResumed {
        /// Who resumed it, when they gave a name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// When.
        time: DateTime<Utc>,
    },
    /// A person rated the debate's outcome (dialectic's `userFeedback`):
    /// `1` up, `-1` down; the latest rating counts. The one event a
    /// finished debate still accepts.
    FeedbackRecorded {
        /// `1` or `-1`.
        value: i8,
        /// When.
        time: DateTime<Utc>,
    },
    /// The debate ended; no event may follow but feedback.
    DebateFinished {
        /// When.
        time: DateTime<Utc>,
    },
}

impl DebateEvent {
    /// The variant's name as serialized (`"message_appended"`, …), for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::DebateStarted { .. } => "debate_started",
            Self::AspectStarted { .. } => "aspect_started",
            Self::RoundStarted { .. } => "round_started",
            Self::ClarificationRoundEnded { .. } => "clarification_round_ended",
            Self::MessageAppended { .. } => "message_appended",
            Self::PositionUpdated { .. } => "position_updated",
            Self::AgreementRecorded { .. } => "agreement_recorded",
            Self::DisagreementRecorded { .. } => "disagreement_recorded",
            Self::ConcessionRecorded { .. } => "concession_recorded",
            Self::ShiftRecorded { .. } => "shift_recorded",
            Self::ClaimOpened { .. } => "claim_opened",
            Self::ClaimStatusChanged { .. } => "claim_status_changed",
            Self::RoundRecorded { .. } => "round_recorded",
            Self::ReflectionAdded { .. } => "reflection_added",
            Self::CruxCardAdded { .. } => "crux_card_added",
            Self::DecisionRecorded { .. } => "decision_recorded",
            Self::ProposalRecorded { .. } => "proposal_recorded",
            Self::ProposalReaction { .. } => "proposal_reaction",
            Self::ProposalStatusChanged { .. } => "proposal_status_changed",
            Self::KeyContributionRecorded { .. } => "key_contribution_recorded",
            Self::SummaryRecorded { .. } => "summary_recorded",
            Self::SpeakersEvaluated { .. } => "speakers_evaluated",
            Self::DeliberationDetected { .. } => "deliberation_detected",
            Self::SolutionRecorded { .. } => "solution_recorded",
            Self::BudgetReached { .. } => "budget_reached",
            Self::BudgetExhausted { .. } => "budget_exhausted",
            Self::RequirementsRecorded { .. } => "requirements_recorded",
            Self::RequirementsCovered { .. } => "requirements_covered",
            Self::DevilsAdvocateChosen { .. } => "devils_advocate_chosen",
            Self::TrustStandingsRead { .. } => "trust_standings_read",
            Self::RubricRead { .. } => "rubric_read",
            Self::CritiquesJudged { .. } => "critiques_judged",
            Self::StepFailed { .. } => "step_failed",
            Self::TurnAnalyzed { .. } => "turn_analyzed",
            Self::OutputRepaired { .. } => "output_repaired",
            Self::EvidenceCited { .. } => "evidence_cited",
            Self::ToolCalled { .. } => "tool_called",
            Self::UsageRecorded { .. } => "usage_recorded",
            Self::NoteAdded { .. } => "note_added",
            Self::DebatePaused { .. } => "debate_paused",
            Self::DebateResumed { .. } => "debate_resumed",
            Self::FeedbackRecorded { .. } => "feedback_recorded",
            Self::DebateFinished { .. } => "debate_finished",
        }
    }
}

/// Whether a refinement took one critique in (seed 003's dissent impact).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CritiqueTaken {
    /// The critique.
    pub critique: MessageId,
    /// Whether the refinement changed the proposal in response to it.
    pub addressed: bool,
}
