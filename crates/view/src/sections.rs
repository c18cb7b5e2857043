//! The typed sections of a debate's view, computed once from its
//! blackboard: every value a reader sees, with persona ids resolved to
//! names and the choices made (which rows, in which order, which label),
//! so the Markdown report, the page and the terminal only lay them out.
//! Model-written text stays as written here; each formatter makes it inert
//! for its own medium.

use agon_core::{
    Blackboard, CoverageStatus, DebateStatus, PersonaId, Reaction, StepId, UsageTotals,
};
use serde::Serialize;

use crate::empty::{EmptySections, ReportOptions, empty_sections};

/// A debate's header: what it is and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    /// Its id, once started.
    pub debate: Option<String>,
    /// The protocol it runs.
    pub protocol: agon_core::ProtocolKind,
    /// The topic or problem, as given (possibly long and multi-line).
    pub topic: Option<String>,
    /// The topic's context, if given.
    pub context: Option<String>,
    /// Its status.
    pub status: DebateStatus,
    /// When it started.
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// A person's rating of the outcome (+1 or −1).
    pub feedback: Option<i8>,
    /// Whether it is paused.
    pub paused: bool,
    /// The rubric it is judged by.
    pub rubric: Option<RubricLine>,
}

/// The rubric a debate is judged by, as its header names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RubricLine {
    /// Which rubric.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// Its criteria's names, comma-separated.
    pub criteria: String,
}

/// One debater's row of the position ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerRow {
    /// The debater's name.
    pub persona: String,
    /// The stance first recorded.
    pub start: String,
    /// The stance last recorded.
    pub end: String,
    /// Concessions, with their round.
    pub concessions: Vec<InRound>,
    /// Position shifts, with their round.
    pub shifts: Vec<InRound>,
    /// Agreements with others.
    pub agreements: Vec<Relation>,
    /// Disagreements with others.
    pub disagreements: Vec<Relation>,
    /// The evidence its positions cite, aspect by aspect.
    pub evidence: Vec<String>,
}

/// A ledger entry made in a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InRound {
    /// The round.
    pub round: u32,
    /// What was conceded or shifted.
    pub text: String,
}

/// An agreement or disagreement with another persona.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Relation {
    /// The other persona's name.
    pub with: String,
    /// On what.
    pub on: String,
}

/// A contested claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimRow {
    /// Its id.
    pub id: String,
    /// The two personas' names.
    pub between: [String; 2],
    /// Where it stands (`active`, `in crux room`, `resolved`, `abandoned`).
    pub status: &'static str,
    /// The claim.
    pub claim: String,
    /// Its crux room, if one opened.
    pub room: Option<String>,
    /// Indices (into the transcript) of the room's messages.
    pub room_messages: Vec<usize>,
    /// How it ended, if it did.
    pub outcome: Option<String>,
}

/// A crux card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardRow {
    /// Its id.
    pub id: String,
    /// The crux question.
    pub question: String,
    /// The kind of disagreement.
    pub kind: &'static str,
    /// Whether the room resolved it.
    pub resolved: bool,
    /// Each side.
    pub positions: Vec<CardPosition>,
    /// The diagnosis.
    pub diagnosis: String,
}

/// One side of a crux card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardPosition {
    /// The persona's name.
    pub persona: String,
    /// Its stance on the crux.
    pub stance: &'static str,
    /// Why.
    pub reasoning: String,
    /// What would change its mind.
    pub falsifier: String,
}

/// A reflection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReflectionRow {
    /// Its kind.
    pub kind: &'static str,
    /// Its importance, 1–10.
    pub importance: u8,
    /// The round it was made in.
    pub round: u32,
    /// What it says.
    pub content: String,
}

/// A structured debate's record of one aspect's round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundRecordRow {
    /// The aspect's label.
    pub aspect: String,
    /// The round.
    pub round: u32,
    /// The summary.
    pub summary: String,
    /// Each persona's take.
    pub takes: Vec<TakeRow>,
}

