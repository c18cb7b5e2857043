//! Section builders: each reads the blackboard and returns a section draft
//! whose candidates are ordered most important first. Costs depend on the
//! number of personas, aspects, claims, reflections and the caps given, never
//! on the length of the transcript.

use std::collections::HashSet;

use agon_core::{
    AspectId, Blackboard, ClaimStatus, CruxRoomId, DebateAspect, DialogueMessage, Intensity,
    LiveClaim, MessageKind, Persona, PersonaId,
};

use crate::extras::ContextExtras;
use crate::fit::Draft;
use crate::section::SectionKind;

/// Which aspects a ledger section covers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// Only the aspect being debated.
    Aspect(&'a DebateAspect),
    /// Every aspect (closings, crux rooms).
    All,
}

impl<'a> Scope<'a> {
    fn aspects(self, bb: &'a Blackboard) -> Vec<&'a DebateAspect> {
        match self {
            Self::Aspect(aspect) => vec![aspect],
            Self::All => bb.aspects().iter().collect(),
        }
    }
}

/// Most recent agreements / disagreements shown per pair of personas.
const RELATIONS_PER_PAIR: usize = 4;
/// Most recent concessions, shifts, evidence items and challenges shown.
const LEDGER_ITEMS: usize = 6;
/// Characters of a cited passage shown in YOUR POSITION.
const SOURCE_CHARS: usize = 160;

/// `text` cut to `max` characters at a word boundary, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut} …")
}

/// The last `k` items (the newest), in their original order.
fn newest<T>(items: &[T], k: usize) -> &[T] {
    &items[items.len().saturating_sub(k)..]
}

fn name<'a>(bb: &'a Blackboard, id: &'a PersonaId) -> &'a str {
    bb.persona_name(id)
}

fn topic_line(bb: &Blackboard) -> Vec<String> {
    let Some(topic) = bb.topic() else {
        return Vec::new();
    };
    let mut lines = vec![format!("Topic: {}", topic.question)];
    if let Some(context) = topic.context.as_deref().filter(|c| !c.trim().is_empty()) {
        lines.push(format!("Background: {context}"));
    }
    lines
}

fn aspect_line(aspect: &DebateAspect) -> String {
    if aspect.description.trim().is_empty() {
        aspect.label.clone()
    } else {
        format!("{} — {}", aspect.label, aspect.description)
    }
}

fn others<'a>(bb: &'a Blackboard, me: &'a Persona) -> impl Iterator<Item = &'a Persona> {
    bb.debaters().filter(move |p| p.id != me.id)
}

fn join_names<'a>(bb: &'a Blackboard, ids: impl Iterator<Item = &'a PersonaId>) -> String {
    ids.map(|id| name(bb, id)).collect::<Vec<_>>().join(", ")
}

// ── DEBATE STATE ─────────────────────────────────────────────────────────

pub(crate) fn opening_state(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    for line in topic_line(bb) {
        draft.push(line);
    }
    // The same for every participant (who speaks is said last, in the
    // turn's instruction; the system prompt names the participants).
    draft.push("Opening statements: nothing has been said yet.".to_owned());
    if !bb.aspects().is_empty() {
        let list: Vec<String> = bb
            .aspects()
            .iter()
            .enumerate()
            .map(|(i, a)| format!("  {}. {}", i + 1, aspect_line(a)))
            .collect();
        let mut lines = vec!["Aspects to be debated:".to_owned()];
        lines.extend(list);
        let order = draft.candidates.len();
        draft.push_lines_at(&lines, order);
    }
    draft
}

/// A take's state: the topic and the aspect, the same for every take of
/// the aspect (the round and stage are said in the turn's instruction,
/// [`crate::prompts::utterance_instruction`], so that a miniround's first
/// speaker shares the previous miniround's prefix through its exchange).
pub(crate) fn take_state(bb: &Blackboard, aspect: &DebateAspect) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    for line in topic_line(bb) {
        draft.push(line);
    }
    draft.push(format!("Current aspect: {}", aspect_line(aspect)));
    draft
}

