//! The dialectic protocol's prompts (seed 004): the built-in role briefs
//! (architect, performance, security, testing, KISS, data modeling, generalist), the
//! agents' system prompt, and the prompts of the clarifying questions, the
//! perspective summaries and the judge. Written for Agon; the user prompts
//! carry an assembled, token-budgeted context, never a growing history.

use agon_core::{Blackboard, MessageKind, Persona};

use super::Prompt;

/// A built-in dialectic role (the typed role a persona plays).
pub use agon_core::AgentRole as RoleKind;
pub use agon_core::UnknownRole;

/// What each built-in role brings to its prompts.
pub trait RoleBrief {
    /// The built-in system prompt of the role: what it cares about and how
    /// it argues.
    fn brief(self) -> &'static str;
    /// What the role keeps when it summarizes its history.
    fn summary_focus(self) -> &'static str;
}

impl RoleBrief for RoleKind {
    fn brief(self) -> &'static str {
        match self {
            Self::Architect => {
                "You design software systems. You reason about components and their responsibilities, \
                 interfaces and data flow, consistency and failure handling, deployment, and how the \
                 design can evolve. You name concrete technologies only where they matter, and you \
                 state the assumptions your design depends on."
            }
            Self::Performance => {
                "You are responsible for performance. You reason about latency budgets, throughput, \
                 hot paths, contention, caching, data access patterns and capacity, and you back \
                 claims with rough numbers (requests per second, bytes, milliseconds). You point out \
                 where a design will not scale and what it would cost to make it scale."
            }
            Self::Security => {
                "You are responsible for security. You reason about assets, threat actors, trust \
                 boundaries, authentication and authorization, data protection, abuse and denial of \
                 service, auditability and compliance. You rank risks by likelihood and impact and \
                 propose controls proportionate to them."
            }
            Self::Testing => {
                "You are responsible for verification. You reason about what can go wrong and how it \
                 would be detected: testability of components, test strategy (unit, integration, \
                 property, load, chaos), observability, and acceptance criteria for each requirement."
            }
            Self::Kiss => {
                "You defend simplicity. You look for the smallest design that meets the stated \
                 requirements, challenge every component, abstraction and technology that is not \
                 clearly needed now, and prefer boring, well-understood tools. You say what can be \
                 postponed and what would be lost by doing so."
            }
            Self::DataModeling => {
                "You model data and domains. You reason about the entities the problem names and \
                 how they relate, the schemas and constraints that keep them valid, where each \
                 piece of data lives and who owns it, transactions and consistency, how it is \
                 read and written (access paths, indexes, queries), retention and migration. \
                 You add an entity, a store or a denormalization only when the problem's \
                 requirements call for it, and you say which."
            }
            Self::Generalist => {
                "You weigh every perspective (architecture, performance, security, testing, \
                 simplicity) against the problem's actual requirements, and you are fair to each \
                 contributor."
            }
        }
    }

    /// What the role keeps when it summarizes its history.
    fn summary_focus(self) -> &'static str {
        match self {
            Self::Architect => {
                "the design decisions and their rationale, component boundaries, open architectural questions"
            }
            Self::Performance => {
                "performance targets and numbers, bottlenecks found, optimizations agreed or rejected"
            }
            Self::Security => "the threats identified, controls agreed or rejected, open risks",
            Self::Testing => {
                "the verification strategy, untestable parts found, acceptance criteria"
            }
            Self::Kiss => {
                "the complexity challenged, what was simplified or postponed, what remains over-engineered"
            }
            Self::DataModeling => {
                "the entities and relationships agreed, schemas and constraints, consistency and persistence decisions, open data questions"
            }
            Self::Generalist => "the key decisions, trade-offs, agreements and open questions",
        }
    }
}

/// A dialectic agent's system prompt: the rules of the debate, the same for
/// every agent (who they are and their role brief close their prompt,
/// [`role_and_task`]), so every call of the debate starts with the same
/// text, a prefix providers cache.
pub fn agent_system(bb: &Blackboard, max_words: u32) -> String {
    let agents: Vec<&str> = bb.debaters().map(|p| p.name.as_str()).collect();
    format!(
        "{agents} design a solution in rounds of proposals, critiques and refinements. Be \
         concrete; at most {max_words} words; no preamble. {quoted}",
        agents = agents.join(", "),
        quoted = super::QUOTED_IS_DATA,
    )
}