/// One persona's take in a round record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TakeRow {
    /// The persona's name.
    pub persona: String,
    /// Its position.
    pub position: String,
    /// Its key argument (may be empty).
    pub key_argument: String,
    /// The evidence it cited.
    pub evidence: Vec<String>,
}

/// The requirements matrix of a dialectic debate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirements {
    /// How the requirements were found.
    pub found_by: &'static str,
    /// The agents, in column order.
    pub agents: Vec<String>,
    /// One row per requirement.
    pub rows: Vec<RequirementRow>,
    /// Whether the judge has spoken (the matrix has a judge column).
    pub judged: bool,
    /// Requirements no agent's latest proposal covers (when coverage is
    /// tracked).
    pub uncovered: Vec<String>,
}

/// One requirement of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequirementRow {
    /// Its id (`R1`, …).
    pub id: String,
    /// Its weight (`major`, `minor`).
    pub weight: String,
    /// What it asks.
    pub text: String,
    /// Per agent, one verdict per round (round 1 first): ✓ covers,
    /// ✗ weakens, · does not address.
    pub cells: Vec<String>,
    /// The agents whose latest proposals cover it.
    pub covered_by: Vec<String>,
    /// The judge's verdict, once judged.
    pub verdict: Option<&'static str>,
}

/// The judge's latest solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolutionSection {
    /// The judge's name.
    pub by: String,
    /// The round it followed.
    pub round: u32,
    /// Its confidence (0–100), if given.
    pub confidence: Option<u8>,
    /// The solution.
    pub description: String,
    /// Its lists, titled, in report order (empty ones left out).
    pub lists: Vec<(&'static str, Vec<String>)>,
    /// The earlier solutions' rounds and confidences.
    pub earlier: Vec<(u32, Option<u8>)>,
}

/// A deliberation's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionRow {
    /// Its id.
    pub id: String,
    /// What it decided.
    pub topic: String,
    /// The outcome.
    pub outcome: String,
    /// Who supported it.
    pub supporting: Vec<String>,
}

/// A deliberation's proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalRow {
    /// Its id.
    pub id: String,
    /// Who proposed it.
    pub by: String,
    /// The proposal.
    pub content: String,
    /// Where it stands.
    pub status: String,
    /// Who supports it.
    pub support: Vec<String>,
    /// Who opposes it.
    pub oppose: Vec<String>,
    /// Who is neutral.
    pub neutral: Vec<String>,
}

/// A round's devil's advocate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DevilRow {
    /// The round (0 for a deliberation's skeptic).
    pub round: u32,
    /// The advocate's name.
    pub persona: String,
    /// The dissents it logged in the round, and whether each changed the
    /// outcome.
    pub dissents: Vec<(String, bool)>,
}

/// A tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCallRow {
    /// Who called it.
    pub persona: String,
    /// In which turn.
    pub turn: String,
    /// The tool.
    pub tool: String,
    /// Its arguments, as JSON.
    pub arguments: String,
    /// Whether it worked.
    pub ok: bool,
    /// The first line of what it returned (or why it failed), at most 200
    /// characters.
    pub result: String,
}

/// The sources one persona cited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourcesRow {
    /// The persona's name.
    pub persona: String,
    /// Each cited passage: id, source, passage.
    pub cited: Vec<(String, String, String)>,
    /// Ids it cited that its corpus does not have.
    pub rejected: Vec<String>,
}

/// A moderator's note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteRow {
    /// The number of messages before it.
    pub after_messages: usize,
    /// The note.
    pub text: String,
    /// Who posted it, if they said.
    pub author: Option<String>,
}

/// A warning or a repair: which step, about what, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepRow {
    /// The step's name.
    pub step: String,
    /// What it was about (a message or a scope; may be empty).
    pub subject: String,
    /// What failed, or what was repaired.
    pub text: String,
    /// How many repair notes `text` joins (1 for a warning).
    pub notes: usize,
}

/// One row of the usage table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageRow {
    /// The model role.
    pub role: String,
    /// The model.
    pub model: String,
    /// Its totals.
    pub totals: UsageTotals,
}

