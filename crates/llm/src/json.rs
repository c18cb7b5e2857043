//! Structured output: lenient JSON extraction, schema validation, and the
//! one-repair-attempt protocol shared by every provider.

use std::future::Future;

use serde_json::Value;

use crate::error::ProviderError;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, JsonResponse, JsonSchema};

/// Finds the JSON value in model text: strips code fences and takes the
/// first balanced object or array (strings and escapes respected). `None`
/// when there is no parseable value.
pub fn extract_json(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    let bytes = trimmed.as_bytes();
    let mut start = 0;
    while let Some(offset) = trimmed[start..].find(['{', '[']) {
        let open = start + offset;
        if let Some(end) = balanced_end(&bytes[open..])
            && let Ok(value) = serde_json::from_str::<Value>(&trimmed[open..open + end])
        {
            return Some(value);
        }
        start = open + 1;
    }
    None
}

/// Length of the balanced JSON value starting at `bytes[0]` (`{` or `[`).
fn balanced_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A compiled schema.
pub struct SchemaValidator {
    name: String,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("name", &self.name)
            .finish()
    }
}

impl SchemaValidator {
    /// Compiles `schema`; an invalid schema is [`ProviderError::InvalidSchema`].
    pub fn new(schema: &JsonSchema) -> Result<Self, ProviderError> {
        let validator = jsonschema::validator_for(&schema.schema).map_err(|e| {
            ProviderError::InvalidSchema {
                schema: schema.name.clone(),
                message: e.to_string(),
            }
        })?;
        Ok(Self {
            name: schema.name.clone(),
            validator,
        })
    }

    /// Every validation error, as `path: message` (empty when valid).
    pub fn errors(&self, value: &Value) -> Vec<String> {
        self.validator
            .iter_errors(value)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{path}: {e}")
            })
            .collect()
    }
}

/// What one structured attempt produced: the value the provider returned
/// (tool input, or text parsed leniently), the raw text, and the response.
pub struct Attempt {
    /// The JSON value the model produced, if any could be found.
    pub value: Option<Value>,
    /// The model's raw output (shown back to it in a repair attempt).
    pub raw: String,
    /// The call's response.
    pub response: ChatResponse,
}

/// The structured-output protocol every [`crate::ChatModel`] shares.
/// Runs `call` on `request`; if the output is missing or invalid, runs it
/// once more with the model's output and the validation errors appended,
/// then gives up with [`ProviderError::SchemaMismatch`].
pub async fn structured<F, Fut>(
    provider: &str,
    schema: &JsonSchema,
    request: ChatRequest,
    mut call: F,
) -> Result<JsonResponse, ProviderError>
where
    F: FnMut(ChatRequest) -> Fut,
    Fut: Future<Output = Result<Attempt, ProviderError>>,
{
    let validator = SchemaValidator::new(schema)?;
    let first = call(request.clone()).await?;
    let errors = check(&validator, first.value.as_ref());
    if errors.is_empty()
        && let Some(value) = first.value
    {
        return Ok(JsonResponse {
            value,
            response: first.response,
            repaired: false,
        });
    }
    let mut repair = request;
    repair
        .messages
        .push(ChatMessage::assistant(if first.raw.trim().is_empty() {
            "(empty output)".to_owned()
        } else {
            first.raw.clone()
        }));
    repair.messages.push(ChatMessage::user(format!(
        "Your output does not validate against the JSON schema `{}`:\n- {}\nReply with only the corrected JSON value.",
        schema.name,
        errors.join("\n- ")
    )));
    let second = call(repair).await?;
    let errors = check(&validator, second.value.as_ref());
    let mut response = second.response;
    response.usage += first.response.usage;
    response.latency += first.response.latency;
    match second.value {
        Some(value) if errors.is_empty() => Ok(JsonResponse {
            value,
            response,
            repaired: true,
        }),
        _ => Err(ProviderError::SchemaMismatch {
            provider: provider.to_owned(),
            schema: schema.name.clone(),
            errors,
        }),
    }
}

fn check(validator: &SchemaValidator, value: Option<&Value>) -> Vec<String> {
    match value {
        None => vec!["the output contains no JSON value".to_owned()],
        Some(value) => validator.errors(value),
    }
}

/// The request with an instruction to answer with JSON valid against
/// `schema` appended to its system prompt (for models without native
/// structured output, and to steer constrained ones).
pub fn with_schema_instruction(mut request: ChatRequest, schema: &JsonSchema) -> ChatRequest {
    let instruction = format!(
        "Reply with a single JSON value that validates against this JSON Schema (named `{}`), and nothing else:\n{}",
        schema.name,
        compact_schema(&schema.schema)
    );
    request.system = Some(match request.system.take() {
        Some(system) => format!("{system}\n\n{instruction}"),
        None => instruction,
    });
    request
}

/// The schema without what only documents it (`title`, `$schema`,
/// `description`, `default`, `format`): the constraints a model must meet,
/// in fewer prompt tokens. Property names are kept, whatever they are.
pub fn compact_schema(schema: &Value) -> Value {
    const DOCS: [&str; 5] = ["title", "$schema", "description", "default", "format"];
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !DOCS.contains(&k.as_str()))
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("properties" | "$defs" | "definitions", Value::Object(named)) => {
                            Value::Object(
                                named
                                    .iter()
                                    .map(|(name, sub)| (name.clone(), compact_schema(sub)))
                                    .collect(),
                            )
                        }
                        _ => compact_schema(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(compact_schema).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn compact_schemas_keep_constraints_and_property_names() {
        let schema = json!({
            "title": "S", "$schema": "x", "description": "doc", "type": "object",
            "properties": {
                "description": {"type": "string", "description": "the text", "maxLength": 9},
                "n": {"type": "integer", "format": "int64", "default": 1, "minimum": 0}
            },
            "$defs": {"D": {"description": "d", "enum": ["a"]}},
            "required": ["description"]
        });
        assert_eq!(
            super::compact_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "maxLength": 9},
                    "n": {"type": "integer", "minimum": 0}
                },
                "$defs": {"D": {"enum": ["a"]}},
                "required": ["description"]
            })
        );
    }

    use super::*;

    #[test]
    fn extracts_from_fences_and_prose() {
        assert_eq!(extract_json("{\"a\": 1}"), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("```json\n{\"a\": [1, 2]}\n```"),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            extract_json(
                "Sure! Here it is: {\"text\": \"a } brace and \\\" quote\"} hope that helps {"
            ),
            Some(json!({"text": "a } brace and \" quote"}))
        );
        assert_eq!(
            extract_json("[1, {\"b\": 2}] trailing"),
            Some(json!([1, {"b": 2}]))
        );
        assert_eq!(
            extract_json("{broken {\"ok\": true}"),
            Some(json!({"ok": true}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{\"unterminated\": "), None);
    }

    #[test]
    fn validation_errors_name_the_path() {
        let schema = JsonSchema::new(
            "s",
            json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}}, "required": ["n"]}),
        );
        let v = SchemaValidator::new(&schema).unwrap();
        assert!(v.errors(&json!({"n": 3})).is_empty());
        let errors = v.errors(&json!({"n": 11}));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("/n: "), "{errors:?}");
        assert!(!v.errors(&json!({})).is_empty());
    }

    #[test]
    fn an_invalid_schema_is_a_typed_error() {
        let err = SchemaValidator::new(&JsonSchema::new("bad", json!({"type": "no-such-type"})))
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::InvalidSchema { ref schema, .. } if schema == "bad"),
            "{err}"
        );
    }
}