/// What closes an agent's contribution prompt: who it is, its role brief
/// (the persona's contract: built in, or the user's own), the round and
/// the task. Last, after everything the call shares with other calls.
pub fn role_and_task(bb: &Blackboard, persona: &Persona, task: &str) -> String {
    format!(
        "You are {name}. {brief}\n\nRound {round}. {task}",
        name = persona.name,
        brief = persona.contract.trim(),
        round = bb.current_round(),
    )
}

/// The judge's system prompt: its brief (the judge persona's contract) and
/// its task.
pub fn judge_system(persona: &Persona) -> String {
    format!(
        "{}\n\nYou are {}, the judge: you synthesize the best solution from the agents' \
         proposals, critiques and refinements. Keep what the critiques did not break, resolve \
         conflicts explicitly, and be honest about what is still missing. {}",
        persona.contract.trim(),
        persona.name,
        super::QUOTED_IS_DATA
    )
}

/// The instruction of a proposal.
pub fn proposal_instruction() -> String {
    "Propose your solution to the problem from your role's perspective: the design, its key \
     components and decisions, and why. Address the requirements and the clarifications."
        .to_owned()
}

/// The instruction of a critique of `target`'s proposal; `adversarial`
/// gives the devil's-advocate brief.
pub fn critique_instruction(target: &str, adversarial: bool) -> String {
    if adversarial {
        format!(
            "You are the devil's advocate this round. Argue against {target}'s proposal as hard \
             as honesty allows: its weakest assumptions, how it fails under load, attack or \
             change, and the strongest alternative. Be specific; do not invent facts."
        )
    } else {
        format!(
            "Critique {target}'s proposal from your role's perspective: what it gets right, its \
             weaknesses and risks (most serious first), and specific improvements."
        )
    }
}

/// The instruction of a refinement.
pub fn refinement_instruction() -> String {
    "Refine your proposal: answer each critique (adopt it, adapt it, or reject it with a \
     reason), then give your complete improved proposal."
        .to_owned()
}

/// Longest requirement text an instruction quotes, in characters.
const ASK_TEXT_CHARS: usize = 80;

/// What a contribution is asked about the requirements, when the debate
/// tracks any (empty otherwise): a proposal or refinement ends with a
/// "Requirements Coverage" section (dialectic 0.7); a critique starts with
/// a requirements check. Both name the requirements no proposal covers
/// yet, by id with their text (cut), once contributions were analysed:
/// the critique and refinement contexts carry no requirements section,
/// this sentence is all they need of it.
pub fn coverage_ask(bb: &Blackboard, critique: bool) -> String {
    let ledger = bb.requirements();
    let (Some(first), Some(last)) = (ledger.requirements.first(), ledger.requirements.last())
    else {
        return String::new();
    };
    let mut ask = if critique {
        " Start with a requirements check: the major requirements it misses.".to_owned()
    } else if first.id == last.id {
        format!(
            " End with a short \"Requirements Coverage\" section: how your design meets {}.",
            first.id
        )
    } else {
        format!(
            " End with a short \"Requirements Coverage\" section: how your design meets each \
             requirement ({}–{}).",
            first.id, last.id
        )
    };
    if !bb.coverage_tracked() {
        return ask;
    }
    let uncovered: Vec<String> = ledger
        .uncovered()
        .map(|r| {
            format!(
                "{} ({})",
                r.id,
                agon_extract::truncate_chars(crate::fenced(r.text.trim()).as_ref(), ASK_TEXT_CHARS)
            )
        })
        .collect();
    if !uncovered.is_empty() {
        ask.push_str(&format!(
            " No proposal covers {} yet{}",
            uncovered.join(", "),
            if critique { ": does this one?" } else { "." }
        ));
    }
    ask
}