/// Usage and cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    /// Per role and model.
    pub rows: Vec<UsageRow>,
    /// The whole debate.
    pub total: UsageTotals,
    /// Input tokens by purpose: utterances, analyses, round records and
    /// reflections, the rest (crux rooms, judge, summaries).
    pub by_purpose: [u64; 4],
    /// Whether every run has recorded its usage (a running debate records
    /// its usage when a run stops).
    pub complete: bool,
}

impl Usage {
    /// Whether a provider reported prompt-cache use.
    pub fn cached(&self) -> bool {
        self.total.cached_input_tokens + self.total.cache_write_tokens > 0
    }

    /// What the prompt cache did to the cost, once a provider reported
    /// cache use.
    pub fn cache_effect(&self) -> CacheEffect {
        if !self.cached() {
            return CacheEffect::None;
        }
        let saving = self.total.cache_saving_micro_usd();
        match saving.signum() {
            1 => CacheEffect::Saved {
                usd: saving as f64 / 1e6,
                share: saving as f64 / self.total.cost_without_cache_micro_usd.max(1) as f64,
            },
            -1 => CacheEffect::WritesCostMore {
                usd: -saving as f64 / 1e6,
            },
            _ => CacheEffect::None,
        }
    }
}

/// What the prompt cache did to a debate's cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheEffect {
    /// No cache use reported, or nothing known about its cost.
    None,
    /// The cache saved `usd` against the same input uncached, `share` of
    /// what that would have cost.
    Saved {
        /// Dollars saved.
        usd: f64,
        /// Of the cost without the cache (0..1).
        share: f64,
    },
    /// Cache writes cost `usd` more than the reads saved.
    WritesCostMore {
        /// Dollars more.
        usd: f64,
    },
}

/// Every section of a debate's view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sections {
    /// The position ledger, one row per debater with a position.
    pub ledger: Vec<LedgerRow>,
    /// Contested claims.
    pub claims: Vec<ClaimRow>,
    /// Crux cards.
    pub crux_cards: Vec<CardRow>,
    /// Reflections.
    pub reflections: Vec<ReflectionRow>,
    /// Round records.
    pub round_records: Vec<RoundRecordRow>,
    /// The requirements matrix, when the debate tracks requirements.
    pub requirements: Option<Requirements>,
    /// The latest solution.
    pub solution: Option<SolutionSection>,
    /// Decisions.
    pub decisions: Vec<DecisionRow>,
    /// Proposals.
    pub proposals: Vec<ProposalRow>,
    /// Devil's advocates.
    pub devils_advocates: Vec<DevilRow>,
    /// Tool calls.
    pub tool_calls: Vec<ToolCallRow>,
    /// Sources cited, per persona.
    pub sources: Vec<SourcesRow>,
    /// Moderator notes.
    pub notes: Vec<NoteRow>,
    /// Optional steps that failed.
    pub warnings: Vec<StepRow>,
    /// Model output validation repaired.
    pub repairs: Vec<StepRow>,
    /// Usage and cost.
    pub usage: Usage,
    /// Why empty sections are empty.
    pub empty: EmptySections,
}

fn names<'a>(bb: &Blackboard, ids: impl IntoIterator<Item = &'a PersonaId>) -> Vec<String> {
    ids.into_iter()
        .map(|id| bb.persona_name(id).to_owned())
        .collect()
}

/// What a step was about: its message, else its scope.
fn subject(step: &StepId) -> String {
    step.message()
        .map(ToString::to_string)
        .or_else(|| step.scope())
        .unwrap_or_default()
}

impl Header {
    /// The header of `bb`'s debate.
    pub fn of(bb: &Blackboard) -> Self {
        Self {
            debate: bb.debate().map(ToString::to_string),
            protocol: bb.protocol(),
            topic: bb.topic().map(|t| t.question.clone()),
            context: bb.topic().and_then(|t| t.context.clone()),
            status: bb.status(),
            started_at: bb.started_at(),
            feedback: bb.user_feedback(),
            paused: bb.is_paused(),
            rubric: bb.rubric().map(|r| RubricLine {
                name: r.name.clone(),
                version: r.version,
                criteria: r.names(),
            }),
        }
    }
}

