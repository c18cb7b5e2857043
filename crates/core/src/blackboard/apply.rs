//! The state transitions: [`Blackboard::apply`] validates an event whole,
//! then changes the blackboard.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use crate::claim::{ClaimStatus, ClaimTransition, LiveClaim};
use crate::crux::CruxCard;
use crate::deliberation::{Decision, Participation, Proposal, ProposalStatus, Reaction};
use crate::detection::{AnalyzedTurn, JudgedDisagreement};
use crate::error::ApplyError;
use crate::event::{AspectPositionUpdate, DebateEvent};
use crate::ids::{AspectId, ClaimId, CruxRoomId, DebateId, MessageId, PersonaId, ProposalId};
use crate::message::{DialogueMessage, MessageKind};
use crate::persona::{DebateAspect, Persona, Topic};
use crate::position::{Agreement, Disagreement, Intensity, LedgerNote, PersonaPositionState};
use crate::reflection::Reflection;
use crate::round::RoundRecord;
use crate::summary::{DebateSummary, SummaryScope};
use crate::trigger::EpistemicWeights;

use super::{Blackboard, DebateStatus, StepRepair, StepWarning};

fn require_text(value: &str, field: &'static str, at: impl ToString) -> Result<(), ApplyError> {
    if value.trim().is_empty() {
        Err(ApplyError::EmptyField {
            field,
            at: at.to_string(),
        })
    } else {
        Ok(())
    }
}

fn push_unique(list: &mut Vec<String>, items: &[String]) {
    for item in items {
        if !list.iter().any(|existing| existing == item) {
            list.push(item.clone());
        }
    }
}

impl Blackboard {
    // ── Validation helpers ─────────────────────────────────────────────

    fn check_persona(&self, id: &PersonaId, field: &'static str) -> Result<(), ApplyError> {
        if self.index.personas.contains_key(id) {
            Ok(())
        } else {
            Err(ApplyError::UnknownPersona {
                id: id.to_string(),
                field,
            })
        }
    }

    fn check_debater(&self, id: &PersonaId, field: &'static str) -> Result<(), ApplyError> {
        self.check_persona(id, field)?;
        if self.data.positions.contains_key(id) {
            Ok(())
        } else {
            Err(ApplyError::NotADebater {
                id: id.to_string(),
                field,
            })
        }
    }

    fn check_pair(
        &self,
        persona: &PersonaId,
        with: &PersonaId,
        field: &'static str,
    ) -> Result<(), ApplyError> {
        self.check_debater(persona, field)?;
        self.check_debater(with, field)?;
        if persona == with {
            return Err(ApplyError::SelfReference {
                id: persona.to_string(),
                field,
            });
        }
        Ok(())
    }

    fn check_aspect(&self, id: &AspectId, field: &'static str) -> Result<(), ApplyError> {
        if self.index.aspects.contains_key(id) {
            Ok(())
        } else {
            Err(ApplyError::UnknownAspect {
                id: id.to_string(),
                field,
            })
        }
    }

    fn record_requirements(
        &mut self,
        requirements: &[crate::Requirement],
        method: crate::RequirementMethod,
    ) -> Result<(), ApplyError> {
        if self.data.requirements.is_recorded() {
            return Err(ApplyError::DuplicateId {
                kind: "requirements of debate",
                id: self.debate_label(),
            });
        }
        if requirements.len() > crate::MAX_REQUIREMENTS {
            return Err(ApplyError::TooManyRequirements {
                count: requirements.len(),
                max: crate::MAX_REQUIREMENTS,
            });
        }
        for (i, r) in requirements.iter().enumerate() {
            require_text(&r.id, "requirements_recorded.id", i)?;
            require_text(&r.text, "requirements_recorded.text", &r.id)?;
            if requirements[..i].iter().any(|o| o.id == r.id) {
                return Err(ApplyError::DuplicateId {
                    kind: "requirement",
                    id: r.id.clone(),
                });
            }
            if let crate::RequirementSource::Clarification {
                message: Some(message),
            } = &r.source
            {
                self.check_message(message, "requirements_recorded.source.message")?;
            }
        }
        self.data.requirements.requirements = requirements.to_vec();
        self.data.requirements.method = Some(method);
        Ok(())
    }

