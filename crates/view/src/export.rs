//! A dialectic debate's state in dialectic's `DebateState` JSON shape
//! (`id`, `problem`, `status`, `rounds[].contributions`, `summaries`,
//! `judgeSummary`, `clarifications`, `finalSolution`), with Agon's whole
//! blackboard under `agon`: what `agon debate --output FILE.json` writes,
//! and what dialectic's tools (and `agon eval`) read.

use std::collections::BTreeMap;

use agon_core::{Blackboard, DebateStatus, DebateSummary, MessageKind, PersonaId, SummaryScope};
use serde_json::{Value, json};

fn role(bb: &Blackboard, id: &PersonaId) -> String {
    bb.persona(id)
        .and_then(|p| p.specialty)
        .unwrap_or(agon_core::AgentRole::Generalist)
        .to_string()
}

fn summary(bb: &Blackboard, s: &DebateSummary, agent: &PersonaId) -> Value {
    json!({
        "agentId": agent,
        "agentRole": role(bb, agent),
        "summary": s.text,
        "metadata": {
            "beforeChars": s.before_chars,
            "afterChars": s.after_chars,
            "method": s.method,
            "timestamp": s.time,
            "latencyMs": s.latency_ms,
            "tokensUsed": s.tokens,
            "model": s.model,
            "temperature": s.temperature_centi.map(|t| f64::from(t) / 100.0),
        }
    })
}

/// The debate state in dialectic's shape, plus `agon`: the blackboard.
pub fn dialectic_state(bb: &Blackboard) -> Value {
    let judge = bb
        .personas()
        .iter()
        .find(|p| !p.is_debater())
        .map(|p| p.id.clone());
    let rounds: Vec<Value> = (1..=bb.current_round())
        .map(|round| {
            let contributions: Vec<Value> = bb
                .messages()
                .iter()
                .filter(|m| m.round == round)
                .filter_map(|m| {
                    let (kind, target) = match &m.kind {
                        MessageKind::Proposal => ("proposal", None),
                        MessageKind::Critique { target } => ("critique", Some(target)),
                        MessageKind::Refinement => ("refinement", None),
                        _ => return None,
                    };
                    let meta = m.meta.as_ref();
                    Some(json!({
                        "agentId": m.persona,
                        "agentRole": role(bb, &m.persona),
                        "type": kind,
                        "content": m.content,
                        "targetAgentId": target,
                        "metadata": {
                            "tokensUsed": meta.map(|x| x.input_tokens + x.output_tokens),
                            "latencyMs": meta.map(|x| x.latency_ms),
                            "model": meta.map(|x| x.model.clone()),
                        }
                    }))
                })
                .collect();
            let summaries: BTreeMap<String, Value> = bb
                .summaries()
                .iter()
                .filter(|s| s.round == Some(round))
                .filter_map(|s| match &s.scope {
                    SummaryScope::Persona { persona } => {
                        Some((persona.to_string(), summary(bb, s, persona)))
                    }
                    _ => None,
                })
                .collect();
            json!({"roundNumber": round, "contributions": contributions, "summaries": summaries})
        })
        .collect();
    let mut clarifications: Vec<Value> = Vec::new();
    for q in bb
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationQuestion)
    {
        let answer = bb.answer_to(&q.id).map_or("NA", |a| a.content.as_str());
        let position = clarifications
            .iter()
            .position(|c| c["agentId"] == json!(q.persona));
        let i = match position {
            Some(i) => i,
            None => {
                clarifications.push(json!({
                    "agentId": q.persona,
                    "agentName": bb.persona_name(&q.persona),
                    "role": role(bb, &q.persona),
                    "items": [],
                }));
                clarifications.len() - 1
            }
        };
        if let Some(items) = clarifications[i]["items"].as_array_mut() {
            let id = format!("q{}", items.len() + 1);
            items.push(json!({"id": id, "question": q.content, "answer": answer}));
        }
    }
    let judge_summary = judge.as_ref().and_then(|j| {
        bb.summaries()
            .iter()
            .rev()
            .find(|s| s.scope == SummaryScope::Judge)
            .map(|s| summary(bb, s, j))
    });
    let final_solution = bb.solution().map(|s| {
        json!({
            "description": s.description,
            "tradeoffs": s.tradeoffs,
            "recommendations": s.recommendations,
            "confidence": s.confidence,
            "unfulfilledMajorRequirements": s
                .unfulfilled_major_requirements
                .iter()
                .map(|r| bb.requirements().label(r))
                .collect::<Vec<_>>(),
            "openQuestions": s.open_questions,
            "unverifiedRequirements": s
                .unverified_requirements
                .iter()
                .map(|r| bb.requirements().label(r))
                .collect::<Vec<_>>(),
            "unfinishedRequirements": s.unfinished_requirements,
            "synthesizedBy": s.synthesized_by,
        })
    });
    let ledger = bb.requirements();
    let requirements: Vec<Value> = ledger
        .requirements
        .iter()
        .map(|r| {
            let covered_by = ledger.covered_by(&r.id);
            json!({
                "id": r.id,
                "text": r.text,
                "major": r.major,
                "source": r.source,
                "coveredBy": covered_by,
            })
        })
        .collect();
    let status = match bb.status() {
        DebateStatus::Finished => "completed",
        DebateStatus::Running => "running",
        DebateStatus::NotStarted => "pending",
    };
    json!({
        "id": bb.debate(),
        "problem": bb.topic().map(|t| t.question.clone()),
        "context": bb.topic().and_then(|t| t.context.clone()),
        "status": status,
        "currentRound": bb.current_round(),
        "rounds": rounds,
        "clarifications": clarifications,
        "judgeSummary": judge_summary,
        "finalSolution": final_solution,
        "requirements": requirements,
        "userFeedback": bb.user_feedback(),
        "createdAt": bb.started_at(),
        "updatedAt": bb.finished_at().or(bb.started_at()),
        "agon": bb,
    })
}
