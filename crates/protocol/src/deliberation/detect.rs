//! Seed 002's pattern detection: decisions, proposals and reactions found
//! in a message by configurable regular expressions (case-insensitive), and
//! the proposal bookkeeping that follows from them.
//!
//! ## Rules
//! - **Proposal**: the first sentence matching a proposal pattern becomes
//!   proposal `P<n>` of its speaker (tags stripped; a bare tag takes the
//!   next sentence). An active proposal the speaker made earlier is marked
//!   `modified`. The proposal is the speaker's key contribution.
//! - **Reaction**: a message that matches a support or an oppose pattern
//!   (not both) reacts to the proposals it names by id (`P3`,
//!   `proposal 3`) or quotes (its first 50 characters, as the seed), else
//!   to the newest active proposal of someone else. A proposal named
//!   without either pattern gets a neutral reaction. Only active proposals
//!   of others get reactions; the latest reaction counts.
//! - **Acceptance**: when every other participant's latest reaction to an
//!   active proposal is support, it is `accepted` and recorded as a
//!   decision supported by everyone (a consensus). When more than half of
//!   the others oppose it, it is `rejected`.
//! - **Decision**: a sentence matching a decision pattern (when the message
//!   did not already settle a proposal) is a decision supported by its
//!   speaker; its topic is the text before a `:` or the proposal it names,
//!   else its first words.

use crate::rules::DetectionSource;
use agon_core::{
    Blackboard, DebateEvent, Decision, DecisionId, DialogueMessage, PersonaId, Proposal,
    ProposalId, ProposalStatus, Reaction,
};
use regex::{Regex, RegexBuilder};

/// Seed 002's decision patterns.
pub const DEFAULT_DECISION: &[&str] = &[
    r"we('ve)?\s+(agreed|decided|concluded)",
    r"consensus\s+(is|reached)",
    r"let's\s+go\s+with",
    r"final\s+(decision|answer)",
    r"\[CONSENSUS\]",
    r"\[DECISION\]",
];
/// Seed 002's proposal patterns.
pub const DEFAULT_PROPOSAL: &[&str] = &[
    r"I\s+propose",
    r"what\s+if\s+we",
    r"let's\s+consider",
    r"my\s+suggestion",
    r"\[PROPOSAL\]",
];
/// Seed 002's support patterns, plus `I support` and `[SUPPORT]`.
pub const DEFAULT_SUPPORT: &[&str] = &[
    r"I\s+agree",
    r"great\s+idea",
    r"let's\s+do\s+it",
    r"\bI\s+support\b",
    r"\[SUPPORT\]",
];
/// Seed 002's oppose patterns, plus `I oppose` and `[OPPOSE]`.
pub const DEFAULT_OPPOSE: &[&str] = &[
    r"I\s+disagree",
    r"won't\s+work",
    r"problem\s+with",
    r"\bI\s+oppose\b",
    r"\[OPPOSE\]",
];

/// Longest proposal or decision text kept, in characters.
const MAX_TEXT: usize = 300;
/// Characters of a proposal a message must quote to react to it (seed 002).
const QUOTE_PREFIX: usize = 50;
/// Active proposals (the newest) a message is checked for quotes of: the
/// work per message stays bounded however many proposals a session made.
const QUOTE_CANDIDATES: usize = 100;

/// A pattern that is not a valid regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patterns.{list}[{index}] `{pattern}` is not a valid regular expression: {reason}")]
pub struct PatternError {
    /// Which list (`decision`, `proposal`, `support`, `oppose`).
    pub list: &'static str,
    /// Its position in the list.
    pub index: usize,
    /// The pattern.
    pub pattern: String,
    /// The regex compiler's message.
    pub reason: String,
}

/// The compiled pattern lists.
#[derive(Debug, Clone)]
pub struct Patterns {
    decision: Vec<Regex>,
    proposal: Vec<Regex>,
    support: Vec<Regex>,
    oppose: Vec<Regex>,
}

impl PartialEq for Patterns {
    fn eq(&self, other: &Self) -> bool {
        let src = |v: &[Regex]| v.iter().map(|r| r.as_str().to_owned()).collect::<Vec<_>>();
        src(&self.decision) == src(&other.decision)
            && src(&self.proposal) == src(&other.proposal)
            && src(&self.support) == src(&other.support)
            && src(&self.oppose) == src(&other.oppose)
    }
}