impl Sections {
    /// Every section of `bb`'s debate.
    pub fn of(bb: &Blackboard, options: ReportOptions) -> Self {
        Self {
            ledger: ledger(bb),
            claims: claims(bb),
            crux_cards: crux_cards(bb),
            reflections: bb
                .reflections()
                .iter()
                .map(|r| ReflectionRow {
                    kind: r.kind.label(),
                    importance: r.importance,
                    round: r.round,
                    content: r.content.clone(),
                })
                .collect(),
            round_records: round_records(bb),
            requirements: requirements(bb),
            solution: solution(bb),
            decisions: bb
                .decisions()
                .iter()
                .map(|d| DecisionRow {
                    id: d.id.to_string(),
                    topic: d.topic.clone(),
                    outcome: d.outcome.clone(),
                    supporting: names(bb, &d.supporting),
                })
                .collect(),
            proposals: proposals(bb),
            devils_advocates: devils_advocates(bb),
            tool_calls: bb
                .tool_calls()
                .iter()
                .map(|c| ToolCallRow {
                    persona: bb.persona_name(&c.persona).to_owned(),
                    turn: c.turn.to_string(),
                    tool: c.name.clone(),
                    arguments: c.arguments.to_string(),
                    ok: c.ok,
                    result: agon_extract::truncate_chars(
                        c.result
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or(""),
                        200,
                    ),
                })
                .collect(),
            sources: sources(bb),
            notes: bb
                .notes()
                .iter()
                .map(|n| NoteRow {
                    after_messages: n.after_messages,
                    text: n.text.clone(),
                    author: n.author.clone(),
                })
                .collect(),
            warnings: bb
                .warnings()
                .iter()
                .map(|w| StepRow {
                    step: w.step.name().to_owned(),
                    subject: subject(&w.step),
                    text: w.reason.clone(),
                    notes: 1,
                })
                .collect(),
            repairs: bb
                .repairs()
                .iter()
                .map(|r| StepRow {
                    step: r.step.name().to_owned(),
                    subject: subject(&r.step),
                    text: r.notes.join("; "),
                    notes: r.notes.len(),
                })
                .collect(),
            usage: usage(bb),
            empty: empty_sections(bb, options),
        }
    }
}

fn ledger(bb: &Blackboard) -> Vec<LedgerRow> {
    bb.debaters()
        .filter_map(|p| {
            let st = bb.position(&p.id)?;
            let relation = |with: &PersonaId, on: &str| Relation {
                with: bb.persona_name(with).to_owned(),
                on: on.to_owned(),
            };
            let in_round = |list: &[agon_core::LedgerNote]| {
                list.iter()
                    .map(|n| InRound {
                        round: n.round,
                        text: n.text.clone(),
                    })
                    .collect()
            };
            Some(LedgerRow {
                persona: p.name.clone(),
                start: st.initial_stance.clone(),
                end: st.overall_stance.clone(),
                concessions: in_round(&st.concessions),
                shifts: in_round(&st.shifts),
                agreements: st
                    .agreements
                    .iter()
                    .map(|a| relation(&a.with, &a.on))
                    .collect(),
                disagreements: st
                    .disagreements
                    .iter()
                    .map(|d| relation(&d.with, &d.on))
                    .collect(),
                evidence: st
                    .aspects
                    .values()
                    .flat_map(|a| a.evidence.iter().cloned())
                    .collect(),
            })
        })
        .collect()
}

fn claims(bb: &Blackboard) -> Vec<ClaimRow> {
    bb.claims()
        .iter()
        .map(|c| ClaimRow {
            id: c.id.to_string(),
            between: [
                bb.persona_name(&c.personas[0]).to_owned(),
                bb.persona_name(&c.personas[1]).to_owned(),
            ],
            status: c.status.label(),
            claim: c.claim.clone(),
            room: c.crux_room.as_ref().map(ToString::to_string),
            room_messages: c
                .crux_room
                .as_ref()
                .map(|room| bb.message_indices_for_room(room).to_vec())
                .unwrap_or_default(),
            outcome: c.resolution.clone(),
        })
        .collect()
}