    fn record_coverage(
        &mut self,
        message: &MessageId,
        coverage: &[crate::Coverage],
    ) -> Result<(), ApplyError> {
        self.check_message(message, "requirements_covered.message")?;
        for c in coverage {
            if self.data.requirements.get(&c.requirement).is_none() {
                return Err(ApplyError::UnknownRequirement {
                    id: c.requirement.clone(),
                    field: "requirements_covered.coverage",
                });
            }
        }
        let Some(m) = self.message(message) else {
            return Ok(());
        };
        let (persona, round) = (m.persona.clone(), m.round);
        let proposes = matches!(m.kind, MessageKind::Proposal | MessageKind::Refinement);
        self.data
            .requirements
            .coverage
            .extend(coverage.iter().map(|c| crate::CoverageRecord {
                message: message.clone(),
                persona: persona.clone(),
                round,
                proposes,
                coverage: c.clone(),
            }));
        Ok(())
    }

    fn check_message(&self, id: &MessageId, field: &'static str) -> Result<(), ApplyError> {
        if self.index.messages.contains_key(id) {
            Ok(())
        } else {
            Err(ApplyError::UnknownMessage {
                id: id.to_string(),
                field,
            })
        }
    }

    fn check_claim(&self, id: &ClaimId, field: &'static str) -> Result<usize, ApplyError> {
        self.index
            .claims
            .get(id)
            .copied()
            .ok_or_else(|| ApplyError::UnknownClaim {
                id: id.to_string(),
                field,
            })
    }

    fn check_room(&self, id: &CruxRoomId, field: &'static str) -> Result<(), ApplyError> {
        if self.index.rooms.contains_key(id) {
            Ok(())
        } else {
            Err(ApplyError::UnknownCruxRoom {
                id: id.to_string(),
                field,
            })
        }
    }

    fn check_proposal(&self, id: &ProposalId, field: &'static str) -> Result<usize, ApplyError> {
        self.index
            .proposals
            .get(id)
            .copied()
            .ok_or_else(|| ApplyError::UnknownProposal {
                id: id.to_string(),
                field,
            })
    }

    fn debate_label(&self) -> String {
        self.data
            .debate
            .as_ref()
            .map_or_else(String::new, ToString::to_string)
    }

    // ── Apply ──────────────────────────────────────────────────────────