impl Default for Patterns {
    fn default() -> Self {
        let all = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        // The defaults are tested to compile.
        Self::new(
            &all(DEFAULT_DECISION),
            &all(DEFAULT_PROPOSAL),
            &all(DEFAULT_SUPPORT),
            &all(DEFAULT_OPPOSE),
        )
        .unwrap_or_else(|_| Self {
            decision: Vec::new(),
            proposal: Vec::new(),
            support: Vec::new(),
            oppose: Vec::new(),
        })
    }
}

fn compile(list: &'static str, patterns: &[String]) -> Result<Vec<Regex>, PatternError> {
    patterns
        .iter()
        .enumerate()
        .map(|(index, p)| {
            RegexBuilder::new(p)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| PatternError {
                    list,
                    index,
                    pattern: p.clone(),
                    reason: e.to_string(),
                })
        })
        .collect()
}

impl Patterns {
    /// Compiles the four lists (case-insensitive); the first invalid
    /// pattern is named in the error.
    pub fn new(
        decision: &[String],
        proposal: &[String],
        support: &[String],
        oppose: &[String],
    ) -> Result<Self, PatternError> {
        Ok(Self {
            decision: compile("decision", decision)?,
            proposal: compile("proposal", proposal)?,
            support: compile("support", support)?,
            oppose: compile("oppose", oppose)?,
        })
    }
}

fn any(patterns: &[Regex], text: &str) -> bool {
    patterns.iter().any(|p| p.is_match(text))
}

/// Splits text into sentences (at `.`, `!`, `?` followed by space, and at
/// line breaks), trimmed, without empty ones.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end = match b {
            b'\n' => Some(i),
            b'.' | b'!' | b'?' if bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) => {
                Some(i + 1)
            }
            _ => None,
        };
        if let Some(end) = end {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Strips `[TAG]` markers and surrounding punctuation.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        out.push_str(&rest[..open]);
        if !tag.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            out.push_str(&rest[open..=open + close]);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.trim()
        .trim_start_matches([':', '-', '—', ' '])
        .trim()
        .to_owned()
}

/// The text of the first sentence matching `patterns`, tags stripped; a
/// sentence that is only a tag takes the next one.
fn matched_sentence(patterns: &[Regex], text: &str) -> Option<String> {
    let parts = sentences(text);
    let i = parts.iter().position(|s| any(patterns, s))?;
    let mut found = strip_tags(parts[i]);
    if found.chars().filter(|c| c.is_alphanumeric()).count() < 12
        && let Some(next) = parts.get(i + 1)
    {
        found = format!("{found} {}", strip_tags(next)).trim().to_owned();
    }
    let found = agon_extract::truncate_chars(&found, MAX_TEXT);
    (found.chars().any(char::is_alphanumeric)).then_some(found)
}