fn crux_cards(bb: &Blackboard) -> Vec<CardRow> {
    bb.crux_cards()
        .iter()
        .map(|card| CardRow {
            id: card.id.to_string(),
            question: card.question.clone(),
            kind: card.disagreement_type.label(),
            resolved: card.resolved,
            positions: card
                .positions
                .iter()
                .map(|p| CardPosition {
                    persona: bb.persona_name(&p.persona).to_owned(),
                    stance: p.stance.label(),
                    reasoning: p.reasoning.clone(),
                    falsifier: p.falsifier.clone(),
                })
                .collect(),
            diagnosis: card.diagnosis.clone(),
        })
        .collect()
}

fn round_records(bb: &Blackboard) -> Vec<RoundRecordRow> {
    bb.rounds()
        .iter()
        .map(|r| RoundRecordRow {
            aspect: bb
                .aspect(&r.aspect)
                .map_or_else(|| r.aspect.to_string(), |a| a.label.clone()),
            round: r.round,
            summary: r.summary.clone(),
            takes: r
                .takes
                .iter()
                .map(|(p, take)| TakeRow {
                    persona: bb.persona_name(p).to_owned(),
                    position: take.position.clone(),
                    key_argument: take.key_argument.clone(),
                    evidence: take.evidence_cited.clone(),
                })
                .collect(),
        })
        .collect()
}

/// The judge's verdict on requirement `id` in `sol`: `unmet`, `met? (no
/// proposal covers it)` or `met`.
fn judge_verdict(sol: &agon_core::Solution, id: &str) -> &'static str {
    let listed = |list: &[String]| list.iter().any(|r| r == id);
    if listed(&sol.unfulfilled_major_requirements) {
        "unmet"
    } else if listed(&sol.unverified_requirements) {
        "met? (no proposal covers it)"
    } else {
        "met"
    }
}

fn requirements(bb: &Blackboard) -> Option<Requirements> {
    let ledger = bb.requirements();
    if ledger.requirements.is_empty() {
        return None;
    }
    let agents: Vec<&agon_core::Persona> = bb.debaters().collect();
    let rounds = bb.current_round();
    let judged = bb.solution();
    let rows = ledger
        .requirements
        .iter()
        .map(|r| RequirementRow {
            id: r.id.clone(),
            weight: r.weight().to_owned(),
            text: r.text.clone(),
            cells: agents
                .iter()
                .map(|a| {
                    (1..=rounds)
                        .map(|round| match ledger.verdict(&r.id, &a.id, round) {
                            Some(c) if c.coverage.status == CoverageStatus::Covers => '✓',
                            Some(c) if c.coverage.status == CoverageStatus::Weakens => '✗',
                            _ => '·',
                        })
                        .collect()
                })
                .collect(),
            covered_by: names(bb, ledger.covered_by(&r.id)),
            verdict: judged.map(|s| judge_verdict(s, &r.id)),
        })
        .collect();
    Some(Requirements {
        found_by: match ledger.method {
            Some(agon_core::RequirementMethod::Keywords) => "dialectic's keyword inference",
            _ => "the analysis model",
        },
        agents: agents.iter().map(|a| a.name.clone()).collect(),
        rows,
        judged: judged.is_some(),
        uncovered: if bb.coverage_tracked() {
            ledger.uncovered().map(|r| r.id.clone()).collect()
        } else {
            Vec::new()
        },
    })
}

/// A solution's lists, titled, in report order (empty ones left out):
/// trade-offs, recommendations, the unmet major requirements and those
/// reported met that no proposal covers (as `R2: text`), open questions,
/// and an older log's unfinished requirements.
pub fn solution_lists(
    bb: &Blackboard,
    sol: &agon_core::Solution,
) -> Vec<(&'static str, Vec<String>)> {
    let ledger = bb.requirements();
    let labelled =
        |items: &[String]| -> Vec<String> { items.iter().map(|i| ledger.label(i)).collect() };
    [
        ("Trade-offs", sol.tradeoffs.clone()),
        ("Recommendations", sol.recommendations.clone()),
        (
            "Unfulfilled major requirements",
            labelled(&sol.unfulfilled_major_requirements),
        ),
        (
            "Reported met, but no proposal covers them on the ledger",
            labelled(&sol.unverified_requirements),
        ),
        ("Open questions", sol.open_questions.clone()),
        (
            "Unfinished requirements",
            sol.unfinished_requirements.clone(),
        ),
    ]
    .into_iter()
    .filter(|(_, items)| !items.is_empty())
    .collect()
}

