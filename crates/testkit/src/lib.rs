//! # agon-testkit
//!
//! A deterministic stand-in model for tests and benchmarks (never part of
//! the product: only dev-dependencies name this crate).
//!
//! It answers every call by what the call is for: structured calls by
//! the schema asked (recognised by name), free-text calls by the step the
//! request names (`ChatRequest::purpose`: a deliberation turn, a rolling
//! summary, an evaluation, any other utterance), falling back to the
//! prompt's wording only behind a stub HTTP server, which sees no purpose.
//! What it says is read from the prompt: utterances name the speaker and
//! the instruction; structured calls return a valid payload, always judging the first two debaters
//! as disagreeing (so claims open and crux rooms run) and recording a
//! disagreement on every take (so reflections fire). Nothing depends on
//! timing, so two runs of the same debate produce the same log.
//!
//! [`ScriptedModel`] is the in-process [`ChatModel`]; [`openai_reply`] turns
//! an OpenAI chat-completions request body into the reply a server would
//! send, for stub HTTP servers.

pub mod faults;
pub mod hooked;
pub mod synthetic;

pub use hooked::{BeforeEachCall, CallKind};

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agon_llm::{
    ChatChunk, ChatModel, ChatRequest, ChatResponse, ChatStream, JsonResponse, JsonSchema,
    ProviderError, Usage,
};
use async_trait::async_trait;
use serde_json::{Value, json};

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let rest = &text[from..];
    Some(&rest[..rest.find(end)?])
}

/// The debater a turn's prompt is for: its instruction opens with
/// "You are NAME.\nWhat you stand for: …" (the system prompt is the same
/// for every debater).
pub fn debater_named(user: &str) -> Option<&str> {
    let end = user.rfind(".\nWhat you stand for: ")?;
    let start = user[..end].rfind("You are ")? + "You are ".len();
    Some(&user[start..end])
}