    /// Applies one event. Deterministic; on error the blackboard is unchanged
    /// and the error names the offending id or field.
    pub fn apply(&mut self, event: &DebateEvent) -> Result<(), ApplyError> {
        match (self.data.status, event) {
            (DebateStatus::NotStarted, DebateEvent::DebateStarted { .. }) => {}
            (DebateStatus::NotStarted, other) => {
                return Err(ApplyError::NotStarted {
                    event: other.name(),
                });
            }
            (DebateStatus::Running, DebateEvent::DebateStarted { .. }) => {
                return Err(ApplyError::AlreadyStarted {
                    debate: self.debate_label(),
                });
            }
            (DebateStatus::Running, _)
            | (DebateStatus::Finished, DebateEvent::FeedbackRecorded { .. }) => {}
            (DebateStatus::Finished, other) => {
                return Err(ApplyError::Finished {
                    debate: self.debate_label(),
                    event: other.name(),
                });
            }
        }
        match event {
            DebateEvent::DebateStarted {
                debate,
                topic,
                aspects,
                personas,
                time,
                protocol,
            } => {
                self.start(debate, topic, aspects, personas, *time)?;
                self.data.protocol = *protocol;
            }
            DebateEvent::AspectStarted { aspect, round } => self.start_aspect(aspect, *round)?,
            DebateEvent::RoundStarted { round } => {
                if *round != self.data.current_round + 1 {
                    return Err(ApplyError::RoundNotNext {
                        round: *round,
                        current: self.data.current_round,
                    });
                }
                self.data.current_round = *round;
                self.data.current_aspect = None;
            }
            DebateEvent::ClarificationRoundEnded { round, questions } => {
                let next = self.data.clarification_rounds.len() as u32 + 1;
                if *round != next || self.data.current_round != 0 {
                    return Err(ApplyError::RoundNotNext {
                        round: *round,
                        current: next - 1,
                    });
                }
                self.data.clarification_rounds.push(*questions);
            }
            DebateEvent::MessageAppended { message } => self.append_message(message)?,
            DebateEvent::PositionUpdated {
                persona,
                round,
                overall_stance,
                aspect,
            } => {
                self.update_position(persona, *round, overall_stance.as_deref(), aspect.as_ref())?
            }
            DebateEvent::AgreementRecorded {
                persona,
                with,
                on,
                round,
            } => self.record_agreement(persona, with, on, *round)?,
            DebateEvent::DisagreementRecorded {
                persona,
                with,
                on,
                intensity,
                round,
                criteria,
            } => self.record_disagreement(persona, with, on, *intensity, *round, criteria)?,
            DebateEvent::ConcessionRecorded {
                persona,
                text,
                round,
            } => self.record_note(persona, text, *round, NoteKind::Concession)?,
            DebateEvent::ShiftRecorded {
                persona,
                text,
                round,
            } => self.record_note(persona, text, *round, NoteKind::Shift)?,
            DebateEvent::ClaimOpened {
                claim,
                text,
                personas,
                round,
                source_messages,
            } => self.open_claim(claim, text, personas, *round, source_messages)?,
            DebateEvent::ClaimStatusChanged { claim, transition } => {
                self.change_claim(claim, transition)?;
            }
            DebateEvent::RoundRecorded { record } => self.record_round(record)?,
            DebateEvent::ReflectionAdded { reflection } => self.add_reflection(reflection)?,
            DebateEvent::CruxCardAdded { card } => self.add_card(card)?,
            DebateEvent::DecisionRecorded { decision } => self.record_decision(decision)?,
            DebateEvent::ProposalRecorded {
                proposal,
                proposer,
                content,
                time,
            } => self.record_proposal(proposal, proposer, content, *time)?,
            DebateEvent::ProposalReaction {
                proposal,
                persona,
                reaction,
            } => self.react(proposal, persona, *reaction)?,
            DebateEvent::ProposalStatusChanged { proposal, status } => {
                let i = self.check_proposal(proposal, "proposal_status_changed.proposal")?;
                self.data.proposals[i].status = *status;
            }
            DebateEvent::KeyContributionRecorded { persona, text } => {
                self.check_persona(persona, "key_contribution_recorded.persona")?;
                require_text(text, "text", persona)?;
                self.data
                    .participation
                    .entry(persona.clone())
                    .or_default()
                    .key_contributions
                    .push(text.clone());
            }
            DebateEvent::SummaryRecorded { summary } => self.record_summary(summary)?,
            DebateEvent::SolutionRecorded { solution } => {
                self.check_persona(&solution.synthesized_by, "solution.synthesized_by")?;
                require_text(
                    &solution.description,
                    "solution.description",
                    "solution_recorded",
                )?;
                if solution.confidence.is_some_and(|c| c > 100) {
                    return Err(ApplyError::ConfidenceOutOfRange {
                        value: solution.confidence.unwrap_or_default(),
                        field: "solution.confidence",
                    });
                }
                self.data.solutions.push(solution.clone());
            }
            DebateEvent::BudgetReached { stop } => {
                if self.data.budget_stop.is_some() {
                    return Err(ApplyError::DuplicateId {
                        kind: "budget stop of debate",
                        id: self.debate_label(),
                    });
                }
                self.data.budget_stop = Some(stop.clone());
            }
            DebateEvent::BudgetExhausted { refused, stop } => {
                if self.data.budget_exhausted.is_some() {
                    return Err(ApplyError::DuplicateId {
                        kind: "exhausted budget of debate",
                        id: self.debate_label(),
                    });
                }
                if self.data.budget_stop.is_none() {
                    self.data.budget_stop = Some(stop.clone());
                }
                self.data.budget_exhausted = Some((refused.clone(), stop.clone()));
            }
            DebateEvent::RequirementsRecorded {
                requirements,
                method,
            } => self.record_requirements(requirements, *method)?,
            DebateEvent::RequirementsCovered { message, coverage } => {
                self.record_coverage(message, coverage)?;
            }
            DebateEvent::RubricRead { rubric } => {
                if self.data.rubric.is_some() {
                    return Err(ApplyError::DuplicateId {
                        kind: "rubric of debate",
                        id: self.debate_label(),
                    });
                }
                self.data.rubric = Some(rubric.clone());
            }
            DebateEvent::TrustStandingsRead { standings } => {
                for p in standings.keys() {
                    self.check_persona(p, "trust_standings_read.standings")?;
                }
                if self.data.trust_standings.is_some() {
                    return Err(ApplyError::DuplicateId {
                        kind: "trust standings of debate",
                        id: self.debate_label(),
                    });
                }
                self.data.trust_standings = Some(standings.clone());
            }
            DebateEvent::DevilsAdvocateChosen {
                round,
                persona,
                pool,
                ..
            } => {
                self.check_persona(persona, "devils_advocate_chosen.persona")?;
                for p in pool.keys() {
                    self.check_persona(p, "devils_advocate_chosen.pool")?;
                }
                if self.data.devils_advocates.contains_key(round) {
                    return Err(ApplyError::DuplicateId {
                        kind: "devil's advocate of round",
                        id: round.to_string(),
                    });
                }
                self.data.devils_advocates.insert(*round, persona.clone());
            }
            DebateEvent::CritiquesJudged {
                refinement,
                critiques,
            } => {
                self.check_message(refinement, "critiques_judged.refinement")?;
                for c in critiques {
                    self.check_message(&c.critique, "critiques_judged.critiques")?;
                }
                for c in critiques {
                    self.data
                        .critique_impacts
                        .insert(c.critique.clone(), c.addressed);
                }
            }
            DebateEvent::DeliberationDetected { messages } => {
                for m in messages {
                    self.check_message(m, "deliberation_detected.messages")?;
                }
                self.data.detected.extend(messages.iter().cloned());
            }
            DebateEvent::SpeakersEvaluated { turn, bids } => {
                for bid in bids {
                    self.check_persona(&bid.persona, "speakers_evaluated.bids.persona")?;
                    if bid.urgency > crate::deliberation::MAX_URGENCY {
                        return Err(ApplyError::UrgencyOutOfRange {
                            persona: bid.persona.to_string(),
                            value: bid.urgency,
                        });
                    }
                }
                if self.data.bids.contains_key(turn) {
                    return Err(ApplyError::DuplicateId {
                        kind: "speaker bids of turn",
                        id: turn.to_string(),
                    });
                }
                self.data.bids.insert(*turn, bids.clone());
            }
            DebateEvent::StepFailed { step, reason, time } => {
                if let Some(message) = step.message() {
                    self.check_message(message, "step_failed.message")?;
                }
                self.data.warnings.push(StepWarning {
                    step: step.clone(),
                    reason: reason.clone(),
                    time: *time,
                });
            }
            DebateEvent::TurnAnalyzed {
                message,
                disagreements,
                window_end,
                ..
            } => self.record_analysis(message, disagreements, *window_end)?,
            DebateEvent::OutputRepaired { step, notes } => {
                require_text(&notes.join(""), "notes", "output_repaired")?;
                for note in notes {
                    require_text(note, "notes", "output_repaired")?;
                }
                if let Some(message) = step.message() {
                    self.check_message(message, "output_repaired.message")?;
                }
                self.data.repairs.push(StepRepair {
                    step: step.clone(),
                    notes: notes.clone(),
                });
            }
            DebateEvent::ToolCalled {
                turn,
                persona,
                call,
                name,
                arguments,
                ok,
                result,
            } => {
                self.check_persona(persona, "tool_called.persona")?;
                require_text(name, "name", "tool_called")?;
                self.data.tool_calls.push(super::ToolCallRecord {
                    turn: turn.clone(),
                    persona: persona.clone(),
                    call: *call,
                    name: name.clone(),
                    arguments: arguments.clone(),
                    ok: *ok,
                    result: result.clone(),
                });
            }
            DebateEvent::EvidenceCited {
                message,
                persona,
                cited,
                rejected,
            } => {
                self.check_message(message, "evidence_cited.message")?;
                let speaker = self
                    .index
                    .messages
                    .get(message)
                    .map(|&i| &self.data.messages[i].persona);
                if speaker != Some(persona) {
                    return Err(ApplyError::NotTheSpeaker {
                        message: message.to_string(),
                        persona: persona.to_string(),
                    });
                }
                for e in cited {
                    require_text(&e.id, "cited.id", "evidence_cited")?;
                    require_text(&e.passage, "cited.passage", "evidence_cited")?;
                }
                let mut cited = cited.clone();
                for e in &mut cited {
                    if let Some((cut, _)) = e
                        .passage
                        .char_indices()
                        .nth(crate::evidence::MAX_PASSAGE_CHARS)
                    {
                        e.passage.truncate(cut);
                    }
                }
                self.data.citations.push(crate::evidence::EvidenceCitation {
                    message: message.clone(),
                    persona: persona.clone(),
                    cited,
                    rejected: rejected.clone(),
                });
            }
            DebateEvent::UsageRecorded {
                role,
                model,
                calls,
                input_tokens,
                output_tokens,
                cached_input_tokens,
                cache_write_tokens,
                cost_micro_usd,
                cost_without_cache_micro_usd,
            } => {
                require_text(role.as_str(), "role", "usage_recorded")?;
                let totals = self
                    .data
                    .usage
                    .entry(role.clone())
                    .or_default()
                    .entry(model.clone())
                    .or_default();
                totals.calls += calls;
                totals.input_tokens += input_tokens;
                totals.output_tokens += output_tokens;
                totals.cached_input_tokens += cached_input_tokens;
                totals.cache_write_tokens += cache_write_tokens;
                match cost_micro_usd {
                    Some(c) => {
                        totals.cost_micro_usd += c;
                        totals.cost_without_cache_micro_usd +=
                            cost_without_cache_micro_usd.unwrap_or(*c);
                    }
                    None => totals.unpriced |= *calls > 0,
                }
            }
            DebateEvent::NoteAdded { text, author, time } => {
                require_text(text, "text", "note_added")?;
                let chars = text.chars().count();
                if chars > crate::steering::MAX_NOTE_CHARS {
                    return Err(ApplyError::NoteTooLong {
                        chars,
                        max: crate::steering::MAX_NOTE_CHARS,
                    });
                }
                self.data.notes.push(crate::steering::ModeratorNote {
                    text: text.clone(),
                    author: author.clone(),
                    time: *time,
                    after_messages: self.data.messages.len(),
                });
            }
            DebateEvent::DebatePaused { .. } | DebateEvent::DebateResumed { .. } => {
                let pause = matches!(event, DebateEvent::DebatePaused { .. });
                if self.data.paused == pause {
                    return Err(ApplyError::PauseState {
                        debate: self.debate_label(),
                        state: if pause {
                            "already paused"
                        } else {
                            "not paused"
                        },
                        event: event.name(),
                    });
                }
                self.data.paused = pause;
            }
            DebateEvent::FeedbackRecorded { value, .. } => {
                if !matches!(value, 1 | -1) {
                    return Err(ApplyError::FeedbackOutOfRange { value: *value });
                }
                self.data.user_feedback = Some(*value);
            }
            DebateEvent::DebateFinished { time } => {
                self.data.paused = false;
                self.data.status = DebateStatus::Finished;
                self.data.finished_at = Some(*time);
            }
        }
        self.data.events_applied += 1;
        Ok(())
    }