pub(crate) fn crux_state(bb: &Blackboard, claim: &LiveClaim) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    for line in topic_line(bb) {
        draft.push(line);
    }
    // Both parties' turns read it alike: the two named in the claim's order.
    draft.push(format!(
        "Crux room: {} and {} work out one disputed claim from round {}.",
        name(bb, &claim.personas[0]),
        name(bb, &claim.personas[1]),
        claim.source_round
    ));
    draft
}

pub(crate) fn closing_state(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    for line in topic_line(bb) {
        draft.push(line);
    }
    let labels: Vec<&str> = bb.aspects().iter().map(|a| a.label.as_str()).collect();
    draft.push(format!(
        "Closing statements. Aspects debated ({}): {}",
        labels.len(),
        labels.join("; ")
    ));
    draft
}

// ── WHERE EVERYONE STANDS ────────────────────────────────────────────────

/// Agreements and disagreements between `me` and `other`, from both
/// ledgers: the newest few of each, oldest first.
fn relations(bb: &Blackboard, me: &PersonaId, other: &PersonaId) -> (Vec<String>, Vec<String>) {
    let mut agree: Vec<(u32, String)> = Vec::new();
    let mut disagree: Vec<(u32, String)> = Vec::new();
    for (holder, counterpart) in [(other, me), (me, other)] {
        let Some(state) = bb.position(holder) else {
            continue;
        };
        let mut agreements: Vec<(u32, String)> = state
            .agreements
            .iter()
            .rev()
            .filter(|a| &a.with == counterpart)
            .take(RELATIONS_PER_PAIR)
            .map(|a| (a.round, a.on.clone()))
            .collect();
        agreements.reverse();
        agree.extend(agreements);
        let mut disagreements: Vec<(u32, String)> = state
            .disagreements
            .iter()
            .rev()
            .filter(|d| &d.with == counterpart)
            .take(RELATIONS_PER_PAIR)
            .map(|d| match d.intensity {
                Intensity::Strong => (d.round, format!("{} (strongly)", d.on)),
                Intensity::Mild => (d.round, d.on.clone()),
            })
            .collect();
        disagreements.reverse();
        disagree.extend(disagreements);
    }
    (newest_unique(agree), newest_unique(disagree))
}

/// Sorts by round (stable), drops repeated texts, keeps the newest few.
fn newest_unique(mut items: Vec<(u32, String)>) -> Vec<String> {
    items.sort_by_key(|(round, _)| *round);
    let mut out: Vec<String> = Vec::new();
    for (_, text) in items {
        if !out.contains(&text) {
            out.push(text);
        }
    }
    newest(&out, RELATIONS_PER_PAIR).to_vec()
}

pub(crate) fn standings(
    bb: &Blackboard,
    me: &Persona,
    scope: Scope<'_>,
    only: Option<&Persona>,
) -> Draft {
    let mut draft = Draft::new(SectionKind::WhereEveryoneStands);
    let people: Vec<&Persona> = match only {
        Some(p) => vec![p],
        None => others(bb, me).collect(),
    };
    // Each persona's lines display together (order = persona × 1000 + line),
    // but priority goes across personas: every stance first, then every
    // disagreement line, then aspect positions, agreements and concessions.
    let mut tiers: [Vec<(String, usize)>; 5] = Default::default();
    for (k, other) in people.iter().enumerate() {
        let Some(state) = bb.position(&other.id) else {
            continue;
        };
        let base = k * 1000;
        let stance = if state.overall_stance.is_empty() {
            "(no stance recorded yet)"
        } else {
            state.overall_stance.as_str()
        };
        tiers[0].push((format!("{}: {stance}", other.name), base));
        let (agree, disagree) = relations(bb, &me.id, &other.id);
        if !disagree.is_empty() {
            tiers[1].push((
                format!("  - Disagrees with you on: {}", disagree.join("; ")),
                base + 900,
            ));
        }
        for (j, aspect) in scope.aspects(bb).into_iter().enumerate() {
            if let Some(pos) = state
                .aspects
                .get(&aspect.id)
                .filter(|p| !p.position.is_empty() || !p.evidence.is_empty())
            {
                let position = if pos.position.is_empty() {
                    "(no position recorded)"
                } else {
                    pos.position.as_str()
                };
                let mut line = format!("  - On {}: {position}", aspect.label);
                if !pos.evidence.is_empty() {
                    line.push_str(&format!(
                        " (evidence: {})",
                        newest(&pos.evidence, LEDGER_ITEMS).join("; ")
                    ));
                }
                tiers[2].push((line, base + 1 + j.min(800)));
            }
        }
        if !agree.is_empty() {
            tiers[3].push((
                format!("  - Agrees with you on: {}", agree.join("; ")),
                base + 901,
            ));
        }
        if !state.concessions.is_empty() {
            let conceded: Vec<&str> = newest(&state.concessions, LEDGER_ITEMS)
                .iter()
                .map(|c| c.text.as_str())
                .collect();
            tiers[4].push((
                format!("  - Has conceded: {}", conceded.join("; ")),
                base + 902,
            ));
        }
    }
    for (text, order) in tiers.into_iter().flatten() {
        draft.push_at(text, order);
    }
    draft
}