fn participants(text: &str) -> Vec<String> {
    between(text, "Participants: ", "\n")
        .or_else(|| between(text, "other participants: ", "."))
        .or_else(|| between(text, "pairs of participants (", ")"))
        .map(|s| {
            s.split(", ")
                .map(|n| n.trim().trim_end_matches('.').to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The schema name in a prompt-mode system prompt ("(named `x`)").
pub fn schema_name_in(system: &str) -> Option<&str> {
    between(system, "(named `", "`)")
}

/// The persona names a schema allows (the `enum` that
/// `with_persona_names` puts on `withPersona` and similar fields).
pub fn schema_persona_names(schema: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (key, child) in map {
                    if matches!(key.as_str(), "withPersona" | "persona")
                        && let Some(options) = child.get("enum").and_then(Value::as_array)
                    {
                        for name in options.iter().filter_map(Value::as_str) {
                            if !out.iter().any(|n| n == name) {
                                out.push(name.to_owned());
                            }
                        }
                    }
                    walk(child, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut out);
    out
}

/// What a free-text call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextWanted {
    /// A deliberation turn.
    Deliberation,
    /// A deliberation's rolling summary.
    RollingSummary,
    /// An evaluator's scores (`agon eval`).
    Evaluation,
    /// Any other utterance or text (a turn, a perspective summary, a
    /// plain-text synthesis).
    Utterance,
}

impl TextWanted {
    /// From the call's purpose, the step's stored spelling
    /// (`utterance (turn/3)`, `rolling_summary (12)`, …, or `evaluation`).
    fn of_purpose(purpose: &str) -> Self {
        let (step, scope) = purpose.split_once(' ').unwrap_or((purpose, ""));
        let scope = scope.trim_start_matches('(').trim_end_matches(')');
        match step {
            "utterance" => match scope.parse::<agon_core::TurnKey>() {
                Ok(agon_core::TurnKey::Turn { .. }) => Self::Deliberation,
                _ => Self::Utterance,
            },
            "rolling_summary" => Self::RollingSummary,
            "evaluation" => Self::Evaluation,
            _ => Self::Utterance,
        }
    }

    /// From the prompt's wording, for calls that carry no purpose (the
    /// request bodies stub HTTP servers receive).
    fn of_wording(user: &str) -> Self {
        if user.contains("Continue the deliberation") {
            Self::Deliberation
        } else if user.contains("Write one summary of the whole discussion") {
            Self::RollingSummary
        } else if user.contains("Score the solution from 1 to 10") {
            Self::Evaluation
        } else {
            Self::Utterance
        }
    }

    fn of(purpose: Option<&str>, user: &str) -> Self {
        purpose.map_or_else(|| Self::of_wording(user), Self::of_purpose)
    }
}

/// The first word of `text` that names a Markdown file (`limits.md`,
/// `docs/limits.md`), without surrounding punctuation.
fn markdown_path(text: &str) -> Option<&str> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-')))
        })
        .map(|w| w.trim_end_matches('.'))
        .find(|w| w.ends_with(".md") && w.len() > 3)
}

/// What the scripted model searches the debate for: the first eight words
/// of five letters or more of the prompt.
fn search_query(user: &str) -> String {
    user.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 5)
        .take(8)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The name of the offered tool (in `offers`, the tool list of a request or
/// a system prompt listing them) that ends with `__SUFFIX`: an MCP
/// server's tool, as models see it (`SERVER__TOOL`).
fn offered_mcp_tool(offers: &str, suffix: &str) -> Option<String> {
    let marker = format!("__{suffix}");
    offers.match_indices(&marker).find_map(|(at, _)| {
        let after = offers[at + marker.len()..].chars().next();
        if !matches!(after, None | Some(':' | '"' | ' ' | '\n' | ',')) {
            return None;
        }
        let start = offers[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .map_or(0, |i| i + 1);
        (start < at).then(|| offers[start..at + marker.len()].to_owned())
    })
}

/// The scripted turn of an agent with tools: when a file reader
/// (`file_read`, or an MCP server's `read_text_file`) is offered, the
/// prompt names a Markdown file and nothing was read yet, read it; when
/// `context_search` is offered and the prompt names no file, search the
/// debate once; when an MCP server's `echo` is offered, echo the prompt's
/// first words once; otherwise answer (citing the first line a read
/// returned, if any).
/// `result` is the last tool result in the conversation: the tool's name
/// and its text.
fn tool_turn(
    purpose: Option<&str>,
    system: &str,
    user: &str,
    result: Option<(&str, &str)>,
    known: &[String],
) -> Value {
    let offers_read = system.contains("- file_read:") || system.contains("\"file_read\"");
    let offers_search =
        system.contains("- context_search:") || system.contains("\"context_search\"");
    let mcp_read = offered_mcp_tool(system, "read_text_file");
    let mcp_echo = offered_mcp_tool(system, "echo");
    match (result, markdown_path(user)) {
        (None, Some(path)) if offers_read => {
            json!({"tool": "file_read", "arguments": {"path": path}})
        }
        (None, Some(path)) if mcp_read.is_some() => {
            json!({"tool": mcp_read, "arguments": {"path": path}})
        }
        (None, None) if offers_search => {
            json!({"tool": "context_search", "arguments": {"query": search_query(user)}})
        }
        (None, _) if mcp_echo.is_some() => {
            json!({"tool": mcp_echo, "arguments": {"message": search_query(user)}})
        }
        _ => {
            json!({"tool": "none", "answer": answer_after_tools(purpose, system, user, result, known)})
        }
    }
}

/// A contribution that cites what a tool returned (its first line): a
/// file's as `As PATH says: "…"`, an MCP tool's other than a file reader as
/// `The tool TOOL said: "…"`.
fn answer_after_tools(
    purpose: Option<&str>,
    system: &str,
    user: &str,
    result: Option<(&str, &str)>,
    known: &[String],
) -> String {
    let text = reply(purpose, system, user, None, known);
    let first_line =
        result.and_then(|(name, r)| Some((name, r.lines().find(|l| !l.trim().is_empty())?.trim())));
    match (first_line, markdown_path(user)) {
        (Some((_, line)), Some(path)) => format!("{text} As {path} says: \"{line}\""),
        (Some((name, line)), None) if name.contains("__") => {
            format!("{text} The tool {name} said: \"{line}\"")
        }
        _ => text,
    }
}

/// The last tool result of a constrained-JSON tool turn, written out as
/// `Tool NAME returned:` (or `failed:`) in the conversation: the name and
/// the text after it.
fn last_tool_result(user: &str) -> Option<(&str, &str)> {
    [" returned:\n", " failed:\n"]
        .into_iter()
        .filter_map(|marker| {
            let (before, after) = user.rsplit_once(marker)?;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let name = before[line_start..].strip_prefix("Tool ")?;
            Some((before.len(), (name, after)))
        })
        .max_by_key(|(at, _)| *at)
        .map(|(_, found)| found)
}

/// The scripted answer to a call: `schema` names the structured payload
/// wanted; without one, `purpose` (the step the call is for, see
/// `ChatRequest::purpose`) says which text is wanted. `known` are the
/// persona names the payload's schema allows, used when the prompt lists
/// no participants.
pub fn reply(
    purpose: Option<&str>,
    system: &str,
    user: &str,
    schema: Option<&str>,
    known: &[String],
) -> String {
    if schema == Some("tool_turn") {
        // The constrained-JSON tool turn: the last tool result is written
        // out as `Tool NAME returned:` in the conversation.
        return tool_turn(purpose, system, user, last_tool_result(user), known).to_string();
    }
    let speaker = between(user, "Current position state for ", ":\n").unwrap_or("someone");
    let on = between(user, "just said (on \"", "\"):")
        .or_else(|| between(user, "Messages (on \"", "\"):"))
        .unwrap_or("the question");
    let names = [participants(user), participants(system), known.to_vec()]
        .into_iter()
        .find(|names| !names.is_empty())
        .unwrap_or_default();
    let first = names.first().cloned().unwrap_or_else(|| "Mara".into());
    let second = names.get(1).cloned().unwrap_or_else(|| "Theo".into());
    let other = if speaker == first {
        second.clone()
    } else {
        first.clone()
    };
    let position = scripted_position(speaker, &other, on);
    let judged = json!([{
        "between": [first, second],
        "claim": format!("{first} and {second} disagree on the main trade-off"),
        "confidence": 90
    }]);
    let value = match schema {
        Some("turn_analysis") => json!({"position": position, "disagreements": judged}),
        Some("position_update") => position,
        Some("disagreement_window") => json!({"disagreements": judged}),
        Some("round_record") => json!({
            "takes": names.iter().map(|n| json!({
                "persona": n, "position": format!("{n} argued their side."),
                "keyArgument": "costs and benefits", "evidenceCited": [], "targetedPersona": null
            })).collect::<Vec<_>>(),
            "summary": "Each participant stated a position.",
            "newDisagreements": [], "shifts": []
        }),
        Some("reflection_batch") => json!({"reflections": [{
            "content": format!("{first} and {second} keep returning to the same trade-off."),
            "type": "pattern", "aboutPersonas": [first, second], "importance": 6
        }]}),
        Some("convergence_check") => json!({"converged": false, "reason": "They still disagree."}),
        Some("crux_card") => {
            let a = between(user, "Between ", " and ")
                .unwrap_or("Mara")
                .to_owned();
            let b = between(user, &format!("Between {a} and "), ".\n")
                .unwrap_or("Theo")
                .to_owned();
            json!({
                "question": "Is the trade-off worth it?",
                "positions": [
                    {"persona": a, "position": "YES", "reasoning": "benefits", "falsifier": "data"},
                    {"persona": b, "position": "NO", "reasoning": "costs", "falsifier": "data"}
                ],
                "disagreementType": "values",
                "diagnosis": "They weigh costs and benefits differently.",
                "resolved": false
            })
        }
        Some("persona_cast") => {
            // A cast of the asked size whose stances name the topic asked about.
            let topic = between(user, "Topic: \"", "\"").unwrap_or("the topic");
            let count: usize = between(user, "Cast ", " debaters")
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(3);
            let stances = [
                ("Lena", "for", "blunt, data-first"),
                ("Omar", "against", "warm, anecdotal"),
                ("Ines", "for a middle way on", "dry, precise"),
                ("Kai", "for a trial of", "curious"),
                ("Ruth", "for delaying", "patient"),
                ("Sven", "against any form of", "terse"),
            ];
            json!({"personas": stances.iter().take(count).map(|(name, stance, voice)| json!({
                "name": name,
                "contract": format!("Argues {stance} \"{topic}\"."),
                "voice": voice
            })).collect::<Vec<_>>()})
        }
        Some("aspect_plan") => json!({"aspects": [
            {"label": "Costs", "description": "Who pays."},
            {"label": "Benefits", "description": "Who gains."},
            {"label": "Fairness", "description": "Who decides."}
        ]}),
        Some("batch_position_update") => batch_updates(user),
        Some("batch_turn_analysis") => {
            // Every listed message in full, the window judged once.
            let listed = batch_messages(user);
            let updates: Vec<Value> = listed
                .iter()
                .map(|(id, name)| {
                    let other = if *name == first { &second } else { &first };
                    json!({"message": id, "position": scripted_position(name, other, on)})
                })
                .collect();
            json!({"updates": updates, "disagreements": judged})
        }
        // The first asking: two questions. A first follow-up round asks
        // one more when some question was answered (not NA); later ones
        // nothing.
        Some("clarifying_questions") if user.contains("Follow-up round 1 of") => {
            let answered = user
                .lines()
                .filter_map(|l| l.trim().strip_prefix("Answer: "))
                .any(|a| a.trim() != "NA");
            if answered {
                json!({"questions": ["Is that load sustained or a peak?"]})
            } else {
                json!({"questions": []})
            }
        }
        Some("clarifying_questions") if user.contains("Follow-up round ") => {
            json!({"questions": []})
        }
        Some("clarifying_questions") => json!({"questions": [
            "What peak load must it handle?",
            "Which clients call it?"
        ]}),
        Some("solution") => {
            // Confidence grows with the rounds: 70, 90, 100, …
            let round: i64 = between(user, "Synthesize after round ", ".")
                .and_then(|r| r.trim().parse().ok())
                .unwrap_or(1);
            // The requirements the context shows uncovered: the major ones
            // unmet, a question for each minor one.
            let uncovered = |weight: &str| -> Vec<String> {
                user.lines()
                    .filter(|l| l.contains(&format!(" ({weight}, no proposal covers it yet): ")))
                    .filter_map(|l| l.split_once(' ').map(|(id, _)| id.to_owned()))
                    .collect()
            };
            let questions: Vec<String> = uncovered("minor")
                .iter()
                .map(|id| format!("How will the design meet {id}?"))
                .collect();
            json!({
                "description": format!("The synthesized design after round {round}: a token bucket per client behind the gateway."),
                "tradeoffs": ["memory per client"],
                "recommendations": ["load-test the gateway"],
                "confidence": (50 + 20 * round).min(100),
                "unfulfilledMajorRequirements": uncovered("major"),
                "openQuestions": questions
            })
        }
        Some("requirements") => scripted_requirements(user),
        Some("listen") => scripted_listen(user),
        Some("deliberation_detection") => scripted_detection(user),
        Some("round_analysis") => round_updates(system, user),
        Some(other) => json!({"error": format!("no script for {other}")}),
        None => return text_reply(TextWanted::of(purpose, user), system, user),
    };
    let mut value = value;
    if let Some(criterion) = offered_criteria(system).into_iter().next() {
        cite(&mut value, &criterion);
    }
    value.to_string()
}

/// The criteria an evaluator is asked to score under
/// `"additional_criteria"` (a living rubric's added ones), in order.
pub fn added_criteria(user: &str) -> Vec<String> {
    let Some(rest) = user
        .find("under \"additional_criteria\": {")
        .map(|at| &user[at..])
    else {
        return Vec::new();
    };
    rest.split(": {\"score\"")
        .filter_map(|before| before.rsplit('"').nth(1))
        .filter(|name| !name.is_empty() && !name.contains("additional_criteria"))
        .map(str::to_owned)
        .collect()
}

/// The rubric criteria an analysis prompt offers a new disagreement to
/// cite ("… (0-3), from: A, B, C."), in order.
pub fn offered_criteria(system: &str) -> Vec<String> {
    between(system, "the rubric criteria it turns on (0-3) of: ", ".")
        .map(|list| list.split(", ").map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Every `newDisagreement` in `value` cites `criterion`.
fn cite(value: &mut Value, criterion: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "newDisagreement" && v.is_object() {
                    v["criteria"] = json!([criterion]);
                } else {
                    cite(v, criterion);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cite(v, criterion)),
        _ => {}
    }
}

/// The scripted text of a free-text call.
fn text_reply(wanted: TextWanted, system: &str, user: &str) -> String {
    match wanted {
        TextWanted::Deliberation => scripted_deliberation(system, user),
        TextWanted::RollingSummary => {
            let span = between(user, "\nMessages ", ":\n").unwrap_or("?");
            let lines = user.lines().filter(|l| l.starts_with('[')).count();
            format!(
                "Up to messages {span}: {lines} new messages; the group weighed the proposals \
                 on the table and kept its decisions."
            )
        }
        TextWanted::Evaluation => {
            // An evaluator (`agon eval`): regulatory compliance left out;
            // requirements fulfillment 9 when the judge left no major
            // requirement unmet, 5 when it did, left out without the
            // requirements information.
            let requirements = if user.contains("\"judgeUnfulfilledRequirements\": []") {
                json!({"score": 9, "reasoning": "every major requirement met"})
            } else if user.contains("\"judgeUnfulfilledRequirements\"") {
                json!({"score": 5, "reasoning": "the judge lists unmet requirements"})
            } else {
                Value::Null
            };
            // A living rubric's added criteria, when the prompt asks for
            // them: each scored 4.
            let added: serde_json::Map<String, Value> = added_criteria(user)
                .into_iter()
                .map(|name| (name, json!({"score": 4, "reasoning": "not addressed"})))
                .collect();
            format!(
                "Here is my evaluation:\n{}",
                json!({
                    "additional_criteria": added,
                    "evaluation": {
                        "functional_completeness": {"score": 8, "reasoning": "covers the requirements"},
                        "non_functional": {
                            "performance_scalability": {"score": 7, "reasoning": "sized"},
                            "security": {"score": 6, "reasoning": "basic controls"},
                            "maintainability_evolvability": {"score": 8, "reasoning": "modular"},
                            "testability": {"score": 7, "reasoning": "testable parts"},
                            "requirements_fulfillment": requirements
                        }
                    },
                    "overall_summary": {"strengths": "clear", "weaknesses": "thin on compliance", "overall_score": 7}
                })
            )
        }
        TextWanted::Utterance => {
            // A debater's instruction names it ("You are NAME.\nWhat you
            // stand for: …"), the judge's system prompt names it; a
            // dialectic agent's prompt closes with its name and role
            // ("You are NAME. BRIEF\n\nRound N. TASK").
            let name = debater_named(user)
                .or_else(|| between(system, "\n\nYou are ", ","))
                .or_else(|| between(system, "\n\nYou are ", "."))
                .or_else(|| between(system, "You are ", ","))
                .or_else(|| {
                    // The paragraph before the round and task.
                    let round = user.rfind("\n\nRound ")?;
                    let start = user[..round].rfind("\n\n").map_or(0, |i| i + 2);
                    between(&user[start..round], "You are ", ".")
                })
                .unwrap_or("The judge");
            let instruction = user.rsplit("\n\n").next().unwrap_or(user);
            let gist: String = instruction
                .split_whitespace()
                .take(12)
                .collect::<Vec<_>>()
                .join(" ");
            format!("{name} speaks: {gist}")
        }
    }
}

/// `words` words of plausible filler, varied by `salt`.
fn filler(words: usize, salt: u64) -> String {
    const WORDS: [&str; 24] = [
        "the",
        "budget",
        "buses",
        "riders",
        "should",
        "cost",
        "lanes",
        "safety",
        "we",
        "data",
        "evidence",
        "shows",
        "ridership",
        "fares",
        "cycling",
        "trams",
        "maintenance",
        "years",
        "council",
        "because",
        "trade-off",
        "schools",
        "night",
        "service",
    ];
    let mut x = salt.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..words)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            WORDS[(x >> 33) as usize % WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
        + "."
}

/// The turn number a deliberation context shows (`Turn N;`).
/// The turn a deliberation prompt names ("Turn N;", said last).
fn turn_in(user: &str) -> u64 {
    let at = user.rfind("Turn ").map_or(0, |i| i);
    between(&user[at..], "Turn ", ";")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0)
}

/// A listening agent's scripted answer: everyone volunteers except on
/// every fifth turn; urgency varies with the name and the turn.
fn scripted_listen(user: &str) -> Value {
    let name = between(user, "Should ", " respond now?").unwrap_or("someone");
    let turn = turn_in(user);
    let respond = !turn.is_multiple_of(5);
    let urgency = (name.len() as u64 * 3 + turn) % 11;
    json!({"respond": respond, "urgency": if respond { urgency } else { 0 }, "reason": format!("{name} has a point on turn {turn}.")})
}

/// The analysis model's reading of deliberation messages: a `[PROPOSAL]`
/// is a proposal, "I agree with Pn" a support and "I disagree with Pn" an
/// opposition.
fn scripted_detection(user: &str) -> Value {
    let entries: Vec<Value> = user
        .lines()
        .filter_map(|line| {
            let id = between(line, "[", "] ")?;
            if !id.starts_with("msg-") {
                return None;
            }
            let text = line.split_once(": \"").map_or("", |(_, t)| t);
            let proposal = text
                .split_once("[PROPOSAL]")
                .map(|(_, rest)| rest.trim().trim_end_matches('"').to_owned());
            let mut reactions = Vec::new();
            for (phrase, reaction) in [("I agree with P", "support"), ("I disagree with P", "oppose")] {
                if let Some(n) = between(text, phrase, ";").or_else(|| between(text, phrase, ":")) {
                    reactions.push(json!({"proposal": format!("P{n}"), "reaction": reaction}));
                }
            }
            Some(json!({"message": id, "proposal": proposal, "decision": null, "reactions": reactions}))
        })
        .collect();
    json!({ "messages": entries })
}

/// A deliberation turn: in a cycle of four turns, a proposal, two
/// supports of the newest active proposal, and an objection to it.
fn scripted_deliberation(system: &str, user: &str) -> String {
    let name = debater_named(user)
        .or_else(|| between(system, "You are ", ","))
        .unwrap_or("Someone");
    let turn = turn_in(user);
    // The newest active proposal is the last one listed.
    let newest = user
        .rsplit("• [P")
        .next()
        .filter(|_| user.contains("• [P"))
        .and_then(|rest| rest.split(']').next())
        .map(|n| format!("P{n}"));
    match (turn % 4, newest) {
        (1, _) | (_, None) => format!(
            "[PROPOSAL] {name} suggests plan {turn}: fund the bus lanes first and review in a year."
        ),
        (2 | 3, Some(p)) => {
            format!("I agree with {p}; it is affordable and quick. {name} backs it.")
        }
        (_, Some(p)) => {
            format!("I disagree with {p}: the problem with it is the cost. {name} wants numbers.")
        }
    }
}

/// A structured debate's scripted position update: `speaker` holds their
/// ground, cites a study and disagrees mildly with `other` on `on`.
fn scripted_position(speaker: &str, other: &str, on: &str) -> Value {
    json!({
        "overallStance": format!("{speaker} holds their ground on the question."),
        "aspectPosition": {
            "position": format!("{speaker}'s position on this aspect."),
            "evidence": [format!("a study {speaker} cited")],
            "challenged": []
        },
        "newAgreement": null,
        "newDisagreement": {"withPersona": other, "on": format!("the trade-off on {on}"), "intensity": "mild"},
        "concession": null,
        "shift": null
    })
}

/// The listed messages of a batch analysis prompt: `[msg-N] Name (…): "…"`
/// (a message's own lines, read whole, never start with a message id).
pub fn batch_messages(user: &str) -> Vec<(String, String)> {
    batch_entries(user)
        .into_iter()
        .map(|(id, name, _)| (id, name))
        .collect()
}

/// The listed messages of a batch analysis prompt with the parenthesized
/// note after the speaker's name: `(id, name, note)`.
pub fn batch_entries(user: &str) -> Vec<(String, String, String)> {
    user.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('[')?;
            let (id, rest) = rest.split_once("] ")?;
            if !id.starts_with("msg-") {
                return None;
            }
            let (name, rest) = rest.split_once(" (")?;
            let (note, _) = rest.split_once("): ")?;
            Some((id.to_owned(), name.to_owned(), note.to_owned()))
        })
        .collect()
}

/// The requirements of a problem as a scripted analysis model reads them:
/// each problem line with must, shall, required, needs to, should or has
/// to (major unless it says should), then each clarification answer (minor).
fn scripted_requirements(user: &str) -> Value {
    let problem = between(user, "Problem:\n", "\nClarifications:").unwrap_or(user);
    let mut requirements: Vec<Value> = problem
        .lines()
        .flat_map(|l| l.split(". "))
        .map(|l| l.trim().trim_end_matches('.'))
        .filter(|l| !l.is_empty() && !l.starts_with("Context:"))
        .filter_map(|l| {
            let lower = l.to_lowercase();
            let major = ["must", "shall", "required", "needs to", "has to"]
                .iter()
                .any(|k| lower.contains(k));
            (major || lower.contains("should")).then(|| {
                json!({"text": l.trim_start_matches(['-', '*']).trim(), "major": major, "source": "problem"})
            })
        })
        .collect();
    requirements.extend(
        user.lines()
            .filter_map(|l| l.strip_prefix("A: "))
            .map(|a| json!({"text": a.trim(), "major": false, "source": "clarification"})),
    );
    requirements.truncate(24);
    json!({ "requirements": requirements })
}

/// The listed requirements of a round analysis prompt (`R1 (major): …`):
/// `(id, major)`.
fn listed_requirements(system: &str) -> Vec<(String, bool)> {
    system
        .split_once("\n\nRequirements:")
        .map_or("", |(_, r)| r)
        .lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(" (")?;
            Some((id.to_owned(), rest.starts_with("major)")))
        })
        .collect()
}