    fn record_analysis(
        &mut self,
        message: &MessageId,
        disagreements: &[JudgedDisagreement],
        window_end: bool,
    ) -> Result<(), ApplyError> {
        self.check_message(message, "turn_analyzed.message")?;
        if self.index.analyzed.contains(message) {
            return Err(ApplyError::DuplicateId {
                kind: "turn analysis",
                id: message.to_string(),
            });
        }
        for judged in disagreements {
            let [a, b] = &judged.personas;
            self.check_pair(a, b, "turn_analyzed.disagreements.personas")?;
            require_text(&judged.claim, "disagreements.claim", message)?;
            if judged.confidence > 100 {
                return Err(ApplyError::ConfidenceOutOfRange {
                    field: "turn_analyzed.disagreements.confidence",
                    value: judged.confidence,
                });
            }
        }
        self.index.analyzed.insert(message.clone());
        self.data.analyzed.push(AnalyzedTurn {
            message: message.clone(),
            disagreements: disagreements.to_vec(),
            window_end,
        });
        Ok(())
    }

    fn start(
        &mut self,
        debate: &DebateId,
        topic: &Topic,
        aspects: &[DebateAspect],
        personas: &[Persona],
        time: DateTime<Utc>,
    ) -> Result<(), ApplyError> {
        require_text(debate.as_str(), "debate", "debate_started")?;
        require_text(&topic.question, "topic.question", debate)?;
        let mut seen = HashSet::new();
        for persona in personas {
            require_text(persona.id.as_str(), "persona.id", debate)?;
            require_text(&persona.name, "persona.name", &persona.id)?;
            if !seen.insert(&persona.id) {
                return Err(ApplyError::DuplicateId {
                    kind: "persona",
                    id: persona.id.to_string(),
                });
            }
        }
        if !personas.iter().any(Persona::is_debater) {
            return Err(ApplyError::EmptyField {
                field: "personas (at least one debater)",
                at: debate.to_string(),
            });
        }
        let mut seen = HashSet::new();
        for aspect in aspects {
            require_text(aspect.id.as_str(), "aspect.id", debate)?;
            require_text(&aspect.label, "aspect.label", &aspect.id)?;
            if !seen.insert(&aspect.id) {
                return Err(ApplyError::DuplicateId {
                    kind: "aspect",
                    id: aspect.id.to_string(),
                });
            }
        }
        self.data.debate = Some(debate.clone());
        self.data.topic = Some(topic.clone());
        self.data.aspects = aspects.to_vec();
        self.data.personas = personas.to_vec();
        self.data.status = DebateStatus::Running;
        self.data.started_at = Some(time);
        for persona in personas {
            if persona.is_debater() {
                self.data
                    .positions
                    .insert(persona.id.clone(), PersonaPositionState::default());
            }
            self.data
                .participation
                .insert(persona.id.clone(), Participation::default());
        }
        self.index
            .index_frame(&self.data.personas, &self.data.aspects);
        Ok(())
    }