// ── YOUR POSITION SO FAR ─────────────────────────────────────────────────

pub(crate) fn your_position(bb: &Blackboard, me: &Persona, scope: Scope<'_>) -> Draft {
    let mut draft = Draft::new(SectionKind::YourPosition);
    let Some(state) = bb.position(&me.id) else {
        return draft;
    };
    if state.overall_stance.is_empty() {
        draft.push("You have not stated an overall stance yet.");
    } else {
        draft.push(format!("You've argued: {}", state.overall_stance));
    }
    let aspects = scope.aspects(bb);
    let mut evidence: Vec<&str> = Vec::new();
    let mut challenged: Vec<&str> = Vec::new();
    for aspect in &aspects {
        if let Some(pos) = state.aspects.get(&aspect.id) {
            if !pos.position.is_empty() {
                draft.push(format!("On {}: {}", aspect.label, pos.position));
            }
            evidence.extend(
                newest(&pos.evidence, LEDGER_ITEMS)
                    .iter()
                    .map(String::as_str),
            );
            challenged.extend(
                newest(&pos.challenged, LEDGER_ITEMS)
                    .iter()
                    .map(String::as_str),
            );
        }
    }
    if !challenged.is_empty() {
        draft.push(format!(
            "Challenges you haven't answered: {}",
            challenged.join("; ")
        ));
    }
    if !evidence.is_empty() {
        draft.push(format!("Evidence you've cited: {}", evidence.join("; ")));
    }
    // During a take, the evidence cited on the other aspects too (the
    // newest first; lower priority than the aspect in hand).
    if let Scope::Aspect(current) = scope {
        let earlier: Vec<&str> = bb
            .aspects()
            .iter()
            .filter(|a| a.id != current.id)
            .filter_map(|a| state.aspects.get(&a.id))
            .flat_map(|pos| {
                newest(&pos.evidence, LEDGER_ITEMS)
                    .iter()
                    .map(String::as_str)
            })
            .collect();
        if !earlier.is_empty() {
            draft.push(format!(
                "Evidence you've cited on other aspects: {}",
                earlier.join("; ")
            ));
        }
    }
    // The passages of its own corpus it cited (checked: `evidence_cited`),
    // newest first.
    let sources = bb.sources_cited(&me.id);
    if !sources.is_empty() {
        let items: Vec<String> = sources
            .iter()
            .rev()
            .take(LEDGER_ITEMS)
            .map(|e| {
                format!(
                    "[E:{}] ({}) {}",
                    e.id,
                    e.source,
                    clip(&e.passage, SOURCE_CHARS)
                )
            })
            .collect();
        draft.push(format!("Sources you've cited: {}", items.join("; ")));
    }
    if !state.concessions.is_empty() {
        let items: Vec<&str> = state.concessions.iter().map(|c| c.text.as_str()).collect();
        draft.push(format!("You've conceded: {}", items.join("; ")));
    }
    if !state.agreements.is_empty() {
        let items: Vec<String> = newest(&state.agreements, LEDGER_ITEMS)
            .iter()
            .map(|a| format!("{} on {}", bb.persona_name(&a.with), a.on))
            .collect();
        draft.push(format!("You've agreed with: {}", items.join("; ")));
    }
    if !state.shifts.is_empty() {
        let items: Vec<&str> = state.shifts.iter().map(|s| s.text.as_str()).collect();
        draft.push(format!(
            "How your position has shifted: {}",
            items.join("; ")
        ));
    }
    draft
}