/// A dialectic round analysis answer: every speaker holds their ground and
/// disagrees mildly with another speaker; a refinement that lists the
/// critiques it answers took the first one in, not the others; every
/// proposal and refinement covers the major requirements listed (not the
/// minor ones).
fn round_updates(system: &str, user: &str) -> Value {
    let listed = batch_entries(user);
    let requirements = listed_requirements(system);
    let updates: Vec<Value> = listed
        .iter()
        .map(|(id, name, note)| {
            let other = listed.iter().map(|(_, n, _)| n).find(|n| *n != name);
            let took_in = note
                .strip_prefix("refinement; answers ")
                .map(|ids| json!(ids.split(", ").take(1).collect::<Vec<_>>()));
            let proposes = note == "proposal" || note.starts_with("refinement");
            let covered: Vec<Value> = requirements
                .iter()
                .filter(|(_, major)| proposes && *major)
                .map(|(r, _)| json!({"id": r, "status": "covers", "quote": "the design meets it"}))
                .collect();
            json!({
                "message": id,
                "overallStance": format!("{name} holds their ground on the question."),
                "newAgreement": null,
                "newDisagreement": other.map(|o| json!({"withPersona": o, "on": "the main trade-off", "intensity": "mild"})),
                "concession": null,
                "shift": null,
                "importance": 5,
                "tookIn": took_in,
                "requirements": covered
            })
        })
        .collect();
    json!({"updates": updates, "summaries": summaries_due(user)})
}