    fn start_aspect(&mut self, aspect: &AspectId, round: u32) -> Result<(), ApplyError> {
        self.check_aspect(aspect, "aspect_started.aspect")?;
        if round <= self.data.current_round {
            return Err(ApplyError::RoundOutOfOrder {
                aspect: aspect.to_string(),
                round,
                current: self.data.current_round,
            });
        }
        self.data.current_round = round;
        self.data.current_aspect = Some(aspect.clone());
        Ok(())
    }

    fn append_message(&mut self, message: &DialogueMessage) -> Result<(), ApplyError> {
        require_text(message.id.as_str(), "message.id", "message_appended")?;
        if self.index.messages.contains_key(&message.id) {
            return Err(ApplyError::DuplicateId {
                kind: "message",
                id: message.id.to_string(),
            });
        }
        self.check_persona(&message.persona, "message.persona")?;
        require_text(&message.content, "message.content", &message.id)?;
        if let Some(aspect) = &message.aspect {
            self.check_aspect(aspect, "message.aspect")?;
        }
        if let Some(reply_to) = &message.reply_to {
            self.check_message(reply_to, "message.reply_to")?;
        }
        if let Some(room) = &message.crux_room {
            self.check_room(room, "message.crux_room")?;
        }
        if let MessageKind::Critique { target } = &message.kind {
            self.check_persona(target, "message.kind.target")?;
        }
        let position = self.data.messages.len();
        self.index.index_message(position, message);
        self.data.messages.push(message.clone());
        self.data
            .participation
            .entry(message.persona.clone())
            .or_default()
            .message_count += 1;
        Ok(())
    }

