//! Schema-constrained decoding with llguidance: a token trie built from the
//! GGUF vocabulary (byte-level BPE tokens mapped back to bytes; added tokens
//! marked special), and a JSON-Schema matcher whose mask is applied to the
//! logits before sampling.

use std::collections::HashMap;
use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{
    InferenceCapabilities, TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv,
};
use llguidance::{Matcher, ParserFactory};
use tokenizers::Tokenizer;

use agon_llm::JsonSchema;
use agon_llm::ProviderError;

/// GPT-2's byte-level alphabet, inverted: the character a byte is written as → the byte.
fn byte_level_decoder() -> HashMap<char, u8> {
    let mut bytes: Vec<u32> = (b'!'..=b'~')
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .map(u32::from)
        .collect();
    let mut chars = bytes.clone();
    let mut extra = 0u32;
    for b in 0u32..=255 {
        if !bytes.contains(&b) {
            bytes.push(b);
            chars.push(256 + extra);
            extra += 1;
        }
    }
    bytes
        .into_iter()
        .zip(chars)
        .filter_map(|(b, c)| Some((char::from_u32(c)?, u8::try_from(b).ok()?)))
        .collect()
}

struct Env {
    trie: TokTrie,
    tokenizer: Tokenizer,
}

impl TokenizerEnv for Env {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        let text = String::from_utf8_lossy(s);
        self.tokenizer
            .encode(text.as_ref(), false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }
}

/// Compiles JSON Schemas into token-level matchers for one vocabulary.
pub(crate) struct Guidance {
    factory: ParserFactory,
}

impl Guidance {
    /// Builds the token trie of `tokenizer` (vocabulary size `vocab`, end of
    /// turn `eot`) and the parser factory.
    pub fn new(tokenizer: &Tokenizer, vocab: usize, eot: TokenId) -> Result<Self, String> {
        let decoder = byte_level_decoder();
        let special: std::collections::HashSet<u32> = tokenizer
            .get_added_tokens_decoder()
            .keys()
            .copied()
            .collect();
        let mut words: Vec<Vec<u8>> = Vec::with_capacity(vocab);
        for id in 0..vocab as u32 {
            let Some(token) = tokenizer.id_to_token(id) else {
                words.push(Vec::new());
                continue;
            };
            let bytes: Option<Vec<u8>> = token.chars().map(|c| decoder.get(&c).copied()).collect();
            match bytes {
                Some(bytes) if !special.contains(&id) => words.push(bytes),
                _ => {
                    let mut marked = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    marked.extend_from_slice(token.as_bytes());
                    words.push(marked);
                }
            }
        }
        let mut info = TokRxInfo::new(vocab as u32, eot);
        info.tok_end_of_turn = Some(eot);
        let trie = TokTrie::from(&info, &words);
        let env: TokEnv = Arc::new(Env {
            trie,
            tokenizer: tokenizer.clone(),
        });
        Self::from_env(&env)
    }

    /// The parser factory for an already-built token environment (the
    /// llama.cpp backend builds its own from the loaded vocabulary).
    #[cfg_attr(not(feature = "llama-cpp"), allow(dead_code))]
    pub fn from_env(env: &TokEnv) -> Result<Self, String> {
        let mut factory = ParserFactory::new(
            env,
            InferenceCapabilities::default(),
            &llguidance::earley::SlicedBiasComputer::general_slices(),
        )
        .map_err(|e| e.to_string())?;
        factory.set_stderr_log_level(0);
        Ok(Self { factory })
    }

    /// A matcher for `schema` made strict (see [`strict`]); a schema
    /// llguidance cannot compile is [`ProviderError::InvalidSchema`] naming it.
    pub fn matcher(&self, schema: &JsonSchema) -> Result<Matcher, ProviderError> {
        let grammar = TopLevelGrammar::from_json_schema(strict(&schema.schema));
        let parser =
            self.factory
                .create_parser(grammar)
                .map_err(|e| ProviderError::InvalidSchema {
                    schema: schema.name.clone(),
                    message: e.to_string(),
                })?;
        Ok(Matcher::new(Ok(parser)))
    }
}

/// Longest string a small model may write in constrained JSON.
pub(crate) const MAX_STRING: u64 = 100;
/// Most items in an array of constrained JSON.
pub(crate) const MAX_ITEMS: u64 = 2;