/// The proposal ids a text names (`P3`, `[P3]`, `proposal 3`, `proposal P3`).
fn named_proposals(board: &Blackboard, text: &str) -> Vec<ProposalId> {
    let mut out: Vec<ProposalId> = Vec::new();
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let number = if let Some(n) = w
            .strip_prefix('p')
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        {
            Some(n)
        } else if *w == "proposal" {
            words
                .get(i + 1)
                .map(|n| n.trim_start_matches('p'))
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        } else {
            None
        };
        if let Some(n) = number {
            let id = ProposalId::new(format!("P{n}"));
            if board.proposal(&id).is_some() && !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// What one message contributes, however it was found (patterns or the
/// analysis model).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// A new proposal, one sentence.
    pub proposal: Option<String>,
    /// A decision: topic and outcome.
    pub decision: Option<(String, String)>,
    /// Reactions to proposals the message names.
    pub named: Vec<(ProposalId, Reaction)>,
    /// A reaction to no proposal in particular: it goes to the newest
    /// active proposal of someone else.
    pub unnamed: Option<Reaction>,
}

/// The findings of the patterns in `message`.
pub fn pattern_findings(
    board: &Blackboard,
    patterns: &Patterns,
    message: &DialogueMessage,
) -> Findings {
    let text = message.content.as_str();
    let support = any(&patterns.support, text);
    let oppose = any(&patterns.oppose, text);
    let reaction = match (support, oppose) {
        (true, false) => Some(Reaction::Support),
        (false, true) => Some(Reaction::Oppose),
        _ => None,
    };
    let named = named_proposals(board, text);
    let quoted = board
        .proposals()
        .iter()
        .rev()
        .filter(|p| p.status == ProposalStatus::Active)
        .take(QUOTE_CANDIDATES)
        .filter(|p| {
            let prefix: String = p.content.chars().take(QUOTE_PREFIX).collect();
            prefix.chars().count() >= 12 && text.contains(&prefix)
        })
        .map(|p| p.id.clone());
    let mut targets: Vec<(ProposalId, Reaction)> = Vec::new();
    for id in named.iter().cloned().chain(quoted) {
        if !targets.iter().any(|(t, _)| *t == id) {
            targets.push((id, reaction.unwrap_or(Reaction::Neutral)));
        }
    }
    let decision = matched_sentence(&patterns.decision, text).map(|sentence| {
        let (topic, outcome) = match named.first() {
            Some(id) => (format!("proposal {id}"), sentence.clone()),
            None => match sentence.split_once(':') {
                Some((topic, outcome)) if !outcome.trim().is_empty() => {
                    (strip_tags(topic), outcome.trim().to_owned())
                }
                _ => {
                    let words: Vec<&str> = sentence.split_whitespace().take(6).collect();
                    (format!("{}…", words.join(" ")), sentence.clone())
                }
            },
        };
        let topic = if topic.is_empty() {
            "decision".to_owned()
        } else {
            topic
        };
        (topic, outcome)
    });
    Findings {
        proposal: matched_sentence(&patterns.proposal, text),
        decision,
        unnamed: if targets.is_empty() { reaction } else { None },
        named: targets,
    }
}

/// What a message contributes to the deliberation memory by the patterns:
/// the events to append right after it, in order. `board` is the
/// blackboard before the message is appended.
pub fn message_events(
    board: &Blackboard,
    patterns: &Patterns,
    message: &DialogueMessage,
) -> Vec<DebateEvent> {
    events_for(board, message, &pattern_findings(board, patterns, message))
}

/// What the rules of this module read of a deliberation: its proposals,
/// how many decisions it has, its debaters. The blackboard is one; a
/// batch's [`Pending`] state (the blackboard with the events already taken
/// from the batch's earlier messages on top) is the other.
trait ProposalState {
    /// Every proposal, in the order recorded.
    fn proposals(&self) -> &[Proposal];
    /// A proposal by id.
    fn proposal(&self, id: &ProposalId) -> Option<&Proposal> {
        self.proposals().iter().find(|p| &p.id == id)
    }
    /// How many decisions are recorded.
    fn decision_count(&self) -> usize;
    /// The debaters' ids.
    fn debater_ids(&self) -> Vec<&PersonaId>;
}

impl ProposalState for Blackboard {
    fn proposals(&self) -> &[Proposal] {
        Blackboard::proposals(self)
    }

    fn proposal(&self, id: &ProposalId) -> Option<&Proposal> {
        Blackboard::proposal(self, id)
    }

    fn decision_count(&self) -> usize {
        self.decisions().len()
    }

    fn debater_ids(&self) -> Vec<&PersonaId> {
        self.debaters().map(|p| &p.id).collect()
    }
}

/// The proposals and decisions of a blackboard as the events taken so far
/// from a batch leave them, without a copy of the blackboard (only its
/// proposals are copied): what each next message of the batch is read
/// against.
struct Pending<'a> {
    board: &'a Blackboard,
    proposals: Vec<Proposal>,
    decisions: usize,
}

impl<'a> Pending<'a> {
    fn new(board: &'a Blackboard) -> Self {
        Self {
            board,
            proposals: board.proposals().to_vec(),
            decisions: board.decisions().len(),
        }
    }

    /// Takes `event` into the pending state, or says why the blackboard
    /// would refuse it (an unknown or duplicate proposal, an empty text).
    fn take(&mut self, event: &DebateEvent) -> Result<(), String> {
        match event {
            DebateEvent::ProposalRecorded {
                proposal,
                proposer,
                content,
                time,
            } => {
                if self.proposal(proposal).is_some() {
                    return Err(format!("proposal {proposal} exists"));
                }
                if content.trim().is_empty() {
                    return Err(format!("proposal {proposal} has no content"));
                }
                self.proposals.push(Proposal {
                    id: proposal.clone(),
                    proposer: proposer.clone(),
                    content: content.clone(),
                    status: ProposalStatus::Active,
                    reactions: std::collections::BTreeMap::new(),
                    time: *time,
                });
            }
            DebateEvent::ProposalReaction {
                proposal,
                persona,
                reaction,
            } => {
                let p = self.proposal_mut(proposal)?;
                p.reactions.insert(persona.clone(), *reaction);
            }
            DebateEvent::ProposalStatusChanged { proposal, status } => {
                self.proposal_mut(proposal)?.status = *status;
            }
            DebateEvent::DecisionRecorded { decision } => {
                if decision.outcome.trim().is_empty() {
                    return Err(format!("decision {} has no outcome", decision.id));
                }
                self.decisions += 1;
            }
            _ => {}
        }
        Ok(())
    }

