//! The memory-recall harness on LoCoMo-format data (Maharana et al., 2024).
//!
//! A dataset is a JSON list of samples, each with a `conversation`
//! (`speaker_a`, `speaker_b`, `session_N_date_time`, `session_N` = list of
//! turns `{speaker, dia_id, text}`) and `qa` (`question`, `answer`,
//! `evidence` = list of dia ids like `"D1:3"`, `category` 1-5). Every turn
//! becomes a memory of its speaker; every question with evidence is asked
//! of every method, and evidence recall is measured at 5 and 10 results and
//! within 1,000 tokens of retrieved text.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use agon_context::{TiktokenCounter, TokenCounter};
use agon_core::{DebateId, PersonaId};
use agon_llm::{Embedder, InputType};
use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::MemoryError;
use crate::index::MemoryIndex;
use crate::inmemory::InMemoryIndex;
use crate::memory::Memory;
use crate::names::NamedQuery;
use crate::record::{MemoryFilter, MemoryKind, MemoryRecord};
use crate::score::RetrievalConfig;

/// One dialogue turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who speaks.
    pub speaker: String,
    /// `D<session>:<turn>`.
    pub dia_id: String,
    /// What is said.
    pub text: String,
    /// The caption of a photo shared with the turn (LoCoMo's
    /// `blip_caption`), part of what the turn says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blip_caption: Option<String>,
}

impl Turn {
    /// What the turn says: its text, and the caption of a shared photo in
    /// brackets.
    pub fn content(&self) -> String {
        match self.blip_caption.as_deref().map(str::trim) {
            Some(caption) if !caption.is_empty() => {
                format!("{} [shared a photo: {caption}]", self.text)
            }
            _ => self.text.clone(),
        }
    }

    /// The turn as a labelled document: `SPEAKER: CONTENT`.
    pub fn memory_text(&self) -> String {
        format!("{}: {}", self.speaker, self.content())
    }
}

/// One question about a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// The question.
    pub question: String,
    /// The reference answer (string or number; absent for some adversarial ones).
    #[serde(default)]
    pub answer: Option<Value>,
    /// Dia ids of the turns that hold the answer.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
}

/// One conversation with its questions.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its id (`sample_id`, or its position).
    pub id: String,
    /// Every turn with its time, in order.
    pub turns: Vec<(Turn, DateTime<Utc>)>,
    /// The questions.
    pub questions: Vec<Question>,
}

#[derive(Deserialize)]
struct RawSample {
    #[serde(default)]
    sample_id: Option<Value>,
    conversation: serde_json::Map<String, Value>,
    #[serde(default)]
    qa: Vec<Question>,
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    for format in [
        "%I:%M %p on %d %B, %Y",
        "%I:%M %p on %d %b, %Y",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text.trim(), format) {
            return Some(Utc.from_utc_datetime(&t));
        }
    }
    None
}

