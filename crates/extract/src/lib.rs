//! Extraction payloads: what a model returns after a message or a round,
//! as Rust types whose JSON Schema is generated from the type.
//!
//! The flow is always `parse → validate → into_events`:
//! - [`parse_payload`] turns model JSON into a payload (a typed error if the
//!   JSON does not have the payload's shape);
//! - `validate` clamps numbers, trims and bounds text, caps list lengths and
//!   drops references to unknown personas, recording each repair as a note;
//! - only a [`Validated`] payload converts into [`agon_core::DebateEvent`]s.
//!
//! The schemas carry `maxLength` / `maxItems`, so constrained decoders can keep
//! small models from rambling; `validate` enforces the same bounds for
//! providers that do not constrain output.

mod analysis;
mod cast;
mod crux;
mod dialectic;
mod listen;
mod position;
mod reflection;
mod requirements;
mod round;
mod summary;
mod text;
mod utterance;

pub use analysis::{
    AspectPayload, AspectPlan, BatchTurnAnalysis, ConvergenceCheck, DisagreementJudgmentPayload,
    DisagreementWindow, TurnAnalysis, ValidJudgments, analysis_events,
};
pub use cast::{CastPersonaPayload, MAX_CAST, MAX_NAME_CHARS, PersonaCast};
pub use crux::{CruxCardPayload, CruxPositionPayload};
pub use dialectic::{
    ClarifyingQuestions, ContributionUpdate, MAX_QUESTIONS, MIN_SUMMARY_CHARS, RoundAnalysis,
    SolutionPayload,
};
pub use listen::{
    DecisionPayload, DeliberationDetection, ListenAnswer, MessageDetection, ReactionPayload,
};
pub use position::{
    AgreementPayload, AspectPositionPayload, BatchPositionUpdate, DisagreementPayload,
    MessagePositionUpdate, PositionUpdate,
};
pub use reflection::{ReflectionBatch, ReflectionPayload};
pub use requirements::{
    COVERAGE_QUOTE_CHARS, MAJOR_KEYWORDS, RequirementPayload, RequirementSources,
    RequirementVerdict, RequirementsPayload, coverage, infer_major_requirements,
    keyword_requirements, requirement_id,
};
pub use round::{RoundRecordPayload, TakePayload};
pub use summary::{FoldedSummaries, PlainSolution, SummaryText};
pub use text::{Cleaner, Limits, content_words, junk_reason, truncate_chars};
pub use utterance::{CleanUtterance, MAX_UTTERANCE_CHARS, clean_utterance};

/// The blackboard the unit tests validate against: a debate on "t"
/// between Ada and Bo.
#[cfg(test)]
pub(crate) fn test_board() -> agon_core::Blackboard {
    let mut bb = agon_core::Blackboard::new();
    bb.apply(&agon_core::DebateEvent::DebateStarted {
        debate: "d".into(),
        topic: agon_core::Topic::new("t"),
        aspects: vec![],
        personas: vec![
            agon_core::Persona::debater("ada", "Ada", "c", "v"),
            agon_core::Persona::debater("bo", "Bo", "c", "v"),
        ],
        time: chrono::DateTime::UNIX_EPOCH,
        protocol: None,
    })
    .expect("a debate starts");
    bb
}

#[cfg(test)]
mod names_tests {
    use super::*;