/// The schema a small model is held to: every object lists all its
/// properties as required (nullable ones can still be `null`) and allows no
/// others, JSON whitespace is not free, strings are at most [`MAX_STRING`]
/// characters and arrays at most [`MAX_ITEMS`] items (tighter bounds than
/// the schema's own, never looser). Anything this accepts, the
/// original schema accepts too; it just leaves a tiny model no room to
/// invent keys or pad with whitespace.
pub(crate) fn strict(schema: &serde_json::Value) -> serde_json::Value {
    fn cap(map: &mut serde_json::Map<String, serde_json::Value>, key: &str, limit: u64) {
        let current = map
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(u64::MAX);
        map.insert(key.into(), serde_json::Value::from(current.min(limit)));
    }
    fn visit(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                let is_type = |map: &serde_json::Map<String, serde_json::Value>, t: &str| match map
                    .get("type")
                {
                    Some(serde_json::Value::String(s)) => s == t,
                    Some(serde_json::Value::Array(a)) => a.iter().any(|x| x == t),
                    _ => false,
                };
                if is_type(map, "string") && !map.contains_key("enum") && !map.contains_key("const")
                {
                    cap(map, "maxLength", MAX_STRING);
                }
                if is_type(map, "array") {
                    // Never below the schema's own minimum (a batch needs
                    // one entry per message).
                    let least = map
                        .get("minItems")
                        .and_then(serde_json::Value::as_u64)
                        .unwrap_or(0);
                    cap(map, "maxItems", MAX_ITEMS.max(least));
                }
                if let Some(serde_json::Value::Object(properties)) = map.get("properties") {
                    let names: Vec<serde_json::Value> = properties
                        .keys()
                        .cloned()
                        .map(serde_json::Value::String)
                        .collect();
                    map.insert("required".into(), serde_json::Value::Array(names));
                    map.entry("additionalProperties")
                        .or_insert(serde_json::Value::Bool(false));
                }
                for child in map.values_mut() {
                    visit(child);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(visit),
            _ => {}
        }
    }
    let mut strict = schema.clone();
    visit(&mut strict);
    if let serde_json::Value::Object(map) = &mut strict {
        map.insert(
            "x-guidance".into(),
            serde_json::json!({"whitespace_flexible": false}),
        );
    }
    strict
}

/// Fewest tokens constrained JSON for `schema` may be given: `floor` per
/// entry of its longest required list (a batch of three messages needs
/// room for three entries), so the grammar can always close.
pub(crate) fn json_token_floor(schema: &serde_json::Value, floor: usize) -> usize {
    fn most_items(value: &serde_json::Value) -> u64 {
        match value {
            serde_json::Value::Object(map) => map
                .get("minItems")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1)
                .max(map.values().map(most_items).max().unwrap_or(1)),
            serde_json::Value::Array(items) => items.iter().map(most_items).max().unwrap_or(1),
            _ => 1,
        }
    }
    floor * usize::try_from(most_items(schema).max(1)).unwrap_or(1)
}

/// The additive logit mask (0 allowed, −∞ not) of the matcher's next step.
pub(crate) fn logit_mask(matcher: &mut Matcher, vocab: usize) -> Result<Vec<f32>, String> {
    let allowed = matcher.compute_mask().map_err(|e| e.to_string())?;
    let mut mask = vec![f32::NEG_INFINITY; vocab];
    allowed.iter_set_entries(|i| {
        if let Some(slot) = mask.get_mut(i) {
            *slot = 0.0;
        }
    });
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_schemas_require_every_property_and_forbid_others() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "object", "properties": {"c": {"type": "integer"}}}},
            "$defs": {"D": {"type": "object", "properties": {"x": {}}, "additionalProperties": true}}
        });
        let strict = strict(&schema);
        assert_eq!(strict["required"], serde_json::json!(["a", "b"]));
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(
            strict["properties"]["b"]["required"],
            serde_json::json!(["c"])
        );
        assert_eq!(
            strict["$defs"]["D"]["additionalProperties"], true,
            "an explicit choice is kept"
        );
        assert_eq!(strict["x-guidance"]["whitespace_flexible"], false);
        assert_eq!(strict["properties"]["a"]["maxLength"], MAX_STRING);
        let tight = super::strict(
            &serde_json::json!({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 10}}),
        );
        assert_eq!(
            (
                tight["maxItems"].as_u64(),
                tight["items"]["maxLength"].as_u64()
            ),
            (Some(2), Some(10))
        );
    }

    #[test]
    fn a_required_number_of_items_survives_the_cap_and_raises_the_token_floor() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"updates": {"type": "array", "minItems": 3, "maxItems": 3,
                "items": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}}}
        });
        let strict = strict(&schema);
        assert_eq!(strict["properties"]["updates"]["maxItems"], 3);
        assert_eq!(
            strict["properties"]["updates"]["items"]["properties"]["tags"]["maxItems"],
            MAX_ITEMS
        );
        assert_eq!(json_token_floor(&schema, 512), 1_536);
        assert_eq!(
            json_token_floor(&serde_json::json!({"type": "object"}), 512),
            512
        );
    }

    #[test]
    fn the_byte_level_alphabet_covers_every_byte_once() {
        let decoder = byte_level_decoder();
        assert_eq!(decoder.len(), 256);
        assert_eq!(decoder[&'Ġ'], b' ');
        assert_eq!(decoder[&'Ċ'], b'\n');
        assert_eq!(decoder[&'a'], b'a');
    }
}