// ── OPEN DISPUTES ────────────────────────────────────────────────────────

pub(crate) fn open_disputes(bb: &Blackboard, me: &Persona) -> Draft {
    let mut draft = Draft::new(SectionKind::OpenDisputes);
    let open: Vec<(usize, &LiveClaim)> = bb
        .claims()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.status.is_open())
        .collect();
    // Claims involving the persona first, newest first within each group.
    let mut ranked = open.clone();
    ranked.sort_by_key(|(i, c)| (!c.involves(&me.id), std::cmp::Reverse(*i)));
    for (i, claim) in ranked {
        draft.push_at(
            format!(
                "• {} — {} vs {} [{}]",
                claim.claim,
                name(bb, &claim.personas[0]),
                name(bb, &claim.personas[1]),
                claim.status.label()
            ),
            i,
        );
    }
    draft
}

// ── CRUX CARDS ───────────────────────────────────────────────────────────

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 3)
        .map(str::to_lowercase)
        .collect()
}

pub(crate) fn crux_cards(bb: &Blackboard, related_to: Option<&LiveClaim>) -> Draft {
    let mut draft = Draft::new(SectionKind::CruxCards);
    let cards = bb.crux_cards();
    let mut ranked: Vec<(usize, u64)> = match related_to {
        None => (0..cards.len()).rev().map(|i| (i, 0)).collect(),
        Some(claim) => {
            let claim_words = words(&claim.claim);
            let mut scored: Vec<(usize, u64)> = cards
                .iter()
                .enumerate()
                .filter(|(_, card)| card.claim.as_ref() != Some(&claim.id))
                .filter_map(|(i, card)| {
                    let shared = card
                        .positions
                        .iter()
                        .filter(|p| claim.involves(&p.persona))
                        .count() as u64;
                    let overlap = words(&card.question).intersection(&claim_words).count() as u64;
                    let score = shared * 10 + overlap * 3;
                    (score > 0).then_some((i, score))
                })
                .collect();
            scored.sort_by_key(|(i, score)| (std::cmp::Reverse(*score), std::cmp::Reverse(*i)));
            scored
        }
    };
    for (i, _) in ranked.drain(..) {
        let card = &cards[i];
        let mut block = vec![format!(
            "• {} [{}; {}]",
            card.question,
            card.disagreement_type.label(),
            if card.resolved {
                "resolved"
            } else {
                "unresolved"
            }
        )];
        for p in &card.positions {
            block.push(format!(
                "  {}: {} — {} (would change their mind: {})",
                name(bb, &p.persona),
                p.stance.label(),
                p.reasoning,
                p.falsifier
            ));
        }
        if !card.diagnosis.is_empty() {
            block.push(format!("  Diagnosis: {}", card.diagnosis));
        }
        draft.push_lines_at(&block, i);
    }
    draft
}

// ── EARLIER ROUNDS ───────────────────────────────────────────────────────

pub(crate) fn earlier_rounds(bb: &Blackboard, except: Option<&AspectId>) -> Draft {
    let mut draft = Draft::new(SectionKind::EarlierRounds);
    for (i, record) in bb.rounds().iter().enumerate().rev() {
        if Some(&record.aspect) == except {
            continue;
        }
        let label = bb
            .aspect(&record.aspect)
            .map_or(record.aspect.as_str(), |a| a.label.as_str());
        let mut block = vec![format!(
            "Round {} — {}: {}",
            record.round, label, record.summary
        )];
        for (persona, take) in &record.takes {
            let mut line = format!("  {}: {}", name(bb, persona), take.position);
            if !take.key_argument.is_empty() {
                line.push_str(&format!(" Key argument: {}", take.key_argument));
            }
            if !take.evidence_cited.is_empty() {
                line.push_str(&format!(" Evidence: {}.", take.evidence_cited.join("; ")));
            }
            if let Some(target) = &take.targeted_persona {
                line.push_str(&format!(" Mainly engaged {}.", name(bb, target)));
            }
            block.push(line);
        }
        draft.push_lines_at(&block, i);
    }
    draft
}