    fn update_position(
        &mut self,
        persona: &PersonaId,
        round: u32,
        overall_stance: Option<&str>,
        aspect: Option<&AspectPositionUpdate>,
    ) -> Result<(), ApplyError> {
        self.check_debater(persona, "position_updated.persona")?;
        if let Some(stance) = overall_stance {
            require_text(stance, "overall_stance", persona)?;
        }
        if let Some(update) = aspect {
            self.check_aspect(&update.aspect, "position_updated.aspect.aspect")?;
            if let Some(position) = &update.position {
                require_text(position, "aspect.position", persona)?;
            }
        }
        let Some(state) = self.data.positions.get_mut(persona) else {
            return Err(ApplyError::NotADebater {
                id: persona.to_string(),
                field: "position_updated.persona",
            });
        };
        if let Some(stance) = overall_stance {
            if state.initial_stance.is_empty() {
                state.initial_stance = stance.to_owned();
            }
            state.overall_stance = stance.to_owned();
        }
        if let Some(update) = aspect {
            let entry = state.aspects.entry(update.aspect.clone()).or_default();
            if let Some(position) = &update.position {
                entry.position.clone_from(position);
            }
            push_unique(&mut entry.evidence, &update.evidence);
            push_unique(&mut entry.challenged, &update.challenged);
            entry
                .challenged
                .retain(|challenge| !update.answered.contains(challenge));
        }
        state.last_updated_round = state.last_updated_round.max(round);
        Ok(())
    }

    fn record_agreement(
        &mut self,
        persona: &PersonaId,
        with: &PersonaId,
        on: &str,
        round: u32,
    ) -> Result<(), ApplyError> {
        self.check_pair(persona, with, "agreement_recorded")?;
        require_text(on, "agreement.on", persona)?;
        if let Some(state) = self.data.positions.get_mut(persona) {
            if !state
                .agreements
                .iter()
                .any(|a| &a.with == with && a.on == on)
            {
                state.agreements.push(Agreement {
                    with: with.clone(),
                    on: on.to_owned(),
                    round,
                });
            }
            state.last_updated_round = state.last_updated_round.max(round);
        }
        Ok(())
    }

    fn record_disagreement(
        &mut self,
        persona: &PersonaId,
        with: &PersonaId,
        on: &str,
        intensity: Intensity,
        round: u32,
        criteria: &[String],
    ) -> Result<(), ApplyError> {
        self.check_pair(persona, with, "disagreement_recorded")?;
        require_text(on, "disagreement.on", persona)?;
        let Some(state) = self.data.positions.get_mut(persona) else {
            return Ok(());
        };
        match state
            .disagreements
            .iter_mut()
            .find(|d| &d.with == with && d.on == on)
        {
            Some(existing) => {
                if intensity == Intensity::Strong {
                    existing.intensity = Intensity::Strong;
                }
                for c in criteria {
                    if !existing.criteria.contains(c) {
                        existing.criteria.push(c.clone());
                    }
                }
            }
            None => {
                state.disagreements.push(Disagreement {
                    with: with.clone(),
                    on: on.to_owned(),
                    intensity,
                    round,
                    criteria: criteria.to_vec(),
                });
                self.data.weight_since_reflection += EpistemicWeights::DISAGREEMENT;
            }
        }
        state.last_updated_round = state.last_updated_round.max(round);
        Ok(())
    }