    fn proposal_mut(&mut self, id: &ProposalId) -> Result<&mut Proposal, String> {
        self.proposals
            .iter_mut()
            .find(|p| &p.id == id)
            .ok_or_else(|| format!("no proposal {id}"))
    }
}

impl ProposalState for Pending<'_> {
    fn proposals(&self) -> &[Proposal] {
        &self.proposals
    }

    fn decision_count(&self) -> usize {
        self.decisions
    }

    fn debater_ids(&self) -> Vec<&PersonaId> {
        self.board.debater_ids()
    }
}

/// The events of `findings` for `message`, by the rules of this module
/// (reactions, acceptance or rejection, the new proposal, the decision).
pub fn events_for(
    board: &Blackboard,
    message: &DialogueMessage,
    findings: &Findings,
) -> Vec<DebateEvent> {
    events_in(board, message, findings)
}

fn events_in(
    board: &impl ProposalState,
    message: &DialogueMessage,
    findings: &Findings,
) -> Vec<DebateEvent> {
    let mut events = Vec::new();
    let speaker = &message.persona;
    let active_of_others = |id: &ProposalId| {
        board
            .proposal(id)
            .is_some_and(|p| p.status == ProposalStatus::Active && &p.proposer != speaker)
    };
    // Reactions first: a message that proposes anew may still answer an
    // earlier proposal.
    let mut targets: Vec<(ProposalId, Reaction)> = findings
        .named
        .iter()
        .filter(|(id, _)| active_of_others(id))
        .cloned()
        .collect();
    if targets.is_empty()
        && let Some(reaction) = findings.unnamed
        && let Some(p) = board
            .proposals()
            .iter()
            .rev()
            .find(|p| p.status == ProposalStatus::Active && &p.proposer != speaker)
    {
        targets.push((p.id.clone(), reaction));
    }
    let mut settled = false;
    let mut decisions = board.decision_count();
    for (id, reaction) in targets {
        let Some(proposal) = board.proposal(&id) else {
            continue;
        };
        if proposal.reactions.get(speaker) != Some(&reaction) {
            events.push(DebateEvent::ProposalReaction {
                proposal: id.clone(),
                persona: speaker.clone(),
                reaction,
            });
        }
        // The proposal's reactions with this one counted.
        let others: Vec<&PersonaId> = board
            .debater_ids()
            .into_iter()
            .filter(|p| *p != &proposal.proposer)
            .collect();
        let latest = |p: &PersonaId| {
            if p == speaker {
                Some(reaction)
            } else {
                proposal.reactions.get(p).copied()
            }
        };
        let supporters = others
            .iter()
            .filter(|p| latest(p) == Some(Reaction::Support))
            .count();
        let opponents = others
            .iter()
            .filter(|p| latest(p) == Some(Reaction::Oppose))
            .count();
        if !others.is_empty() && supporters == others.len() {
            events.push(DebateEvent::ProposalStatusChanged {
                proposal: id.clone(),
                status: ProposalStatus::Accepted,
            });
            decisions += 1;
            let mut supporting = vec![proposal.proposer.clone()];
            supporting.extend(others.iter().map(|p| (*p).clone()));
            events.push(DebateEvent::DecisionRecorded {
                decision: Decision {
                    id: DecisionId::new(format!("D{decisions}")),
                    topic: format!("proposal {id}"),
                    outcome: proposal.content.clone(),
                    supporting,
                    source_message: Some(message.id.clone()),
                    time: message.time,
                },
            });
            events.push(DebateEvent::KeyContributionRecorded {
                persona: proposal.proposer.clone(),
                text: format!("{id} accepted by everyone: {}", proposal.content),
            });
            settled = true;
        } else if opponents * 2 > others.len() {
            events.push(DebateEvent::ProposalStatusChanged {
                proposal: id.clone(),
                status: ProposalStatus::Rejected,
            });
            settled = true;
        }
    }

    if let Some(content) = findings.proposal.clone() {
        let id = ProposalId::new(format!("P{}", board.proposals().len() + 1));
        for earlier in board
            .proposals()
            .iter()
            .filter(|p| &p.proposer == speaker && p.status == ProposalStatus::Active)
        {
            events.push(DebateEvent::ProposalStatusChanged {
                proposal: earlier.id.clone(),
                status: ProposalStatus::Modified,
            });
        }
        events.push(DebateEvent::ProposalRecorded {
            proposal: id.clone(),
            proposer: speaker.clone(),
            content: content.clone(),
            time: message.time,
        });
        events.push(DebateEvent::KeyContributionRecorded {
            persona: speaker.clone(),
            text: format!("proposed {id}: {content}"),
        });
    }

    if !settled && let Some((topic, outcome)) = findings.decision.clone() {
        decisions += 1;
        events.push(DebateEvent::DecisionRecorded {
            decision: Decision {
                id: DecisionId::new(format!("D{decisions}")),
                topic,
                outcome: outcome.clone(),
                supporting: vec![speaker.clone()],
                source_message: Some(message.id.clone()),
                time: message.time,
            },
        });
        events.push(DebateEvent::KeyContributionRecorded {
            persona: speaker.clone(),
            text: format!("recorded a decision: {outcome}"),
        });
    }
    events
}