/// Splits an evidence entry: real LoCoMo files hold a few like `"D8:6; D9:17"`.
fn evidence_ids(entries: &[String]) -> Vec<String> {
    entries
        .iter()
        .flat_map(|e| e.split([';', ',', ' ']))
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads a LoCoMo-format file. Errors name the file and the sample.
pub fn load(path: &Path) -> Result<Vec<Sample>, MemoryError> {
    let bad = |reason: String| MemoryError::Invalid {
        what: format!("dataset {}", path.display()),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let raw: Vec<RawSample> = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut samples = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let id = match s.sample_id {
            Some(Value::String(v)) => v,
            Some(v) => v.to_string(),
            None => format!("sample-{i}"),
        };
        let mut sessions: Vec<(u32, Vec<Turn>, Option<DateTime<Utc>>)> = Vec::new();
        for (key, value) in &s.conversation {
            let Some(n) = key
                .strip_prefix("session_")
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let turns: Vec<Turn> = serde_json::from_value(value.clone())
                .map_err(|e| bad(format!("sample {id}, {key}: {e}")))?;
            let time = s
                .conversation
                .get(&format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .and_then(parse_time);
            sessions.push((n, turns, time));
        }
        if sessions.is_empty() {
            return Err(bad(format!("sample {id} has no session_N turns")));
        }
        sessions.sort_by_key(|s| s.0);
        let base = Utc
            .timestamp_opt(1_600_000_000, 0)
            .single()
            .unwrap_or_default();
        let mut turns = Vec::new();
        for (n, session, time) in sessions {
            let start = time.unwrap_or(base + Duration::days(n as i64));
            for (j, t) in session.into_iter().enumerate() {
                turns.push((t, start + Duration::seconds(30 * j as i64)));
            }
        }
        let questions =
            s.qa.into_iter()
                .map(|mut q| {
                    q.evidence = evidence_ids(&q.evidence);
                    q
                })
                .collect();
        samples.push(Sample {
            id,
            turns,
            questions,
        });
    }
    Ok(samples)
}

/// Sums of one method's recalls over a set of questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Questions counted.
    pub questions: usize,
    /// Σ recall@5.
    pub recall_at_5: f64,
    /// Σ recall@10.
    pub recall_at_10: f64,
    /// Σ recall within the token budget.
    pub recall_in_budget: f64,
}

impl Metrics {
    fn add(&mut self, r5: f64, r10: f64, rb: f64) {
        self.questions += 1;
        self.recall_at_5 += r5;
        self.recall_at_10 += r10;
        self.recall_in_budget += rb;
    }

    /// Mean (recall@5, recall@10, recall in budget).
    pub fn means(&self) -> (f64, f64, f64) {
        let n = self.questions.max(1) as f64;
        (
            self.recall_at_5 / n,
            self.recall_at_10 / n,
            self.recall_in_budget / n,
        )
    }
}

/// One retrieval method's results.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MethodReport {
    /// `bm25`, `dense`, `fusion` or `agon`.
    pub name: String,
    /// Per LoCoMo category.
    pub per_category: BTreeMap<u8, Metrics>,
    /// All questions.
    pub overall: Metrics,
    /// Retrieval latency of each question (ms), query embedding included.
    pub latencies_ms: Vec<f64>,
    /// Temporal questions (category 2) whose reference answer is a date
    /// (it names a year), and of them those whose answer is written in
    /// the text this method shows within the token budget: Agon shows a
    /// turn with the dates its relative times name
    /// ([`crate::dates::annotated`]), the baselines as it was said, after
    /// the day it was said.
    pub dated: DatedAnswers,
}

/// How often the date a temporal question asks for is in the text shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DatedAnswers {
    /// Temporal questions whose answer names a year.
    pub questions: usize,
    /// Of them, those whose answer the shown text holds (case ignored).
    pub shown: usize,
}

impl DatedAnswers {
    /// `shown / questions` (0 without questions).
    pub fn share(&self) -> f64 {
        self.shown as f64 / self.questions.max(1) as f64
    }
}

/// A turn as a method shows it within the budget: its text (lowercased,
/// for finding an answer in it) and its tokens.
struct Shown {
    text: String,
    tokens: usize,
}

/// The reference answer when it is a date: text naming a year (19xx or
/// 20xx), lowercased.
fn dated_answer(q: &Question) -> Option<String> {
    let answer = q.answer.as_ref()?.as_str()?.trim().to_lowercase();
    let names_a_year = answer
        .split(|c: char| !c.is_ascii_digit())
        .any(|n| n.len() == 4 && (n.starts_with("19") || n.starts_with("20")));
    (q.category == 2 && names_a_year).then_some(answer)
}