    fn record_note(
        &mut self,
        persona: &PersonaId,
        text: &str,
        round: u32,
        kind: NoteKind,
    ) -> Result<(), ApplyError> {
        self.check_debater(persona, kind.field())?;
        require_text(text, kind.field(), persona)?;
        let Some(state) = self.data.positions.get_mut(persona) else {
            return Ok(());
        };
        let (notes, weight) = match kind {
            NoteKind::Concession => (&mut state.concessions, EpistemicWeights::CONCESSION),
            NoteKind::Shift => (&mut state.shifts, EpistemicWeights::SHIFT),
        };
        if !notes.iter().any(|n| n.text == text) {
            notes.push(LedgerNote {
                text: text.to_owned(),
                round,
            });
            self.data.weight_since_reflection += weight;
        }
        state.last_updated_round = state.last_updated_round.max(round);
        Ok(())
    }

    fn open_claim(
        &mut self,
        claim: &ClaimId,
        text: &str,
        personas: &[PersonaId; 2],
        round: u32,
        source_messages: &[MessageId],
    ) -> Result<(), ApplyError> {
        require_text(claim.as_str(), "claim", "claim_opened")?;
        if self.index.claims.contains_key(claim) {
            return Err(ApplyError::DuplicateId {
                kind: "claim",
                id: claim.to_string(),
            });
        }
        require_text(text, "claim.text", claim)?;
        self.check_pair(&personas[0], &personas[1], "claim_opened.personas")?;
        for message in source_messages {
            self.check_message(message, "claim_opened.source_messages")?;
        }
        self.index
            .claims
            .insert(claim.clone(), self.data.claims.len());
        self.data.claims.push(LiveClaim {
            id: claim.clone(),
            claim: text.to_owned(),
            personas: personas.clone(),
            status: ClaimStatus::Active,
            source_round: round,
            source_messages: source_messages.to_vec(),
            crux_room: None,
            resolution: None,
            card: None,
        });
        Ok(())
    }

    fn change_claim(
        &mut self,
        claim: &ClaimId,
        transition: &ClaimTransition,
    ) -> Result<(), ApplyError> {
        let i = self.check_claim(claim, "claim_status_changed.claim")?;
        let from = self.data.claims[i].status;
        let to = transition.target();
        let legal = matches!(
            (from, to),
            (ClaimStatus::Active, _)
                | (
                    ClaimStatus::InCruxRoom,
                    ClaimStatus::Resolved | ClaimStatus::Abandoned
                )
        );
        if !legal {
            return Err(ApplyError::IllegalClaimTransition {
                claim: claim.to_string(),
                from,
                to,
            });
        }
        match transition {
            ClaimTransition::InCruxRoom { room } => {
                require_text(room.as_str(), "room", claim)?;
                if self.index.rooms.contains_key(room) {
                    return Err(ApplyError::DuplicateId {
                        kind: "crux room",
                        id: room.to_string(),
                    });
                }
                self.index.rooms.insert(room.clone(), i);
                self.data.claims[i].crux_room = Some(room.clone());
            }
            ClaimTransition::Resolved { resolution } => {
                self.data.claims[i].resolution = Some(resolution.clone());
            }
            ClaimTransition::Abandoned { reason } => {
                self.data.claims[i].resolution = Some(reason.clone());
            }
        }
        self.data.claims[i].status = to;
        Ok(())
    }

    fn record_round(&mut self, record: &RoundRecord) -> Result<(), ApplyError> {
        self.check_aspect(&record.aspect, "round_recorded.aspect")?;
        if self
            .data
            .rounds
            .iter()
            .any(|r| r.aspect == record.aspect && r.round == record.round)
        {
            return Err(ApplyError::DuplicateId {
                kind: "round record",
                id: format!("{}#{}", record.aspect, record.round),
            });
        }
        for (persona, take) in &record.takes {
            self.check_persona(persona, "round_recorded.takes")?;
            if let Some(target) = &take.targeted_persona {
                self.check_persona(target, "round_recorded.takes.targeted_persona")?;
            }
        }
        self.data.rounds.push(record.clone());
        Ok(())
    }

