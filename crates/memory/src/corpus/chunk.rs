//! Cutting a persona's corpus into chunks on its structure: Markdown
//! headings and paragraphs, plain-text paragraphs, JSON-lines posts. Pure.

use std::path::Path;

use crate::error::MemoryError;

/// Most words in a chunk; a longer paragraph or post is cut at sentence
/// ends into pieces of at most this many words.
pub const MAX_CHUNK_WORDS: usize = 160;

/// Most words carried over from the end of one chunk to the start of the
/// next chunk of the same section (its last sentence): a fact split across
/// two paragraphs stays findable.
pub const OVERLAP_WORDS: usize = 40;

/// How a corpus file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusFormat {
    /// Markdown: `#` headings open sections; blank lines separate paragraphs.
    Markdown,
    /// Plain text: blank lines separate paragraphs.
    Text,
    /// One JSON object per line, a post each: its text in `text`,
    /// `content` or `body`.
    JsonLines,
}

impl CorpusFormat {
    /// The format of a file by its extension (`.md`/`.markdown`,
    /// `.txt`/`.text`, `.jsonl`/`.ndjson`); other files are refused with
    /// their name.
    pub fn of_path(path: &Path) -> Result<Self, MemoryError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("md" | "markdown") => Ok(Self::Markdown),
            Some("txt" | "text") => Ok(Self::Text),
            Some("jsonl" | "ndjson") => Ok(Self::JsonLines),
            _ => Err(MemoryError::Invalid {
                what: format!("corpus file {}", path.display()),
                reason: "unsupported format (expected .md, .markdown, .txt, .text, .jsonl or .ndjson; convert a PDF to text first)".into(),
            }),
        }
    }
}

/// One chunk of a corpus file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusChunk {
    /// Its position in the file (0, 1, …).
    pub position: u32,
    /// The section heading it sits under (Markdown), or the post's date.
    pub heading: Option<String>,
    /// The text (with the previous chunk's last sentence first when it
    /// continues a section).
    pub text: String,
}