impl MethodReport {
    /// Median latency (ms).
    pub fn p50_ms(&self) -> f64 {
        let mut v = self.latencies_ms.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The whole evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Samples indexed.
    pub samples: usize,
    /// Turns indexed.
    pub turns: usize,
    /// Questions asked (those with evidence).
    pub questions: usize,
    /// Questions skipped for want of evidence.
    pub skipped: usize,
    /// Token budget of the third recall.
    pub token_budget: usize,
    /// Methods, in the order bm25, dense, fusion, agon.
    pub methods: Vec<MethodReport>,
}

/// The methods compared, the strongest fair baseline first:
/// `dense-nameless` is plain cosine over the turns' contents (no speaker
/// label) with the persona names taken out of the query, the two changes
/// that made Agon's own retrieval strong; `bm25`, `dense` and `fusion`
/// index `SPEAKER: CONTENT` and take the query as asked.
pub const METHODS: [&str; 5] = ["dense-nameless", "bm25", "dense", "fusion", "agon"];

/// Ranked dia ids enough to fill the token budget.
const DEPTH: usize = 50;
/// Results asked of Agon's retrieval for recall@5 and @10 (its own N).
const TOP: usize = 10;
/// BM25's share of relevance in the fusion baseline (Agon's default before
/// the retrieval work of docs/benchmarks.md).
const BASELINE_LEXICAL_SHARE: f32 = 0.35;

/// Evaluates dense cosine with the names out of the query, BM25, dense cosine,
/// plain reciprocal-rank fusion and Agon's scored retrieval (`retrieval`, as
/// debates use it) on `samples`.
pub async fn evaluate(
    samples: &[Sample],
    embedder: Arc<dyn Embedder>,
    retrieval: RetrievalConfig,
    token_budget: usize,
) -> Result<Report, MemoryError> {
    let counter = TiktokenCounter::default();
    let mut methods: Vec<MethodReport> = METHODS
        .iter()
        .map(|m| MethodReport {
            name: (*m).to_owned(),
            ..MethodReport::default()
        })
        .collect();
    let (mut turns, mut asked, mut skipped) = (0, 0, 0);
    for sample in samples {
        let debate = DebateId::new(sample.id.clone());
        // The baselines index each turn as a document `SPEAKER: TEXT`;
        // Agon stores it as it stores a debate's memories: the text as
        // content, the speaker as the memory's persona (a field).
        let labelled: Vec<String> = sample.turns.iter().map(|(t, _)| t.memory_text()).collect();
        let contents: Vec<String> = sample.turns.iter().map(|(t, _)| t.content()).collect();
        // What a turn shows a reader within the budget, lowercased, with
        // what it costs: the baselines the turn as said after the day it
        // was said (generously, the date's tokens not counted); Agon the
        // turn with the dates its relative times name.
        let plain: HashMap<&str, Shown> = sample
            .turns
            .iter()
            .zip(&labelled)
            .map(|((t, at), text)| {
                let day = crate::dates::When::Day(at.date_naive());
                let shown = Shown {
                    text: format!("({day}) {text}").to_lowercase(),
                    tokens: counter.count(text),
                };
                (t.dia_id.as_str(), shown)
            })
            .collect();
        let dated: HashMap<&str, Shown> = sample
            .turns
            .iter()
            .map(|(t, at)| {
                let content = t.content();
                let text = format!(
                    "{}: {}",
                    t.speaker,
                    crate::dates::annotated(&content, at.date_naive())
                );
                let shown = Shown {
                    tokens: counter.count(&text),
                    text: text.to_lowercase(),
                };
                (t.dia_id.as_str(), shown)
            })
            .collect();
        let memory = indexed(sample, &debate, labelled, &embedder, retrieval).await?;
        let index = Arc::clone(memory.index());
        let agon = indexed(sample, &debate, contents, &embedder, retrieval).await?;
        turns += sample.turns.len();
        let filter = MemoryFilter {
            debate: Some(debate.clone()),
            ..MemoryFilter::default()
        };
        let mut speakers: Vec<String> = Vec::new();
        for (t, _) in &sample.turns {
            if !speakers.contains(&t.speaker) {
                speakers.push(t.speaker.clone());
            }
        }
        // Relevance-only fusion over the labelled documents, the query as
        // asked (no names taken out): the fusion baseline.
        let fusion_only = RetrievalConfig {
            k: DEPTH,
            candidates: retrieval.candidates.max(DEPTH),
            recency_weight: 0.0,
            importance_weight: 0.0,
            speaker_weight: 0.0,
            lexical_share: BASELINE_LEXICAL_SHARE,
            neighbours: 0,
            ..retrieval
        };
        for q in &sample.questions {
            if q.evidence.is_empty() || q.question.trim().is_empty() {
                skipped += 1;
                continue;
            }
            asked += 1;
            let gold: HashSet<&str> = q.evidence.iter().map(String::as_str).collect();
            for method in &mut methods {
                let started = Instant::now();
                let ranked: Vec<String> = match method.name.as_str() {
                    "bm25" => index
                        .lexical(&q.question, &filter, DEPTH)
                        .await?
                        .into_iter()
                        .map(|h| h.id)
                        .collect(),
                    "dense-nameless" => {
                        let nameless = crate::names::split_names(&q.question, &speakers);
                        let qv = query_vector(embedder.as_ref(), &nameless.dense).await?;
                        agon.index()
                            .search(&qv, &filter, DEPTH)
                            .await?
                            .into_iter()
                            .map(|c| c.memory.id)
                            .collect()
                    }
                    "dense" => {
                        let qv = query_vector(embedder.as_ref(), &q.question).await?;
                        index
                            .search(&qv, &filter, DEPTH)
                            .await?
                            .into_iter()
                            .map(|c| c.memory.id)
                            .collect()
                    }
                    "fusion" => {
                        let qv = query_vector(embedder.as_ref(), &q.question).await?;
                        let asked = NamedQuery {
                            dense: q.question.clone(),
                            lexical: q.question.clone(),
                            named: Vec::new(),
                        };
                        memory
                            .score(&asked, &qv, &filter, &fusion_only)
                            .await?
                            .into_iter()
                            .map(|s| s.memory.id)
                            .collect()
                    }
                    _ => agon
                        .recall(&q.question, &filter, TOP)
                        .await?
                        .memories
                        .into_iter()
                        .map(|s| s.memory.id)
                        .collect(),
                };
                let elapsed = started.elapsed();
                // The token budget needs a deeper list than the top 10;
                // Agon's comes with each hit's neighbours (`Recall::expanded`).
                let is_agon = method.name == "agon";
                let deeper: Vec<String> = if is_agon {
                    agon.recall(&q.question, &filter, DEPTH)
                        .await?
                        .expanded()
                        .into_iter()
                        .map(|m| m.id.clone())
                        .collect()
                } else {
                    ranked.clone()
                };
                method.latencies_ms.push(elapsed.as_secs_f64() * 1_000.0);
                let recall_at = |k: usize| {
                    let hit = ranked
                        .iter()
                        .take(k)
                        .filter(|id| gold.contains(id.as_str()));
                    hit.count() as f64 / gold.len() as f64
                };
                let shown = if is_agon { &dated } else { &plain };
                let answer = dated_answer(q);
                let mut answer_shown = false;
                let mut used = 0;
                let mut in_budget = 0;
                for id in &deeper {
                    let turn = shown.get(id.as_str());
                    used += turn.map_or(0, |t| t.tokens);
                    if used > token_budget {
                        break;
                    }
                    let evidence = gold.contains(id.as_str());
                    in_budget += usize::from(evidence);
                    if let (Some(answer), Some(turn)) = (&answer, turn) {
                        answer_shown |= evidence && turn.text.contains(answer.as_str());
                    }
                }
                if answer.is_some() {
                    method.dated.questions += 1;
                    method.dated.shown += usize::from(answer_shown);
                }
                let rb = in_budget as f64 / gold.len() as f64;
                let (r5, r10) = (recall_at(5), recall_at(10));
                method.overall.add(r5, r10, rb);
                method
                    .per_category
                    .entry(q.category)
                    .or_default()
                    .add(r5, r10, rb);
            }
        }
    }
    Ok(Report {
        samples: samples.len(),
        turns,
        questions: asked,
        skipped,
        token_budget,
        methods,
    })
}

/// A memory over an in-process index of `sample`'s turns with `texts` as
/// their contents.
async fn indexed(
    sample: &Sample,
    debate: &DebateId,
    texts: Vec<String>,
    embedder: &Arc<dyn Embedder>,
    retrieval: RetrievalConfig,
) -> Result<Memory, MemoryError> {
    let index: Arc<dyn MemoryIndex> = Arc::new(InMemoryIndex::new());
    let memory = Memory::open(Arc::clone(&index), Arc::clone(embedder), retrieval).await?;
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(embedder.max_batch().max(1)) {
        vectors.extend(
            embedder
                .embed(batch, InputType::Document)
                .await
                .map_err(|source| MemoryError::Embedding {
                    model: embedder.model_id().to_owned(),
                    source,
                })?,
        );
    }
    let records: Vec<MemoryRecord> = sample
        .turns
        .iter()
        .zip(texts)
        .zip(vectors)
        .map(|(((turn, time), content), embedding)| MemoryRecord {
            id: turn.dia_id.clone(),
            debate: debate.clone(),
            persona: PersonaId::new(turn.speaker.clone()),
            content,
            kind: MemoryKind::Message,
            importance: 5,
            round: 0,
            created: *time,
            embedding,
            subject: None,
        })
        .collect();
    index.insert(records).await?;
    Ok(memory)
}

async fn query_vector(embedder: &dyn Embedder, question: &str) -> Result<Vec<f32>, MemoryError> {
    let mut v = embedder
        .embed(&[question.to_owned()], InputType::Query)
        .await
        .map_err(|source| MemoryError::Embedding {
            model: embedder.model_id().to_owned(),
            source,
        })?;
    let mut v = v.pop().unwrap_or_default();
    crate::record::normalize(&mut v).map_err(|reason| MemoryError::Invalid {
        what: "query embedding".into(),
        reason,
    })?;
    Ok(v)
}

impl Report {
    /// The method named `name`.
    pub fn method(&self, name: &str) -> Option<&MethodReport> {
        self.methods.iter().find(|m| m.name == name)
    }