    fn add_reflection(&mut self, reflection: &Reflection) -> Result<(), ApplyError> {
        require_text(reflection.id.as_str(), "reflection.id", "reflection_added")?;
        if self.index.reflections.contains(reflection.id.as_str()) {
            return Err(ApplyError::DuplicateId {
                kind: "reflection",
                id: reflection.id.to_string(),
            });
        }
        require_text(&reflection.content, "reflection.content", &reflection.id)?;
        if !(1..=10).contains(&reflection.importance) {
            return Err(ApplyError::ImportanceOutOfRange {
                id: reflection.id.to_string(),
                value: reflection.importance,
            });
        }
        for persona in &reflection.about {
            self.check_persona(persona, "reflection.about")?;
        }
        for message in &reflection.source_messages {
            self.check_message(message, "reflection.source_messages")?;
        }
        self.index.reflections.insert(reflection.id.to_string());
        self.data.reflections.push(reflection.clone());
        self.data.weight_since_reflection = 0;
        Ok(())
    }

    fn add_card(&mut self, card: &CruxCard) -> Result<(), ApplyError> {
        require_text(card.id.as_str(), "card.id", "crux_card_added")?;
        if self.index.cards.contains(card.id.as_str()) {
            return Err(ApplyError::DuplicateId {
                kind: "crux card",
                id: card.id.to_string(),
            });
        }
        require_text(&card.question, "card.question", &card.id)?;
        let claim = match &card.claim {
            Some(claim) => Some(self.check_claim(claim, "crux_card.claim")?),
            None => None,
        };
        if let Some(room) = &card.room {
            self.check_room(room, "crux_card.room")?;
        }
        for position in &card.positions {
            self.check_persona(&position.persona, "crux_card.positions.persona")?;
        }
        self.index.cards.insert(card.id.to_string());
        if let Some(i) = claim {
            self.data.claims[i].card = Some(card.clone());
        }
        self.data.crux_cards.push(card.clone());
        Ok(())
    }

    fn record_decision(&mut self, decision: &Decision) -> Result<(), ApplyError> {
        require_text(decision.id.as_str(), "decision.id", "decision_recorded")?;
        if self.index.decisions.contains(decision.id.as_str()) {
            return Err(ApplyError::DuplicateId {
                kind: "decision",
                id: decision.id.to_string(),
            });
        }
        require_text(&decision.outcome, "decision.outcome", &decision.id)?;
        for persona in &decision.supporting {
            self.check_persona(persona, "decision.supporting")?;
        }
        if let Some(message) = &decision.source_message {
            self.check_message(message, "decision.source_message")?;
        }
        self.index.decisions.insert(decision.id.to_string());
        self.data.decisions.push(decision.clone());
        Ok(())
    }

    fn record_proposal(
        &mut self,
        proposal: &ProposalId,
        proposer: &PersonaId,
        content: &str,
        time: DateTime<Utc>,
    ) -> Result<(), ApplyError> {
        require_text(proposal.as_str(), "proposal", "proposal_recorded")?;
        if self.index.proposals.contains_key(proposal) {
            return Err(ApplyError::DuplicateId {
                kind: "proposal",
                id: proposal.to_string(),
            });
        }
        self.check_persona(proposer, "proposal_recorded.proposer")?;
        require_text(content, "proposal.content", proposal)?;
        self.index
            .proposals
            .insert(proposal.clone(), self.data.proposals.len());
        self.data.proposals.push(Proposal {
            id: proposal.clone(),
            proposer: proposer.clone(),
            content: content.to_owned(),
            status: ProposalStatus::Active,
            reactions: BTreeMap::new(),
            time,
        });
        Ok(())
    }

    fn react(
        &mut self,
        proposal: &ProposalId,
        persona: &PersonaId,
        reaction: Reaction,
    ) -> Result<(), ApplyError> {
        let i = self.check_proposal(proposal, "proposal_reaction.proposal")?;
        self.check_persona(persona, "proposal_reaction.persona")?;
        self.data.proposals[i]
            .reactions
            .insert(persona.clone(), reaction);
        Ok(())
    }

    fn record_summary(&mut self, summary: &DebateSummary) -> Result<(), ApplyError> {
        if let SummaryScope::Persona { persona } = &summary.scope {
            self.check_persona(persona, "summary.scope.persona")?;
        }
        require_text(&summary.text, "summary.text", "summary_recorded")?;
        if summary.span.start > summary.span.end || summary.span.end > self.data.messages.len() {
            return Err(ApplyError::UnknownMessage {
                id: format!(
                    "#{}..#{} (transcript has {})",
                    summary.span.start,
                    summary.span.end,
                    self.data.messages.len()
                ),
                field: "summary.span",
            });
        }
        self.data.summaries.push(summary.clone());
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum NoteKind {
    Concession,
    Shift,
}

impl NoteKind {
    fn field(self) -> &'static str {
        match self {
            Self::Concession => "concession_recorded",
            Self::Shift => "shift_recorded",
        }
    }
}