/// The events of the analysis model's reading of `messages` (a
/// `deliberation_detection` payload), in transcript order, then the
/// `deliberation_detected` marker. Each message's findings go through the
/// same rules as the patterns' ([`events_for`]); a reaction to a proposal
/// that does not exist is dropped with a note; with `both`, a proposal or
/// decision the patterns already took from a message is not recorded
/// twice. A failed or unusable reading is a `deliberation_detection`
/// warning (the marker still follows: it is not asked again).
pub fn model_events(
    board: &Blackboard,
    messages: &[agon_core::MessageId],
    output: crate::ModelOutput,
    source: DetectionSource,
    time: chrono::DateTime<chrono::Utc>,
) -> Vec<DebateEvent> {
    use agon_core::StepId;
    use agon_extract::DeliberationDetection;
    let Some(first) = messages.first() else {
        return Vec::new();
    };
    let step = StepId::Detection(first.clone());
    let marker = DebateEvent::DeliberationDetected {
        messages: messages.to_vec(),
    };
    let validated = match crate::extract(output, |d: DeliberationDetection| Ok(d.validate())) {
        Ok(v) => v,
        Err(e) => {
            return vec![
                crate::step_failed(step, format!("decisions and proposals not read: {e}"), time),
                marker,
            ];
        }
    };
    let mut notes: Vec<String> = validated.notes().to_vec();
    let mut pending = Pending::new(board);
    let mut out = Vec::new();
    for id in messages {
        let Some(message) = board.message(id) else {
            continue;
        };
        let Some(entry) = validated
            .value()
            .messages
            .iter()
            .find(|e| e.message == id.as_str())
        else {
            continue;
        };
        let mut findings = Findings {
            proposal: entry.proposal.clone(),
            decision: entry
                .decision
                .as_ref()
                .map(|d| (d.topic.clone(), d.outcome.clone())),
            named: Vec::new(),
            unnamed: None,
        };
        for r in &entry.reactions {
            let pid = ProposalId::new(r.proposal.as_str());
            if pending.proposal(&pid).is_some() {
                findings.named.push((pid, r.reaction));
            } else {
                notes.push(format!(
                    "{id}: dropped a reaction to {} (no such proposal)",
                    r.proposal
                ));
            }
        }
        if source == DetectionSource::Both {
            if pending
                .proposals()
                .iter()
                .any(|p| p.proposer == message.persona && p.time == message.time)
            {
                findings.proposal = None;
            }
            if board
                .decisions()
                .iter()
                .chain(out.iter().filter_map(|e| match e {
                    DebateEvent::DecisionRecorded { decision } => Some(decision),
                    _ => None,
                }))
                .any(|d| d.source_message.as_ref() == Some(id))
            {
                findings.decision = None;
            }
        }
        // Only what applies goes out: a rejected event would fail the append.
        for e in events_in(&pending, message, &findings) {
            match pending.take(&e) {
                Ok(()) => out.push(e),
                Err(err) => notes.push(format!("{id}: dropped {}: {err}", e.name())),
            }
        }
    }
    if !notes.is_empty() {
        out.push(DebateEvent::OutputRepaired { step, notes });
    }
    out.push(marker);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_compile() {
        let all = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let p = Patterns::new(
            &all(DEFAULT_DECISION),
            &all(DEFAULT_PROPOSAL),
            &all(DEFAULT_SUPPORT),
            &all(DEFAULT_OPPOSE),
        )
        .unwrap();
        assert_eq!(p, Patterns::default());
        assert_eq!(p.decision.len(), DEFAULT_DECISION.len());
    }

    #[test]
    fn an_invalid_pattern_is_named() {
        let err = Patterns::new(&[], &["ok".into(), "(unclosed".into()], &[], &[]).unwrap_err();
        assert_eq!((err.list, err.index), ("proposal", 1));
        assert!(
            err.to_string().contains("patterns.proposal[1] `(unclosed`"),
            "{err}"
        );
    }

    #[test]
    fn sentences_split_at_ends_and_lines() {
        assert_eq!(
            sentences("[PROPOSAL]\nWe tax fuel. Why? Because 3.5 is low!"),
            vec!["[PROPOSAL]", "We tax fuel.", "Why?", "Because 3.5 is low!"]
        );
    }

    #[test]
    fn a_bare_tag_takes_the_next_sentence() {
        let p = Patterns::default();
        assert_eq!(
            matched_sentence(
                &p.proposal,
                "Fine.\n[PROPOSAL]\nA congestion charge of 5 euros."
            ),
            Some("A congestion charge of 5 euros.".into())
        );
    }
}