/// The prompt reading the problem's requirements once, before round 1
/// (`requirements`): the problem and the clarification answers; `None`
/// when the debate has no problem yet.
pub fn requirements(bb: &Blackboard) -> Option<Prompt> {
    use std::fmt::Write as _;
    let topic = bb.topic()?;
    let mut user = format!("Problem:\n{}\n", crate::fenced(topic.question.trim()));
    if let Some(context) = topic.context.as_deref().filter(|c| !c.trim().is_empty()) {
        let _ = write!(user, "\nContext:\n{}\n", crate::fenced(context.trim()));
    }
    let answered: Vec<(&agon_core::DialogueMessage, &agon_core::DialogueMessage)> = bb
        .messages()
        .iter()
        .filter(|m| m.kind == agon_core::MessageKind::ClarificationQuestion)
        .filter_map(|q| bb.answer_to(&q.id).map(|a| (q, a)))
        .filter(|(_, a)| !a.content.trim().eq_ignore_ascii_case("na"))
        .collect();
    if !answered.is_empty() {
        user.push_str("\nClarifications:\n");
        for (q, a) in answered {
            let _ = writeln!(
                user,
                "Q: {}\nA: {}",
                crate::fenced(q.content.trim()),
                crate::fenced(a.content.trim())
            );
        }
    }
    Some(Prompt {
        system: "You list the requirements a solution to a design problem must meet. Read the \
                 problem and the clarification answers; list every requirement, stated or \
                 implied (a number to reach, a rule to obey, a constraint), one sentence each, \
                 most important first, without repeats. Output JSON: requirements (a list of \
                 {text, major (true when a solution that misses it fails the problem), source \
                 (\"problem\" or \"clarification\")})."
            .to_owned(),
        user,
    })
}

/// The prompt asking an agent for its clarifying questions.
pub fn clarification(
    bb: &Blackboard,
    persona: &Persona,
    max: usize,
    (round, max_rounds): (u32, u32),
) -> Prompt {
    let topic = bb.topic();
    let mut user = format!(
        "Problem:\n{}\n",
        crate::fenced(topic.map_or("", |t| t.question.as_str()))
    );
    if let Some(context) = topic.and_then(|t| t.context.as_deref()) {
        user.push_str(&format!("\nContext:\n{}\n", crate::fenced(context)));
    }
    let role = format!("\nYou are {}. {}\n", persona.name, persona.contract.trim());
    if round <= 1 {
        user.push_str(&role);
        user.push_str(&format!(
            "\nBefore the debate starts you may ask the user up to {max} clarifying questions: only \
             questions whose answers would change your design. Output JSON: questions (a list of \
             strings, most important first; an empty list if the problem is clear)."
        ));
    } else {
        user.push_str("\nQuestions asked so far, with the user's answers (NA: not answered):\n");
        let messages = bb.messages();
        for (i, q) in messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.kind == MessageKind::ClarificationQuestion)
        {
            let answer = messages
                .get(i + 1)
                .filter(|a| a.kind == MessageKind::ClarificationAnswer)
                .map_or("NA", |a| a.content.as_str());
            user.push_str(&format!(
                "- {}: {}\n  Answer: {}\n",
                bb.persona_name(&q.persona),
                crate::fenced(&q.content),
                crate::fenced(answer)
            ));
        }
        user.push_str(&role);
        user.push_str(&format!(
            "\nFollow-up round {} of at most {}: ask up to {max} follow-up questions only where \
             an answer leaves something open that would change your design; do not repeat a \
             question. Output JSON: questions (a list of strings; an empty list if nothing is \
             left to ask).",
            round - 1,
            max_rounds.saturating_sub(1)
        ));
    }
    Prompt {
        system: agent_system(bb, 150),
        user,
    }
}

/// A user's prompt template with `content` in its `{content}` placeholder,
/// or after it under `heading` when it has none.
fn fill(template: &str, content: &str, heading: &str) -> String {
    if template.contains("{content}") {
        template.replace("{content}", content)
    } else {
        format!("{}\n\n{heading}:\n{content}", template.trim())
    }
}

/// The prompt of a perspective summary: `content` is the agent's
/// assembled history; `custom` a user's summary prompt (its `{content}`
/// placeholder, if any, receives the history; otherwise the history
/// follows it).
pub fn summary(
    persona: &Persona,
    role: Option<RoleKind>,
    content: &str,
    max_chars: usize,
    custom: Option<&str>,
) -> Prompt {
    let user = match custom {
        Some(template) => fill(template, content, "History to summarize"),
        None => format!(
            "Summarize your part of the debate so far from your role's perspective, for your own \
             use in the next rounds. Keep {focus}. Keep who said what. At most {max_chars} \
             characters, plain prose.\n\nHistory to summarize:\n{content}",
            focus = role.unwrap_or(RoleKind::Generalist).summary_focus()
        ),
    };
    Prompt {
        system: format!("{}\n\nYou are {}.", persona.contract.trim(), persona.name),
        user,
    }
}