/// The perspective summaries a round analysis is asked for (its
/// `Summaries due` lines, `- NAME: at most N characters; …`), by agent
/// name: each says whose it is, within its length.
pub fn summaries_due(user: &str) -> Value {
    let Some((_, due)) = user.split_once("\nSummaries due (") else {
        return json!({});
    };
    due.lines()
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split_once(": at most "))
        .map(|(name, rest)| {
            let max: usize = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(200);
            let text = format!("{name} keeps their design and answers the critiques so far.");
            (
                name.to_owned(),
                json!(text.chars().take(max).collect::<String>()),
            )
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// A batch analysis answer: every listed speaker holds their ground and
/// disagrees mildly with the first other speaker listed.
fn batch_updates(user: &str) -> Value {
    let listed = batch_messages(user);
    let updates: Vec<Value> = listed
        .iter()
        .map(|(id, name)| {
            let other = listed.iter().map(|(_, n)| n).find(|n| *n != name);
            json!({
                "message": id,
                "position": {
                    "overallStance": format!("{name} holds their ground on the question."),
                    "aspectPosition": null,
                    "newAgreement": null,
                    "newDisagreement": other.map(|o| json!({"withPersona": o, "on": "the main trade-off", "intensity": "mild"})),
                    "concession": null,
                    "shift": null
                }
            })
        })
        .collect();
    json!({"updates": updates})
}

/// The system prompt and the rest of an OpenAI chat-completions request
/// body's messages, each concatenated.
pub fn prompt_parts(request: &Value) -> (String, String) {
    let mut system = String::new();
    let mut user = String::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        let content = m["content"].as_str().unwrap_or_default();
        match m["role"].as_str() {
            Some("system") => system.push_str(content),
            _ => user.push_str(content),
        }
    }
    (system, user)
}

/// The structured payload a request asks for: the `response_format`
/// schema's name, or in prompt mode the one its system prompt names.
pub fn schema_name<'a>(request: &'a Value, system: &'a str) -> Option<&'a str> {
    request["response_format"]["json_schema"]["name"]
        .as_str()
        .or_else(|| schema_name_in(system))
}

/// An OpenAI chat-completions reply to a request body: `(content type, body)`,
/// an SSE stream when the request asks for one.
pub fn openai_reply(request: &Value) -> (&'static str, String) {
    let (system, user) = prompt_parts(request);
    if let Some(tools) = request["tools"].as_array().filter(|t| !t.is_empty()) {
        // Native tool calling: read the Markdown file the prompt names,
        // once; then answer citing it.
        let offers: Vec<&str> = tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let result = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .and_then(|m| m["content"].as_str());
        let called = messages
            .iter()
            .rev()
            .find_map(|m| m["tool_calls"][0]["function"]["name"].as_str())
            .unwrap_or("file_read");
        let result = result.map(|r| (called, r));
        let asked: String = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let listed = offers.join(" ");
        let path = markdown_path(&asked);
        let call = if result.is_some() {
            None
        } else if let (true, Some(path)) = (offers.contains(&"file_read"), &path) {
            Some(("file_read".to_owned(), json!({"path": path})))
        } else if let (Some(tool), Some(path)) =
            (offered_mcp_tool(&listed, "read_text_file"), &path)
        {
            Some((tool, json!({"path": path})))
        } else {
            offered_mcp_tool(&listed, "echo")
                .map(|tool| (tool, json!({"message": search_query(&asked)})))
        };
        if let Some((tool, arguments)) = call {
            let model = request["model"].as_str().unwrap_or("stub");
            let body = json!({"id": "c", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": tool, "arguments": arguments.to_string()}}]}}],
                "usage": {"prompt_tokens": asked.len() / 4, "completion_tokens": 10}});
            return ("application/json", body.to_string());
        }
        let text = answer_after_tools(None, &system, &asked, result, &[]);
        return openai_body(request, &text);
    }
    let schema = schema_name(request, &system);
    let known = request["response_format"]["json_schema"]["schema"].clone();
    let known = if known.is_null() {
        // Prompt mode: the schema is a JSON object in the system prompt.
        system
            .match_indices('{')
            .find_map(|(start, _)| {
                serde_json::Deserializer::from_str(&system[start..])
                    .into_iter::<Value>()
                    .next()
                    .and_then(Result::ok)
                    .filter(|v| v.get("properties").is_some())
            })
            .map(|s| schema_persona_names(&s))
            .unwrap_or_default()
    } else {
        schema_persona_names(&known)
    };
    let text = reply(None, &system, &user, schema, &known);
    openai_body(request, &text)
}

/// An OpenAI chat-completions reply carrying `text`, to the request body
/// `request`: `(content type, body)`, an SSE stream when the request asks
/// for one (for stubs that write their own answers).
pub fn openai_body(request: &Value, text: &str) -> (&'static str, String) {
    let system_and_user: usize = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["content"].as_str().unwrap_or_default().len())
        .sum();
    let model = request["model"].as_str().unwrap_or("stub");
    let usage = json!({"prompt_tokens": system_and_user / 4, "completion_tokens": text.len() / 4});
    if request["stream"].as_bool() == Some(true) {
        let mut body = String::new();
        for (i, piece) in text.split_inclusive(' ').enumerate() {
            let chunk = json!({"id": "s", "object": "chat.completion.chunk", "model": model,
                "choices": [{"index": 0, "delta": if i == 0 { json!({"role": "assistant", "content": piece}) } else { json!({"content": piece}) }, "finish_reason": null}]});
            body.push_str(&format!("data: {chunk}\n\n"));
        }
        let last = json!({"id": "s", "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage});
        body.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
        ("text/event-stream", body)
    } else {
        let body = json!({"id": "c", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage});
        ("application/json", body.to_string())
    }
}

/// The scripted model, in process, with an optional fixed delay per call.
#[derive(Debug, Default)]
pub struct ScriptedModel {
    delay: Duration,
    calls: AtomicU64,
    /// Words of filler appended to each deliberation turn (benchmarks).
    pad_words: usize,
}

impl ScriptedModel {
    /// A scripted model answering after `delay`.
    pub fn new(delay: Duration) -> Self {
        Self {
            delay,
            calls: AtomicU64::new(0),
            pad_words: 0,
        }
    }

    /// The same model, appending `words` words of varied filler to every
    /// deliberation turn (a realistic turn length for benchmarks).
    pub fn with_padding(mut self, words: usize) -> Self {
        self.pad_words = words;
        self
    }

    /// Calls answered so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    async fn answer(
        &self,
        request: &ChatRequest,
        schema: Option<&str>,
        known: &[String],
    ) -> ChatResponse {
        let started = Instant::now();
        self.calls.fetch_add(1, Ordering::Relaxed);
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let system = request.system.clone().unwrap_or_default();
        let user: String = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let purpose = request.purpose.as_deref();
        let mut content = reply(purpose, &system, &user, schema, known);
        if self.pad_words > 0
            && schema.is_none()
            && TextWanted::of(purpose, &user) == TextWanted::Deliberation
        {
            content.push(' ');
            content.push_str(&filler(self.pad_words, self.calls()));
        }
        ChatResponse {
            usage: Usage::new(
                ((system.len() + user.len()) / 4) as u64,
                (content.len() / 4) as u64,
            ),
            content,
            latency: started.elapsed(),
            provider: "scripted".into(),
            model: "scripted".into(),
            finish_reason: Some("stop".into()),
            timing: None,
        }
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model_id(&self) -> &str {
        "scripted"
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        request.validate()?;
        Ok(self.answer(&request, None, &[]).await)
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        request.validate()?;
        let response = self
            .answer(
                &request,
                Some(&schema.name),
                &schema_persona_names(&schema.schema),
            )
            .await;
        let value =
            serde_json::from_str(&response.content).map_err(|e| ProviderError::InvalidRequest {
                reason: format!("scripted reply is not JSON: {e}"),
            })?;
        Ok(JsonResponse {
            value,
            response,
            repaired: false,
        })
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        request.validate()?;
        let response = self.answer(&request, None, &[]).await;
        let mut chunks: Vec<Result<ChatChunk, ProviderError>> = response
            .content
            .split_inclusive(' ')
            .map(|p| {
                Ok(ChatChunk {
                    delta: p.to_owned(),
                    usage: None,
                    finish_reason: None,
                    model: None,
                    timing: None,
                })
            })
            .collect();
        chunks.push(Ok(ChatChunk {
            delta: String::new(),
            usage: Some(response.usage),
            finish_reason: Some("stop".into()),
            model: None,
            timing: None,
        }));
        Ok(Box::pin(futures::stream::iter(chunks)))
    }
}

/// The scripted model, keeping every prompt it is sent (its messages
/// joined by newlines, in the order of the calls): what a test reads to see
/// what reached the agents' contexts.
pub fn recording_model(
    inner: ScriptedModel,
    prompts: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) -> BeforeEachCall {
    BeforeEachCall::new(std::sync::Arc::new(inner), move |_, request| {
        let text: Vec<&str> = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        if let Ok(mut kept) = prompts.lock() {
            kept.push(text.join("\n"));
        }
        Box::pin(async {})
    })
}

/// What [`TailedModel`] appends to its `n`-th free-text answer (from 0),
/// if anything.
pub type Tail = Box<dyn Fn(u64) -> Option<String> + Send + Sync>;

/// A model whose free-text answers (complete and stream) end with what
/// `tail` gives for them, its structured answers left alone (their fields
/// are schema-checked): what tests of hostile or formatted model text run
/// a debate on.
pub struct TailedModel<M> {
    inner: M,
    tail: Tail,
    answers: AtomicU64,
}

impl<M> std::fmt::Debug for TailedModel<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TailedModel").finish_non_exhaustive()
    }
}