// ── EARLIER DISCUSSION (SUMMARY) ─────────────────────────────────────────

pub(crate) fn rolling_summary(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::EarlierSummary);
    if let Some(summary) = bb.latest_rolling_summary() {
        // A rolling summary folds every earlier one: it covers the
        // transcript from its start.
        draft.push(format!(
            "Messages 1–{} in brief: {}",
            summary.span.end, summary.text
        ));
    }
    draft
}

// ── MODERATOR NOTES ──────────────────────────────────────────────────────

/// At most this many of the latest moderator notes are candidates.
pub(crate) const NOTE_CANDIDATES: usize = 5;

pub(crate) fn moderator_notes(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::ModeratorNotes);
    let notes = bb.notes();
    let first = notes.len().saturating_sub(NOTE_CANDIDATES);
    // The newest note is the most important; they display in order.
    for (order, note) in notes.iter().enumerate().skip(first).rev() {
        let by = note
            .author
            .as_deref()
            .map_or_else(String::new, |a| format!(" — {a}"));
        draft.push_at(
            format!(
                "• {}{by} (after message {}; take it into account)",
                note.text, note.after_messages
            ),
            order,
        );
    }
    draft
}

// ── KEY INSIGHTS ─────────────────────────────────────────────────────────

pub(crate) fn insights(bb: &Blackboard, top: Option<usize>) -> Draft {
    let mut draft = Draft::new(SectionKind::KeyInsights);
    let mut ranked: Vec<(usize, u8)> = bb
        .reflections()
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.importance))
        .collect();
    ranked.sort_by_key(|(i, importance)| (std::cmp::Reverse(*importance), std::cmp::Reverse(*i)));
    ranked.truncate(top.unwrap_or(usize::MAX));
    for (i, _) in ranked {
        let r = &bb.reflections()[i];
        let about = join_names(bb, r.about.iter());
        let about = if about.is_empty() {
            String::new()
        } else {
            format!("; about {about}")
        };
        draft.push(format!(
            "• {} [{}{about}; importance {}]",
            r.content,
            r.kind.label(),
            r.importance
        ));
    }
    draft
}

// ── RELEVANT EARLIER CONTEXT ─────────────────────────────────────────────

pub(crate) fn memories(extras: &ContextExtras) -> Draft {
    let mut draft = Draft::new(SectionKind::RelevantEarlierContext);
    for memory in &extras.memories {
        if memory.content.trim().is_empty() {
            continue;
        }
        if memory.label.trim().is_empty() {
            draft.push(format!("• {}", memory.content.trim()));
        } else {
            draft.push(format!(
                "• ({}) {}",
                memory.label.trim(),
                memory.content.trim()
            ));
        }
    }
    draft
}

// ── EVIDENCE ─────────────────────────────────────────────────────────────

/// The persona's passages, most relevant first (the cut drops the least
/// relevant), each as `• [E:ID] (FILE) PASSAGE`.
pub(crate) fn evidence(extras: &ContextExtras) -> Draft {
    let mut draft = Draft::new(SectionKind::Evidence);
    for passage in &extras.evidence {
        if passage.content.trim().is_empty() || passage.id.trim().is_empty() {
            continue;
        }
        draft.push(format!(
            "• [E:{}] ({}) {}",
            passage.id.trim(),
            passage.source.trim(),
            passage.content.trim()
        ));
    }
    draft
}

// ── Exchanges ────────────────────────────────────────────────────────────

/// A message as the exchanges show it: its speaker's name and its text,
/// the same for every reader (no "(you)": who reads is said in the turn's
/// instruction), so that the participants' turns can share it as a prefix.
fn speaker_line(bb: &Blackboard, message: &DialogueMessage) -> String {
    let who = name(bb, &message.persona);
    match &message.kind {
        MessageKind::Critique { target } => format!(
            "{who} (critique of {}): {}",
            name(bb, target),
            message.content
        ),
        _ => format!("{who}: {}", message.content),
    }
}

