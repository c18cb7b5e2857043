//! The byte-level BPE tokenizer a GGUF describes in its `tokenizer.ggml.*`
//! metadata (`gpt2` models: vocabulary, merges, token types, special ids),
//! built as a Hugging Face `tokenizers` pipeline the way llama.cpp reads the
//! same keys. The caller sets the pre-tokenizer its model needs.

use std::collections::BTreeSet;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel as ByteLevelPre;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::processors::byte_level::ByteLevel as ByteLevelProcessor;
use tokenizers::processors::sequence::Sequence as ProcessorSequence;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::{AddedToken, Tokenizer};

use super::{Gguf, Value};

fn strings<'a>(gguf: &'a Gguf, key: &str) -> Result<Vec<&'a str>, String> {
    let values = gguf
        .get(key)
        .ok_or_else(|| format!("metadata `{key}` is missing"))?
        .as_array()
        .ok_or_else(|| format!("metadata `{key}` is not an array"))?;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .ok_or_else(|| format!("metadata `{key}`[{i}] is not a string"))
        })
        .collect()
}

fn id(gguf: &Gguf, key: &str) -> Option<u32> {
    gguf.get(key).and_then(Value::as_u32)
}

fn flag(gguf: &Gguf, key: &str) -> bool {
    gguf.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A post-processor adding the beginning/end tokens the file asks for.
fn template(
    tokens: &[&str],
    bos: Option<u32>,
    eos: Option<u32>,
    add_bos: bool,
    add_eos: bool,
) -> Result<Option<PostProcessorWrapper>, String> {
    let named = |id: Option<u32>, what: &str| -> Result<(String, u32), String> {
        let id = id.ok_or_else(|| format!("`add_{what}_token` is set without a {what} id"))?;
        let token = tokens
            .get(id as usize)
            .ok_or_else(|| format!("the {what} id {id} is outside the vocabulary"))?;
        Ok(((*token).to_owned(), id))
    };
    let bos = add_bos.then(|| named(bos, "bos")).transpose()?;
    let eos = add_eos.then(|| named(eos, "eos")).transpose()?;
    if bos.is_none() && eos.is_none() {
        return Ok(None);
    }
    let mut single = Vec::new();
    let mut pair = Vec::new();
    for (sequence, piece) in [(0, "$A"), (1, "$B")] {
        if let Some((token, _)) = &bos {
            pair.push(format!("{token}:{sequence}"));
        }
        pair.push(format!("{piece}:{sequence}"));
        if let Some((token, _)) = &eos {
            pair.push(format!("{token}:{sequence}"));
        }
    }
    if let Some((token, _)) = &bos {
        single.push(token.clone());
    }
    single.push("$0".to_owned());
    if let Some((token, _)) = &eos {
        single.push(token.clone());
    }
    let processor = TemplateProcessing::builder()
        .try_single(single)
        .and_then(|b| b.try_pair(pair))
        .map_err(|e| format!("bos/eos template: {e}"))?
        .special_tokens(bos.into_iter().chain(eos).collect::<Vec<_>>())
        .build()
        .map_err(|e| format!("bos/eos template: {e}"))?;
    Ok(Some(PostProcessorWrapper::Template(processor)))
}

/// The tokenizer of a `gpt2`-model GGUF: BPE over its vocabulary and
/// merges, byte-level decoding, the file's bos/eos template, and every
/// control, user-defined, unknown or unused token (types 2–5) and every
/// named special id as a special token. Errors name the metadata key.
pub(crate) fn tokenizer_from_gguf(gguf: &Gguf) -> Result<Tokenizer, String> {
    let model = gguf
        .get("tokenizer.ggml.model")
        .and_then(Value::as_str)
        .ok_or("metadata `tokenizer.ggml.model` is missing")?;
    if !model.eq_ignore_ascii_case("gpt2") {
        return Err(format!(
            "tokenizer model `{model}` is not supported (byte-level BPE, `gpt2`, is)"
        ));
    }
    let tokens = strings(gguf, "tokenizer.ggml.tokens")?;
    let vocab: tokenizers::models::bpe::Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| ((*t).to_owned(), i as u32))
        .collect();
    let merges = strings(gguf, "tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| {
            m.split_once(' ')
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| format!("merge `{m}` in `tokenizer.ggml.merges` has no space"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut bpe = BPE::builder().vocab_and_merges(vocab, merges);
    if let Some(token) =
        id(gguf, "tokenizer.ggml.unk_token_id").and_then(|i| tokens.get(i as usize))
    {
        bpe = bpe.unk_token((*token).to_owned());
    }
    if let Some(fallback) = gguf
        .get("tokenizer.ggml.byte_fallback")
        .and_then(Value::as_bool)
    {
        bpe = bpe.byte_fallback(fallback);
    }
    if let Some(ignore) = gguf
        .get("tokenizer.ggml.ignore_merges")
        .and_then(Value::as_bool)
    {
        bpe = bpe.ignore_merges(ignore);
    }
    let bpe = bpe.build().map_err(|e| format!("BPE: {e}"))?;
    let mut tokenizer = Tokenizer::new(bpe);
    if gguf.get("tokenizer.ggml.pre").and_then(Value::as_str) == Some("qwen2") {
        tokenizer
            .with_normalizer(Some(NFC))
            .map_err(|e| format!("normalizer: {e}"))?;
    }
    tokenizer.with_pre_tokenizer(Some(ByteLevelPre::default()));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));

    let bos = id(gguf, "tokenizer.ggml.bos_token_id");
    let eos = id(gguf, "tokenizer.ggml.eos_token_id");
    let byte_level = PostProcessorWrapper::from(ByteLevelProcessor::default());
    let processor = match template(
        &tokens,
        bos,
        eos,
        flag(gguf, "tokenizer.ggml.add_bos_token"),
        flag(gguf, "tokenizer.ggml.add_eos_token"),
    )? {
        Some(template) => ProcessorSequence::new(vec![byte_level, template]).into(),
        None => byte_level,
    };
    tokenizer.with_post_processor(Some(processor));

    // Control (3), user-defined (4), unknown (2) and unused (5) tokens, as
    // llama.cpp's token types mark them, then the named special ids.
    let mut specials: Vec<u32> = match gguf
        .get("tokenizer.ggml.token_type")
        .and_then(Value::as_array)
    {
        Some(types) => types
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t.as_u32(), Some(2..=5)))
            .map(|(i, _)| i as u32)
            .collect(),
        None => Vec::new(),
    };
    let named: BTreeSet<u32> = [
        "tokenizer.ggml.bos_token_id",
        "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.pad_token_id",
        "tokenizer.ggml.sep_token_id",
        "tokenizer.ggml.unk_token_id",
    ]
    .into_iter()
    .filter_map(|key| id(gguf, key))
    .collect();
    specials.extend(named);
    let specials: Vec<AddedToken> = specials
        .into_iter()
        .filter_map(|i| tokens.get(i as usize))
        .map(|t| AddedToken::from((*t).to_owned(), true))
        .collect();
    if !specials.is_empty() {
        tokenizer
            .add_special_tokens(specials)
            .map_err(|e| format!("special tokens: {e}"))?;
    }
    Ok(tokenizer)
}