impl<M: ChatModel> TailedModel<M> {
    /// `inner`, its free-text answers ending with `tail`'s.
    pub fn new(inner: M, tail: Tail) -> Self {
        Self {
            inner,
            tail,
            answers: AtomicU64::new(0),
        }
    }

    fn next_tail(&self) -> Option<String> {
        (self.tail)(self.answers.fetch_add(1, Ordering::Relaxed))
    }
}

#[async_trait]
impl<M: ChatModel> ChatModel for TailedModel<M> {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        let mut response = self.inner.complete(request).await?;
        if let Some(tail) = self.next_tail() {
            response.content.push_str(&tail);
        }
        Ok(response)
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        self.inner.complete_json(request, schema).await
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        use futures::StreamExt as _;
        let mut chunks: Vec<_> = self.inner.stream(request).await?.collect().await;
        if let Some(tail) = self.next_tail() {
            // Before the last chunk, which carries the usage and the finish.
            let at = chunks.len().saturating_sub(1);
            chunks.insert(
                at,
                Ok(ChatChunk {
                    delta: tail,
                    usage: None,
                    finish_reason: None,
                    model: None,
                    timing: None,
                }),
            );
        }
        Ok(Box::pin(futures::stream::iter(chunks)))
    }
}

/// Removes from a blackboard's JSON what differs between two runs of one
/// debate with the scripted model: times, ids, usage, call metadata
/// (prompt sizes depend on how far background work got), and the agents'
/// trust standings (what other debates in the same store recorded before
/// this one started).
pub fn strip_volatile(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in [
                "time",
                "started_at",
                "finished_at",
                "usage",
                "events_applied",
                "debate",
                "meta",
                "trust_standings",
                "standings",
            ] {
                map.remove(key);
            }
            map.values_mut().for_each(strip_volatile);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_added_criteria_are_read_from_the_evaluators_prompt() {
        let user = "Score each added criterion from 1 to 10 too, in the same JSON object under \
                    \"additional_criteria\": {\"Operability\": {\"score\": 0, \"reasoning\": \"\"}, \
                    \"Cost\": {\"score\": 0, \"reasoning\": \"\"}}.";
        assert_eq!(super::added_criteria(user), ["Operability", "Cost"]);
        assert!(super::added_criteria("no rubric").is_empty());
    }

    use super::*;

    #[test]
    fn free_text_calls_are_answered_by_the_step_they_are_for() {
        // The same prompt, asked for by different steps.
        let user = "Something to say.";
        assert_eq!(
            TextWanted::of(Some("utterance (turn/3)"), user),
            TextWanted::Deliberation
        );
        assert_eq!(
            TextWanted::of(Some("utterance (opening/mara)"), user),
            TextWanted::Utterance
        );
        assert_eq!(
            TextWanted::of(Some("rolling_summary (12)"), user),
            TextWanted::RollingSummary
        );
        assert_eq!(
            TextWanted::of(Some("evaluation"), user),
            TextWanted::Evaluation
        );
        // Without a purpose (a stub HTTP server), by the wording.
        assert_eq!(
            TextWanted::of(None, "… Continue the deliberation …"),
            TextWanted::Deliberation
        );
        assert_eq!(TextWanted::of(None, user), TextWanted::Utterance);
    }
}