/// The prompt of the judge's summary of the final round.
pub fn judge_summary(
    judge: &Persona,
    content: &str,
    max_chars: usize,
    custom: Option<&str>,
) -> Prompt {
    let user = match custom {
        Some(template) => fill(template, content, "Content to summarize"),
        None => format!(
            "Summarize the final round's proposals and refinements for the synthesis: each \
             agent's design, the decisions they share, where they still differ, and the \
             trade-offs named. At most {max_chars} characters, plain prose.\n\nContent to \
             summarize:\n{content}"
        ),
    };
    Prompt {
        system: judge_system(judge),
        user,
    }
}

/// The judge's synthesis prompt: `context` is the judge's assembled view.
/// With `structured`, the answer is the JSON solution; otherwise plain text
/// (the fallback when the structured answer failed).
pub fn synthesis(
    judge: &Persona,
    context: &str,
    rubric: Option<&agon_core::rubric::Rubric>,
    structured: bool,
) -> Prompt {
    let ask = if structured {
        "Synthesize the best solution. Output JSON: description (the complete recommended \
         solution), tradeoffs, recommendations, confidence (0-100: how sure you are that the \
         solution is complete and sound; at most 40 if a major requirement is unmet), \
         unfulfilledMajorRequirements (the ids of the major requirements the solution does not \
         meet; empty if none), openQuestions (questions still open; empty if none)."
    } else {
        "Synthesize the best solution as plain text: the recommended design, its trade-offs, \
         recommendations, the major requirements it does not meet, and the open questions."
    };
    Prompt {
        system: judge_system(judge),
        user: format!(
            "{context}{}\n\n{ask}",
            super::rubric_section(rubric, "Judge the solution by")
        ),
    }
}

/// A perspective summary a round's analysis is asked to write, from the
/// same reading as its entries (seed 004's summary, without a second
/// reading of the round).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryAsk {
    /// Whose summary.
    pub persona: agon_core::PersonaId,
    /// Its most characters.
    pub max_chars: usize,
}

/// The ask for the summaries due, at the end of a round analysis's user
/// prompt (the system prompt stays the same in every call of a debate):
/// each agent with its focus, its length and its previous summary.
fn summaries_due(bb: &Blackboard, asks: &[SummaryAsk]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "\nSummaries due (\"summaries\", one entry each): each agent's part of the debate so \
         far, from its role's perspective, for its own use in the next rounds. Fold its previous \
         summary (when shown), its stance and the messages above; keep who said what; plain \
         prose.\n",
    );
    for ask in asks {
        let focus = bb
            .persona(&ask.persona)
            .and_then(|p| p.specialty)
            .unwrap_or(RoleKind::Generalist)
            .summary_focus();
        let _ = writeln!(
            out,
            "- {}: at most {} characters; keep {focus}.",
            bb.persona_name(&ask.persona),
            ask.max_chars
        );
        if let Some(previous) = bb.latest_summary(&agon_core::SummaryScope::Persona {
            persona: ask.persona.clone(),
        }) {
            let _ = writeln!(
                out,
                "  Previous summary (made at round {}): \"{}\"",
                previous.round.unwrap_or_default(),
                crate::fenced(previous.text.trim())
            );
        }
    }
    out
}