#[cfg(test)]
mod board_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agon_core::{MessageId, MessageKind, Persona, Topic};
    use chrono::DateTime;

    fn board() -> Blackboard {
        let mut bb = Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("Transport budget"),
            aspects: vec![],
            personas: ["ada", "bo", "cy"]
                .iter()
                .map(|id| Persona::debater(*id, id.to_uppercase(), "citizen", "plain"))
                .collect(),
            time: DateTime::UNIX_EPOCH,
            protocol: None,
        })
        .unwrap();
        bb
    }

    /// Appends `text` by `who` with its derived events; returns those events.
    fn say(bb: &mut Blackboard, who: &str, text: &str) -> Vec<DebateEvent> {
        let message = DialogueMessage {
            id: MessageId::new(format!("msg-{}", bb.messages().len() + 1)),
            persona: PersonaId::new(who),
            kind: MessageKind::Deliberation,
            aspect: None,
            round: 0,
            miniround: None,
            crux_room: None,
            content: text.into(),
            time: DateTime::UNIX_EPOCH,
            reply_to: None,
            meta: None,
        };
        let events = message_events(bb, &Patterns::default(), &message);
        bb.apply(&DebateEvent::MessageAppended { message }).unwrap();
        for e in &events {
            bb.apply(e).unwrap();
        }
        events
    }

    #[test]
    fn proposals_reactions_rejection_and_modification() {
        let mut bb = board();
        say(
            &mut bb,
            "ada",
            "Good morning. I propose a bus lane on Main Street.",
        );
        let p1 = bb.proposal(&ProposalId::new("P1")).unwrap();
        assert_eq!(p1.content, "I propose a bus lane on Main Street.");
        // A reaction without a named proposal goes to the newest active one
        // of someone else.
        say(&mut bb, "bo", "I disagree, it won't work downtown.");
        assert_eq!(
            bb.proposals()[0].reactions[&PersonaId::new("bo")],
            Reaction::Oppose
        );
        // Named by id; neither pattern: neutral.
        say(&mut bb, "cy", "About P1, I need the costs first.");
        assert_eq!(
            bb.proposals()[0].reactions[&PersonaId::new("cy")],
            Reaction::Neutral
        );
        // The proposer proposes anew: the first is modified.
        say(
            &mut bb,
            "ada",
            "[PROPOSAL] A bus lane on Main Street, weekdays only.",
        );
        assert_eq!(bb.proposals()[0].status, ProposalStatus::Modified);
        assert_eq!(bb.proposals()[1].status, ProposalStatus::Active);
        // Two of two others oppose: rejected.
        say(&mut bb, "bo", "There is a problem with P2 as well.");
        say(&mut bb, "cy", "I oppose P2.");
        assert_eq!(bb.proposals()[1].status, ProposalStatus::Rejected);
        assert!(bb.decisions().is_empty());
    }

    #[test]
    fn decisions_from_tags_and_phrases() {
        let mut bb = board();
        say(
            &mut bb,
            "ada",
            "[DECISION] Budget: 60% to buses, 40% to cycling.",
        );
        say(&mut bb, "bo", "So we've agreed to review it in a year.");
        let d = bb.decisions();
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].topic.as_str(), d[0].outcome.as_str()),
            ("Budget", "60% to buses, 40% to cycling.")
        );
        assert_eq!(d[0].supporting, vec![PersonaId::new("ada")]);
        assert_eq!(d[1].outcome, "So we've agreed to review it in a year.");
        assert_eq!(
            bb.participation()[&PersonaId::new("bo")]
                .key_contributions
                .len(),
            1
        );
    }

    #[test]
    fn everyone_supporting_accepts_the_proposal_as_a_consensus_decision() {
        let mut bb = board();
        say(&mut bb, "ada", "What if we make the trams free on Sundays?");
        say(&mut bb, "bo", "Great idea.");
        assert_eq!(bb.proposals()[0].status, ProposalStatus::Active);
        let events = say(&mut bb, "cy", "I agree with P1.");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, DebateEvent::DecisionRecorded { .. }))
        );
        assert_eq!(bb.proposals()[0].status, ProposalStatus::Accepted);
        assert_eq!(bb.decisions()[0].supporting.len(), 3);
        assert!(crate::deliberation::consensus(&bb));
        // A repeated reaction is not recorded again.
        assert!(say(&mut bb, "cy", "I agree with P1.").is_empty());
    }

    #[test]
    fn the_models_reading_goes_through_the_same_rules_and_junk_is_dropped() {
        let mut bb = board();
        let ids: Vec<agon_core::MessageId> = ["ada", "bo", "cy"]
            .iter()
            .map(|who| {
                let message = DialogueMessage {
                    id: MessageId::new(format!("msg-{}", bb.messages().len() + 1)),
                    persona: PersonaId::new(*who),
                    kind: MessageKind::Deliberation,
                    aspect: None,
                    round: 0,
                    miniround: None,
                    crux_room: None,
                    content: format!("{who} speaks"),
                    time: DateTime::UNIX_EPOCH,
                    reply_to: None,
                    meta: None,
                };
                let id = message.id.clone();
                bb.apply(&DebateEvent::MessageAppended { message }).unwrap();
                id
            })
            .collect();
        let output = Ok(serde_json::json!({"messages": [
            {"message": "msg-1", "proposal": "Free trams on Sundays.", "decision": null, "reactions": []},
            {"message": "msg-2", "proposal": null, "decision": null,
             "reactions": [{"proposal": "[p1]", "reaction": "support"}, {"proposal": "P9", "reaction": "oppose"}, {"proposal": "the first", "reaction": "oppose"}]},
            {"message": "msg-3", "proposal": "null", "decision": {"topic": "Trams", "outcome": "Free on Sundays from May."},
             "reactions": [{"proposal": "P1", "reaction": "support"}]},
            {"message": "msg-99", "proposal": "Ignored.", "decision": null, "reactions": []}
        ]}));
        let events = model_events(
            &bb,
            &ids,
            output,
            DetectionSource::Model,
            DateTime::UNIX_EPOCH,
        );
        for e in &events {
            bb.apply(e).unwrap();
        }
        let p1 = bb.proposal(&ProposalId::new("P1")).unwrap();
        assert_eq!(p1.content, "Free trams on Sundays.");
        // Everyone else supports it: accepted, a consensus decision; the
        // message's own decision is not recorded twice.
        assert_eq!(p1.status, ProposalStatus::Accepted);
        assert_eq!(bb.decisions().len(), 1);
        assert_eq!(bb.proposals().len(), 1, "msg-99 is not in the batch");
        let notes: Vec<&String> = events
            .iter()
            .filter_map(|e| match e {
                DebateEvent::OutputRepaired { notes, .. } => Some(notes),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("P9") && n.contains("no such proposal")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("the first") && n.contains("not a proposal id")),
            "{notes:?}"
        );
        assert!(ids.iter().all(|id| bb.is_detected(id)));
    }
}