    #[test]
    fn batch_message_fields_are_restricted_to_the_ids() {
        let ids = vec!["msg-3".to_owned(), "msg-4".to_owned()];
        let s =
            with_message_ids(&<BatchPositionUpdate as Payload>::json_schema(), &ids).to_string();
        assert!(s.contains(r#""message":{"enum":["msg-3","msg-4"]}"#), "{s}");
        let schema = with_message_ids(&<BatchTurnAnalysis as Payload>::json_schema(), &ids);
        assert_eq!(schema["properties"]["updates"]["minItems"], 2, "{schema}");
        assert_eq!(schema["properties"]["updates"]["maxItems"], 2, "{schema}");
    }

    #[test]
    fn persona_fields_are_restricted_to_the_names() {
        let names = vec!["Ada".to_owned(), "Bo".to_owned()];
        let s = with_persona_names(&<TurnAnalysis as Payload>::json_schema(), &names).to_string();
        assert!(s.contains(r#""enum":["Ada","Bo",null]"#), "{s}");
        assert!(s.contains(r#""enum":["Ada","Bo"]"#), "{s}");
        let c =
            with_persona_names(&<CruxCardPayload as Payload>::json_schema(), &names).to_string();
        assert!(c.contains(r#""enum":["Ada","Bo"]"#), "{c}");
    }
}

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use agon_core::Blackboard;
use agon_core::PersonaId;

/// Why a payload could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ExtractionError {
    /// The JSON does not have the payload's shape.
    #[error("{payload}: output does not match the schema: {source}")]
    Shape {
        /// Which payload.
        payload: &'static str,
        /// The parse error (names the path and the problem).
        #[source]
        source: serde_json::Error,
    },
    /// The payload parsed but is unusable even after repairs.
    #[error("{payload}: {field} {reason}")]
    Invalid {
        /// Which payload.
        payload: &'static str,
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// A payload that passed validation, with the notes of every repair made.
/// Only validated payloads convert into events.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated<T> {
    value: T,
    notes: Vec<String>,
    base: usize,
}

impl<T> Validated<T> {
    fn new(value: T, notes: Vec<String>, base: usize) -> Self {
        Self { value, notes, base }
    }

    /// The repaired payload.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// What validation changed or dropped, one line each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// What validation needs to know: the blackboard (to resolve persona names)
/// and the speaker whose message is being extracted, if any.
#[derive(Debug, Clone, Copy)]
pub struct ExtractionContext<'a> {
    blackboard: &'a Blackboard,
    speaker: Option<&'a PersonaId>,
}

impl<'a> ExtractionContext<'a> {
    /// A context over `blackboard`, without a speaker.
    pub fn new(blackboard: &'a Blackboard) -> Self {
        Self {
            blackboard,
            speaker: None,
        }
    }

    /// The same context, extracting from `speaker`'s message.
    pub fn with_speaker(mut self, speaker: &'a PersonaId) -> Self {
        self.speaker = Some(speaker);
        self
    }

    /// The blackboard.
    pub fn blackboard(&self) -> &'a Blackboard {
        self.blackboard
    }

    /// The criteria of `cited` that the debate's rubric has, spelled as it
    /// spells them, each once (at most three); the others are dropped with
    /// a note (a model may cite a criterion that is not there). Without a
    /// rubric read, nothing is kept.
    pub fn rubric_criteria(
        &self,
        cited: &[String],
        field: &str,
        notes: &mut Vec<String>,
    ) -> Vec<String> {
        if cited.is_empty() {
            return Vec::new();
        }
        let Some(rubric) = self.blackboard.rubric() else {
            notes.push(format!("{field}: no rubric in this debate; dropped"));
            return Vec::new();
        };
        let (mut known, unknown) = rubric.resolve(cited);
        for name in unknown {
            notes.push(format!(
                "{field}: `{name}` is not a criterion of rubric {} v{}; dropped",
                rubric.name, rubric.version
            ));
        }
        known.truncate(3);
        known
    }

    /// Resolves a persona reference (display name or id, any case) to a
    /// debater id. Names like "Ada (the economist)" resolve by their leading name.
    pub fn resolve_debater(&self, reference: &str) -> Option<PersonaId> {
        let reference = reference.trim();
        let found = self.blackboard.find_persona(reference).or_else(|| {
            let head = reference.split(['(', ',', ':']).next().unwrap_or(reference);
            self.blackboard.find_persona(head)
        })?;
        found.is_debater().then(|| found.id.clone())
    }

    /// Resolves a reference to a debater other than the speaker; on failure
    /// pushes a note explaining why the reference was dropped.
    fn resolve_other(
        &self,
        reference: &str,
        field: &str,
        notes: &mut Vec<String>,
    ) -> Option<PersonaId> {
        match self.resolve_debater(reference) {
            Some(id) if Some(&id) == self.speaker => {
                notes.push(format!(
                    "{field}: dropped a reference to the speaker itself ({reference:?})"
                ));
                None
            }
            Some(id) => Some(id),
            None => {
                notes.push(format!("{field}: dropped unknown persona {reference:?}"));
                None
            }
        }
    }
}

/// Parses model output into a payload; the error names the payload and the
/// JSON path that did not fit.
pub fn parse_payload<T: DeserializeOwned + Payload>(
    value: serde_json::Value,
) -> Result<T, ExtractionError> {
    serde_json::from_value(value).map_err(|source| ExtractionError::Shape {
        payload: T::NAME,
        source,
    })
}

/// Calls `edit` with the name and schema of every property of every object
/// schema in `value` (nested ones and `$defs` included).
fn edit_properties(
    value: &mut serde_json::Value,
    edit: &mut impl FnMut(&str, &mut serde_json::Value),
) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for (key, field) in props.iter_mut() {
                    edit(key, field);
                }
            }
            for child in map.values_mut() {
                edit_properties(child, edit);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| edit_properties(v, edit)),
        _ => {}
    }
}

/// The schema with every persona-reference field (`persona`, `withPersona`,
/// `targetedPersona`, and the items of `between` and `aboutPersonas`)
/// restricted to `names` (still nullable where it was). Constrained decoders
/// then cannot invent a participant; validation still resolves names.
pub fn with_persona_names(schema: &serde_json::Value, names: &[String]) -> serde_json::Value {
    use serde_json::{Value, json};
    fn restrict(field: &mut Value, names: &[String]) {
        let nullable = match field.get("type") {
            Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
            _ => field
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|t| t.get("type") == Some(&json!("null")))),
        };
        let mut options: Vec<Value> = names.iter().map(|n| json!(n)).collect();
        if nullable {
            options.push(Value::Null);
        }
        *field = json!({ "enum": options });
    }
    let mut out = schema.clone();
    if !names.is_empty() {
        edit_properties(&mut out, &mut |key, field| match key {
            "persona" | "withPersona" | "targetedPersona" => restrict(field, names),
            "between" | "aboutPersonas" => {
                if let Some(items) = field.get_mut("items") {
                    restrict(items, names);
                }
            }
            _ => {}
        });
    }
    out
}

/// The schema with every `message` field restricted to `ids` (a batch
/// analysis can then only name the messages it was given), and every list
/// of such entries holding exactly one entry per id, so a constrained
/// decoder cannot stop after the first message.
pub fn with_message_ids(schema: &serde_json::Value, ids: &[String]) -> serde_json::Value {
    let mut out = schema.clone();
    if !ids.is_empty() {
        edit_properties(&mut out, &mut |_, field| {
            let per_message = field.pointer("/items/properties/message").is_some();
            if per_message && let Some(list) = field.as_object_mut() {
                list.insert("minItems".into(), ids.len().into());
                list.insert("maxItems".into(), ids.len().into());
            }
        });
        edit_properties(&mut out, &mut |key, field| {
            if key == "message" {
                *field = serde_json::json!({ "enum": ids });
            }
        });
    }
    out
}

/// Common facts about an extraction payload.
pub trait Payload: JsonSchema {
    /// Short name used in errors and warning events ("position_update", …).
    const NAME: &'static str;

    /// The JSON Schema of the payload as sent to a model: generated from
    /// the type, then [`compact_schema`]ed (the prompts say what each field
    /// means; the schema only constrains the shape) and flattened (no
    /// `$defs`: every reference written out where it is used).
    fn json_schema() -> serde_json::Value {
        let mut schema = schemars::schema_for!(Self).to_value();
        compact_schema(&mut schema);
        flatten_schema(&mut schema);
        schema
    }
}

/// Replaces every `$ref` to the root's `$defs` with the definition itself
/// (the payloads are not recursive), writes an optional object
/// (`anyOf: [X, {"type": "null"}]`) as `X` with a nullable type, and a
/// choice of string constants (`oneOf: [{"const": …}, …]`) as an `enum`;
/// `$defs` is then dropped. The shape is the same; the text is shorter.
fn flatten_schema(schema: &mut serde_json::Value) {
    use serde_json::{Map, Value, json};
    fn flatten(value: &mut Value, defs: &Map<String, Value>) {
        let Value::Object(map) = value else {
            if let Value::Array(items) = value {
                items.iter_mut().for_each(|v| flatten(v, defs));
            }
            return;
        };
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| defs.get(name))
        {
            *value = target.clone();
            flatten(value, defs);
            return;
        }
        if let Some(Value::Array(options)) = map.get("anyOf")
            && options.len() == 2
            && let Some(null_at) = options.iter().position(|o| o == &json!({"type": "null"}))
        {
            let mut inner = options[1 - null_at].clone();
            flatten(&mut inner, defs);
            if let Some(Value::String(kind)) = inner.get("type").cloned() {
                inner["type"] = json!([kind, "null"]);
                *value = inner;
                return;
            }
        }
        if let Some(Value::Array(options)) = map.get("oneOf") {
            let consts: Option<Vec<Value>> = options
                .iter()
                .map(|o| o.get("const").filter(|c| c.is_string()).cloned())
                .collect();
            if let Some(consts) = consts {
                *value = json!({"type": "string", "enum": consts});
                return;
            }
        }
        map.values_mut().for_each(|v| flatten(v, defs));
    }
    let defs = match schema.as_object_mut().and_then(|m| m.remove("$defs")) {
        Some(Value::Object(defs)) => defs,
        _ => return,
    };
    flatten(schema, &defs);
}

/// Keywords that annotate a schema without constraining it.
const ANNOTATIONS: [&str; 5] = ["description", "title", "$schema", "default", "format"];

/// Removes the annotations of a JSON Schema (descriptions, titles,
/// defaults, formats) at every level, leaving what constrains the shape:
/// types, properties, required fields, lengths, ranges, enums. Property
/// and definition names are kept whatever they are called. This halves the
/// schema every analysis call carries (its tokens are billed as prompt).
pub fn compact_schema(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            for key in ANNOTATIONS {
                map.remove(key);
            }
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    ("properties" | "$defs", serde_json::Value::Object(named)) => {
                        named.values_mut().for_each(compact_schema);
                    }
                    (_, child) => compact_schema(child),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(compact_schema),
        _ => {}
    }
}