/// A dialectic round's analysis in one call (`round_analysis`): each
/// speaker's current stance, then every contribution of the round, whole,
/// with its id. With `impact`, each refinement names the critiques it
/// answers, and the call says which it took in (seed 003's dissent
/// impact). The instructions never change within a debate, so they are
/// the system prompt: a stable prefix providers can cache.
pub fn round_analysis(
    bb: &Blackboard,
    messages: &[agon_core::MessageId],
    impact: bool,
    summaries: &[SummaryAsk],
) -> Option<Prompt> {
    use std::fmt::Write as _;
    let listed: Vec<&agon_core::DialogueMessage> =
        messages.iter().filter_map(|id| bb.message(id)).collect();
    listed.first()?;
    let mut user = String::from("Current stances:\n");
    let mut seen: Vec<&agon_core::PersonaId> = Vec::new();
    for m in &listed {
        if seen.contains(&&m.persona) {
            continue;
        }
        seen.push(&m.persona);
        let stance = bb
            .position(&m.persona)
            .map(|p| p.overall_stance.trim())
            .filter(|s| !s.is_empty())
            .map_or_else(|| "(none yet)".to_owned(), |s| super::quote(s, 240));
        let _ = writeln!(user, "- {}: {stance}", bb.persona_name(&m.persona));
    }
    let _ = writeln!(user, "\nMessages:");
    for m in &listed {
        let what = match &m.kind {
            agon_core::MessageKind::Critique { target } => {
                format!("critique of {}'s proposal", bb.persona_name(target))
            }
            agon_core::MessageKind::Refinement if impact => {
                let answered = crate::critiques_answered(bb, m, messages);
                if answered.is_empty() {
                    "refinement".to_owned()
                } else {
                    let ids: Vec<&str> =
                        answered.iter().map(agon_core::MessageId::as_str).collect();
                    format!("refinement; answers {}", ids.join(", "))
                }
            }
            other => other.label().to_owned(),
        };
        let _ = writeln!(
            user,
            "[{}] {} ({what}): \"{}\"",
            m.id,
            bb.persona_name(&m.persona),
            crate::fenced(m.content.trim())
        );
    }
    if !summaries.is_empty() {
        user.push_str(&summaries_due(bb, summaries));
    }
    let mut system = String::from(
        "You track positions in a design debate; record only what was said. For each message, \
         one entry in \"updates\": message (its bracketed id), overallStance (the speaker's \
         updated 1-sentence stance, or null), newAgreement and newDisagreement ({withPersona, \
         on} or null), concession and shift (or null), importance (1-10)",
    );
    if impact {
        system.push_str(
            ", tookIn (for a refinement: the ids of the critiques it answers that it took in, \
             changing the proposal in response; [] if none; null for other messages)",
        );
    }
    let requirements = &bb.requirements().requirements;
    if !requirements.is_empty() {
        system.push_str(
            ", requirements (the requirements below that the message addresses: {id, status: \
             \"covers\" if it says how the requirement is met, \"weakens\" if it breaks it or \
             shows a proposal does not meet it; quote: its few words that show it}; [] if none)",
        );
    }
    system.push('.');
    system.push_str(&super::rubric_instruction(bb));
    if !requirements.is_empty() {
        system.push_str("\n\nRequirements:");
        for r in requirements {
            let _ = write!(
                system,
                "\n{} ({}): {}",
                r.id,
                r.weight(),
                crate::fenced(r.text.trim())
            );
        }
    }
    Some(Prompt { system, user })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_case_insensitively_and_unknown_roles_are_named() {
        assert_eq!("KISS".parse::<RoleKind>(), Ok(RoleKind::Kiss));
        for spelling in ["datamodeling", "data-modeling", "Data_Modeling"] {
            assert_eq!(spelling.parse::<RoleKind>(), Ok(RoleKind::DataModeling));
        }
        assert_eq!(
            serde_json::to_string(&RoleKind::DataModeling).unwrap(),
            "\"datamodeling\""
        );
        for role in RoleKind::ALL {
            assert_eq!(role.as_str().parse::<RoleKind>(), Ok(role));
            assert!(!role.brief().is_empty());
        }
        let err = "wizard".parse::<RoleKind>().unwrap_err();
        assert!(err.to_string().contains("unknown role `wizard`"), "{err}");
    }

    #[test]
    fn custom_summary_prompt_receives_the_content() {
        let p = agon_core::Persona::debater("a", "Ada", "brief", "");
        let prompt = summary(&p, None, "HISTORY", 100, Some("Sum up:\n{content}\nEnd."));
        assert_eq!(prompt.user, "Sum up:\nHISTORY\nEnd.");
        let prompt = summary(&p, Some(RoleKind::Security), "HISTORY", 100, None);
        assert!(prompt.user.contains("threats identified"));
        assert!(prompt.user.ends_with("HISTORY"));
    }
}