fn solution(bb: &Blackboard) -> Option<SolutionSection> {
    let (last, earlier) = bb.solutions().split_last()?;
    Some(SolutionSection {
        by: bb.persona_name(&last.synthesized_by).to_owned(),
        round: last.round,
        confidence: last.confidence,
        description: last.description.clone(),
        lists: solution_lists(bb, last),
        earlier: earlier.iter().map(|s| (s.round, s.confidence)).collect(),
    })
}

fn proposals(bb: &Blackboard) -> Vec<ProposalRow> {
    bb.proposals()
        .iter()
        .map(|p| {
            let with = |r: Reaction| {
                names(
                    bb,
                    p.reactions
                        .iter()
                        .filter(|(_, x)| **x == r)
                        .map(|(id, _)| id),
                )
            };
            ProposalRow {
                id: p.id.to_string(),
                by: bb.persona_name(&p.proposer).to_owned(),
                content: p.content.clone(),
                status: format!("{:?}", p.status).to_lowercase(),
                support: with(Reaction::Support),
                oppose: with(Reaction::Oppose),
                neutral: with(Reaction::Neutral),
            }
        })
        .collect()
}

fn devils_advocates(bb: &Blackboard) -> Vec<DevilRow> {
    // The dissents each one logged in its round, as the trust memory
    // records them (impact: whether the critique changed the outcome).
    let dissents = bb
        .debate()
        .map(|d| agon_protocol::trust_harvest::dissents(bb, d))
        .unwrap_or_default();
    bb.devils_advocates()
        .iter()
        .map(|(round, persona)| {
            let name = bb.persona_name(persona).to_owned();
            let round_id = bb
                .debate()
                .map(|d| format!("{d}/round_{round}"))
                .unwrap_or_default();
            let logged = dissents
                .iter()
                .filter(|d| d.agent == name && d.round_id == round_id)
                .map(|d| (d.text.clone(), d.impact))
                .collect();
            DevilRow {
                round: *round,
                persona: name,
                dissents: logged,
            }
        })
        .collect()
}

fn sources(bb: &Blackboard) -> Vec<SourcesRow> {
    bb.personas()
        .iter()
        .map(|persona| SourcesRow {
            persona: persona.name.clone(),
            cited: bb
                .sources_cited(&persona.id)
                .into_iter()
                .map(|e| (e.id.clone(), e.source.clone(), e.passage.clone()))
                .collect(),
            rejected: bb
                .citations()
                .iter()
                .filter(|c| c.persona == persona.id)
                .flat_map(|c| c.rejected.iter().cloned())
                .collect(),
        })
        .filter(|s| !s.cited.is_empty() || !s.rejected.is_empty())
        .collect()
}

fn usage(bb: &Blackboard) -> Usage {
    use agon_core::ModelRole as R;
    let input = |roles: &[R]| -> u64 {
        bb.usage()
            .iter()
            .filter(|(role, _)| role.model_role().is_some_and(|r| roles.contains(&r)))
            .flat_map(|(_, models)| models.values())
            .map(|u| u.input_tokens)
            .sum()
    };
    Usage {
        rows: bb
            .usage()
            .iter()
            .flat_map(|(role, models)| {
                models.iter().map(move |(model, totals)| UsageRow {
                    role: role.to_string(),
                    model: model.clone(),
                    totals: *totals,
                })
            })
            .collect(),
        total: bb.usage_total(),
        by_purpose: [
            input(&[R::Debater]),
            input(&[R::Extractor, R::Detector]),
            input(&[R::Reflector]),
            input(&[R::Crux, R::Judge]),
        ],
        complete: bb.status() == DebateStatus::Finished,
    }
}