/// The messages of the group `me` last spoke in (a miniround's takes, the
/// openings, a crux room: the run of messages around theirs with the same
/// kind, aspect, miniround and room) that the ledger does not hold yet:
/// the staleness a speaker accepts while that group's analysis runs.
/// Empty once they are analysed, and for a log that records no analyses
/// at all.
pub(crate) fn not_yet_analysed(bb: &Blackboard, me: &Persona) -> Draft {
    let mut draft = Draft::new(SectionKind::NotYetAnalysed);
    if bb.analyzed_turns().is_empty() {
        return draft;
    }
    let messages = bb.messages();
    let Some(last) = messages.iter().rposition(|m| m.persona == me.id) else {
        return draft;
    };
    let key = |m: &DialogueMessage| {
        (
            m.kind.clone(),
            m.aspect.clone(),
            m.miniround,
            m.crux_room.clone(),
        )
    };
    let group = key(&messages[last]);
    let start = messages[..last]
        .iter()
        .rposition(|m| key(m) != group)
        .map_or(0, |i| i + 1);
    let end = messages[last..]
        .iter()
        .position(|m| key(m) != group)
        .map_or(messages.len(), |i| last + i);
    // Newest first: the cut keeps the latest.
    for (i, message) in messages.iter().enumerate().take(end).skip(start).rev() {
        if !bb.is_analyzed(&message.id)
            && bb
                .persona(&message.persona)
                .is_some_and(Persona::is_debater)
        {
            draft.push_at(speaker_line(bb, message), i);
        }
    }
    draft
}

pub(crate) fn recent_exchange(bb: &Blackboard, aspect: &AspectId, max: usize) -> Draft {
    let mut draft = Draft::new(SectionKind::RecentExchange);
    let messages = bb.messages();
    let recent = bb
        .message_indices_for_aspect(aspect)
        .iter()
        .rev()
        .map(|&i| (i, &messages[i]))
        .filter(|(_, m)| !m.kind.is_crux())
        .take(max);
    for (i, message) in recent {
        draft.push_at(speaker_line(bb, message), i);
    }
    draft
}

pub(crate) fn the_dispute(bb: &Blackboard, claim: &LiveClaim, with_trigger: bool) -> Draft {
    let mut draft = Draft::new(SectionKind::TheDispute);
    draft.push(format!("Claim: {}", claim.claim));
    draft.push(format!(
        "{} vs {}; surfaced in round {}; status: {}",
        name(bb, &claim.personas[0]),
        name(bb, &claim.personas[1]),
        claim.source_round,
        claim.status.label()
    ));
    let sources = claim.source_messages.iter().filter_map(|id| bb.message(id));
    if with_trigger {
        for message in sources {
            draft.push(format!(
                "What triggered it ({}, round {}): {}: {}",
                message.kind.label(),
                message.round,
                name(bb, &message.persona),
                message.content
            ));
        }
    }
    if claim.status == ClaimStatus::Resolved
        && let Some(resolution) = &claim.resolution
    {
        draft.push(format!("Resolution: {resolution}"));
    }
    draft
}

pub(crate) fn crux_exchange(bb: &Blackboard, room: &CruxRoomId) -> Draft {
    let mut draft = Draft::new(SectionKind::CruxExchange);
    let messages = bb.messages();
    let indices = bb.message_indices_for_room(room);
    // Each party's opening position statement comes first, then the exchange newest first.
    let mut firsts: Vec<usize> = Vec::new();
    let mut seen: Vec<&PersonaId> = Vec::new();
    for &i in indices {
        let m = &messages[i];
        if m.kind == MessageKind::CruxPosition && !seen.contains(&&m.persona) {
            seen.push(&m.persona);
            firsts.push(i);
        }
    }
    for &i in firsts
        .iter()
        .chain(indices.iter().rev().filter(|i| !firsts.contains(i)))
    {
        draft.push_at(speaker_line(bb, &messages[i]), i);
    }
    draft
}