impl CorpusChunk {
    /// What is embedded and shown: the heading, then the text.
    pub fn content(&self) -> String {
        match &self.heading {
            Some(h) => format!("{h}: {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// Cuts `text`, written as `format`, into chunks. `what` names the file in
/// errors (a JSON line that is not a post names its line).
pub fn chunk(
    text: &str,
    format: CorpusFormat,
    what: &str,
) -> Result<Vec<CorpusChunk>, MemoryError> {
    let pieces = match format {
        CorpusFormat::Markdown => sections(text, true),
        CorpusFormat::Text => sections(text, false),
        CorpusFormat::JsonLines => posts(text, what)?,
    };
    Ok(pieces
        .into_iter()
        .enumerate()
        .map(|(i, (heading, text))| CorpusChunk {
            position: i as u32,
            heading,
            text,
        })
        .collect())
}

/// (heading, text) pieces of a Markdown or text file.
fn sections(text: &str, markdown: bool) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    let mut paragraphs: Vec<String> = Vec::new();
    let mut paragraph = String::new();
    let flush_paragraph = |paragraph: &mut String, paragraphs: &mut Vec<String>| {
        let p = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
        if !p.is_empty() {
            paragraphs.push(p);
        }
        paragraph.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        let is_heading = markdown && trimmed.starts_with('#');
        if is_heading || trimmed.is_empty() {
            flush_paragraph(&mut paragraph, &mut paragraphs);
        }
        if is_heading {
            pack(&heading, std::mem::take(&mut paragraphs), &mut out);
            let h = trimmed.trim_start_matches('#').trim();
            heading = (!h.is_empty()).then(|| h.to_owned());
        } else if !trimmed.is_empty() {
            paragraph.push(' ');
            paragraph.push_str(trimmed);
        }
    }
    flush_paragraph(&mut paragraph, &mut paragraphs);
    pack(&heading, paragraphs, &mut out);
    out
}

/// Packs a section's paragraphs into chunks of at most [`MAX_CHUNK_WORDS`]
/// words, each after the first opening with the previous one's last
/// sentence (at most [`OVERLAP_WORDS`] words).
fn pack(
    heading: &Option<String>,
    paragraphs: Vec<String>,
    out: &mut Vec<(Option<String>, String)>,
) {
    let units: Vec<String> = paragraphs
        .into_iter()
        .flat_map(|p| split_long(&p))
        .collect();
    let mut current: Vec<String> = Vec::new();
    let mut words = 0;
    for unit in units {
        let n = word_count(&unit);
        if words > 0 && words + n > MAX_CHUNK_WORDS {
            let text = current.join("\n\n");
            let carried = last_sentence(&text);
            out.push((heading.clone(), text));
            current.clear();
            words = 0;
            if let Some(c) = carried.filter(|c| word_count(c) + n <= MAX_CHUNK_WORDS) {
                words = word_count(&c);
                current.push(c);
            }
        }
        words += n;
        current.push(unit);
    }
    if !current.is_empty() {
        out.push((heading.clone(), current.join("\n\n")));
    }
}

/// A paragraph of more than [`MAX_CHUNK_WORDS`] words cut at sentence ends
/// (a sentence longer than that is cut at the word limit).
fn split_long(paragraph: &str) -> Vec<String> {
    if word_count(paragraph) <= MAX_CHUNK_WORDS {
        return vec![paragraph.to_owned()];
    }
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for sentence in sentences(paragraph) {
        for piece in sentence
            .split_whitespace()
            .collect::<Vec<_>>()
            .chunks(MAX_CHUNK_WORDS)
        {
            let piece_words = piece.len();
            if current.len() + piece_words > MAX_CHUNK_WORDS && !current.is_empty() {
                out.push(current.join(" "));
                current.clear();
            }
            current.extend_from_slice(piece);
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

/// The sentences of a text (cut after `.`, `!` or `?` followed by a space).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(|n| *n == b' ') {
            out.push(text[start..=i].trim());
            start = i + 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The last sentence of `text`, when it has at most [`OVERLAP_WORDS`] words
/// and is not the whole text.
fn last_sentence(text: &str) -> Option<String> {
    let all = sentences(text);
    if all.len() < 2 {
        return None;
    }
    let last = all.last()?;
    (word_count(last) <= OVERLAP_WORDS).then(|| (*last).to_owned())
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Posts of a JSON-lines file: each a chunk (a long one cut as a long
/// paragraph is), headed by its date when it has one.
fn posts(text: &str, what: &str) -> Result<Vec<(Option<String>, String)>, MemoryError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| MemoryError::Invalid {
            what: format!("{what}, line {}", i + 1),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let body = ["text", "content", "body"]
            .iter()
            .find_map(|k| value.get(*k).and_then(|v| v.as_str()))
            .ok_or_else(|| bad("a post needs a string `text`, `content` or `body`".into()))?;
        let date = ["date", "created_at", "published"]
            .iter()
            .find_map(|k| value.get(*k).and_then(|v| v.as_str()))
            .map(str::to_owned);
        let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
        for piece in split_long(&body).into_iter().filter(|p| !p.is_empty()) {
            out.push((date.clone(), piece));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize, tag: &str) -> String {
        (0..n)
            .map(|i| format!("{tag}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn markdown_chunks_follow_headings_and_paragraphs() {
        let md = "# Transit\n\nRidership rose 12 % after the ban.\nShops gained.\n\n## Air\n\nNO2 fell by a third.\n";
        let chunks = chunk(md, CorpusFormat::Markdown, "a.md").unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].heading.as_deref(), Some("Transit"));
        assert_eq!(
            chunks[0].text,
            "Ridership rose 12 % after the ban. Shops gained."
        );
        assert_eq!(chunks[1].heading.as_deref(), Some("Air"));
        assert_eq!(chunks[1].content(), "Air: NO2 fell by a third.");
        assert_eq!(chunks[1].position, 1);
    }

    #[test]
    fn long_sections_are_cut_with_the_last_sentence_carried_over() {
        let p1 = format!("{}. Carried sentence here.", words(100, "a"));
        let p2 = format!("{}.", words(100, "b"));
        let chunks = chunk(&format!("{p1}\n\n{p2}"), CorpusFormat::Text, "t.txt").unwrap();
        assert_eq!(chunks.len(), 2);
        assert!(
            chunks[1].text.starts_with("Carried sentence here."),
            "{}",
            chunks[1].text
        );
        assert!(
            chunks
                .iter()
                .all(|c| word_count(&c.text) <= MAX_CHUNK_WORDS)
        );
        // A paragraph far over the limit is cut at sentence ends.
        let long = (0..30)
            .map(|i| format!("{} end{i}.", words(20, "w")))
            .collect::<Vec<_>>()
            .join(" ");
        let chunks = chunk(&long, CorpusFormat::Text, "t.txt").unwrap();
        assert!(chunks.len() >= 4);
        assert!(
            chunks
                .iter()
                .all(|c| word_count(&c.text) <= MAX_CHUNK_WORDS)
        );
        let all: String = chunks
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(all.contains("end29."), "nothing at the end is lost");
    }

    #[test]
    fn posts_are_chunks_and_bad_lines_are_named() {
        let jsonl = "{\"text\": \"Bike lanes  pay off.\", \"date\": \"2024-03-01\"}\n\n{\"content\": \"Second post\"}\n";
        let chunks = chunk(jsonl, CorpusFormat::JsonLines, "posts.jsonl").unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].content(), "2024-03-01: Bike lanes pay off.");
        assert_eq!(chunks[1].text, "Second post");
        let err = chunk("{\"title\": 1}", CorpusFormat::JsonLines, "posts.jsonl").unwrap_err();
        assert!(err.to_string().contains("posts.jsonl, line 1"), "{err}");
        let err = chunk("not json", CorpusFormat::JsonLines, "p.jsonl").unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
    }

    #[test]
    fn formats_come_from_extensions() {
        assert_eq!(
            CorpusFormat::of_path(Path::new("a/B.MD")).unwrap(),
            CorpusFormat::Markdown
        );
        assert_eq!(
            CorpusFormat::of_path(Path::new("x.ndjson")).unwrap(),
            CorpusFormat::JsonLines
        );
        let err = CorpusFormat::of_path(Path::new("paper.pdf")).unwrap_err();
        assert!(err.to_string().contains("paper.pdf"), "{err}");
    }
}