    /// The report as text: per-category detail, then the plain table
    /// (`method recall@5 recall@10 recall@1000tok p50_ms`) scripts read.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} samples, {} turns indexed, {} questions with evidence ({} skipped), budget {} tokens\n\n",
            self.samples, self.turns, self.questions, self.skipped, self.token_budget
        );
        out.push_str("per category (recall@5 / recall@10 / recall@budget, questions):\n");
        let categories: std::collections::BTreeSet<u8> = self
            .methods
            .iter()
            .flat_map(|m| m.per_category.keys().copied())
            .collect();
        for c in categories {
            out.push_str(&format!("  category {c}:"));
            for m in &self.methods {
                if let Some(x) = m.per_category.get(&c) {
                    let (a, b, d) = x.means();
                    out.push_str(&format!(
                        "  {} {a:.3}/{b:.3}/{d:.3} (n={})",
                        m.name, x.questions
                    ));
                }
            }
            out.push('\n');
        }
        let dated = self.methods.first().map_or(0, |m| m.dated.questions);
        if dated > 0 {
            out.push_str(&format!(
                "temporal answers shown within the budget ({dated} questions whose answer is a date):"
            ));
            for m in &self.methods {
                out.push_str(&format!(
                    "  {} {:.3} ({})",
                    m.name,
                    m.dated.share(),
                    m.dated.shown
                ));
            }
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&format!(
            "{:<14} {:>9} {:>10} {:>15} {:>8}\n",
            "method", "recall@5", "recall@10", "recall@1000tok", "p50_ms"
        ));
        for m in &self.methods {
            let (a, b, d) = m.overall.means();
            out.push_str(&format!(
                "{:<14} {a:>9.3} {b:>10.3} {d:>15.3} {:>8.2}\n",
                m.name,
                m.p50_ms()
            ));
        }
        out
    }
}
