//! The recall harness on the synthetic LoCoMo-format dataset with the real
//! local MiniLM embedder: Agon's default retrieval beats BM25 and dense.

use std::path::Path;
use std::sync::Arc;

use agon_llm::Embedder;
use agon_local::LocalEmbedder;
use agon_memory::RetrievalConfig;
use agon_memory::locomo::{evaluate, load};

/// A memory over an in-process index, embedding with the real MiniLM.
async fn minilm_memory() -> agon_memory::Memory {
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    agon_memory::Memory::open(
        Arc::new(agon_memory::InMemoryIndex::new()),
        embedder,
        RetrievalConfig::default(),
    )
    .await
    .unwrap()
}

fn dataset() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/locomo-synthetic.json")
}

#[tokio::test(flavor = "multi_thread")]
async fn agon_beats_both_baselines_on_recall_at_10() {
    let samples = load(&dataset()).expect("dataset");
    assert_eq!(samples.len(), 3);
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let report = evaluate(&samples, embedder, RetrievalConfig::default(), 1_000)
        .await
        .expect("evaluate");
    println!("{}", report.render());
    assert_eq!(report.questions, 66);
    let r10 = |name: &str| report.method(name).expect(name).overall.means().1;
    assert!(r10("agon") > r10("bm25"), "{}", report.render());
    assert!(r10("agon") > r10("dense"), "{}", report.render());
    // docs/benchmarks.md, "The first synthetic set" (±0.02).
    for (name, documented) in [("agon", 0.932), ("dense-nameless", 0.917)] {
        let r = r10(name);
        assert!(
            (r - documented).abs() <= 0.02,
            "{name} recall@10 {r:.3}, documented {documented}: update docs/benchmarks.md if meant"
        );
    }
    // The plain table scripts read: a header and one row per method.
    let table = report.render();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .rev()
        .take(6)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[5],
        [
            "method",
            "recall@5",
            "recall@10",
            "recall@1000tok",
            "p50_ms"
        ]
    );
    for name in ["dense-nameless", "bm25", "dense", "agon"] {
        let row = rows.iter().find(|r| r[0] == name).expect(name);
        assert_eq!(row.len(), 5);
        assert!(row[1..].iter().all(|v| v.parse::<f64>().is_ok()), "{row:?}");
    }
}

/// The harness counts a temporal question's date as shown only where the
/// text shown says it: Agon's turn carries the date "last Friday" names,
/// a baseline's shows the turn after the day it was said (docs/benchmarks.md,
/// "Dates").
#[tokio::test(flavor = "multi_thread")]
async fn a_temporal_answer_is_shown_when_the_relative_time_is_resolved() {
    let dir = std::env::temp_dir().join(format!("agon-locomo-dates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dates.json");
    // Monday 15 May 2023: "last Friday" is 12 May, "this morning" 15 May.
    let sample = serde_json::json!([{
        "sample_id": "dates",
        "conversation": {
            "speaker_a": "Mara",
            "speaker_b": "Juno",
            "session_1_date_time": "10:00 am on 15 May, 2023",
            "session_1": [
                {"speaker": "Juno", "dia_id": "D1:1", "text": "How was your week, Mara?"},
                {"speaker": "Mara", "dia_id": "D1:2", "text": "I ran a half marathon last Friday, my legs still hurt."},
                {"speaker": "Juno", "dia_id": "D1:3", "text": "I baked sourdough bread this morning."},
                {"speaker": "Mara", "dia_id": "D1:4", "text": "The weather has been grey all week."}
            ]
        },
        "qa": [
            {"question": "When did Mara run a half marathon?", "answer": "12 May 2023",
             "evidence": ["D1:2"], "category": 2},
            {"question": "When did Juno bake sourdough bread?", "answer": "15 May 2023",
             "evidence": ["D1:3"], "category": 2},
            {"question": "Which race did Mara run?", "answer": "a half marathon",
             "evidence": ["D1:2"], "category": 4}
        ]
    }]);
    std::fs::write(&path, sample.to_string()).unwrap();
    let samples = load(&path).expect("dataset");
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let report = evaluate(&samples, embedder, RetrievalConfig::default(), 1_000)
        .await
        .expect("evaluate");
    let dated = |name: &str| report.method(name).expect(name).dated;
    // Two questions have dates for answers; the single-hop one does not.
    assert_eq!(dated("agon").questions, 2, "{}", report.render());
    assert_eq!(dated("agon").shown, 2, "{}", report.render());
    // The day said gives a baseline the morning's date, not last Friday's.
    for baseline in ["dense-nameless", "bm25", "dense", "fusion"] {
        assert_eq!(dated(baseline).shown, 1, "{baseline}: {}", report.render());
    }
    assert!(
        report
            .render()
            .contains("temporal answers shown within the budget (2 questions")
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_dataset_names_the_file() {
    let dir = std::env::temp_dir().join(format!("agon-locomo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(&path, r#"[{"conversation": {"speaker_a": "A"}, "qa": []}]"#).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(
        err.contains("bad.json") && err.contains("no session_N turns"),
        "{err}"
    );
    std::fs::write(&path, "{not json").unwrap();
    assert!(load(&path).unwrap_err().to_string().contains("bad.json"));
}

/// `Memory::recall` with the real MiniLM: a persona named in the query is a
/// field (the speaker component), not content, and every hit comes with
/// the memories around it.
#[tokio::test(flavor = "multi_thread")]
async fn names_are_a_field_and_hits_come_with_their_neighbours() {
    use agon_core::{DebateId, PersonaId};
    use agon_memory::{MemoryFilter, MemoryKind, MemoryMeta};
    use chrono::{Duration, TimeZone, Utc};

    let memory = minilm_memory().await;
    let turns = [
        ("Melanie", "What did you get up to this weekend?"),
        (
            "Caroline",
            "I painted a lighthouse at sunset, it took all of Sunday.",
        ),
        ("Melanie", "That sounds beautiful, you have to show me."),
        ("Melanie", "We painted the kitchen wall a pale green."),
        ("Caroline", "The weather was awful all week."),
    ];
    let start = Utc.timestamp_opt(1_700_000_000, 0).unwrap();
    let drafts: Vec<MemoryMeta> = turns
        .iter()
        .enumerate()
        .map(|(i, (who, text))| MemoryMeta {
            id: format!("d/{}", i + 1),
            debate: DebateId::new("d"),
            persona: PersonaId::new(*who),
            content: (*text).to_owned(),
            kind: MemoryKind::Message,
            importance: 5,
            round: 1,
            created: start + Duration::seconds(30 * i as i64),
            subject: None,
        })
        .collect();
    assert_eq!(memory.remember(drafts).await.unwrap(), 5);
    let filter = MemoryFilter {
        debate: Some(DebateId::new("d")),
        ..MemoryFilter::default()
    };
    for (asked, named) in [
        ("What did Caroline paint?", "d/2"),
        ("What did Melanie paint?", "d/4"),
    ] {
        let recall = memory.recall(asked, &filter, 2).await.unwrap();
        let mut ids: Vec<&str> = recall
            .memories
            .iter()
            .map(|m| m.memory.id.as_str())
            .collect();
        ids.sort();
        assert_eq!(ids, ["d/2", "d/4"], "the two paintings: {recall:#?}");
        for m in &recall.memories {
            let expected = if m.memory.id == named { 1.0 } else { 0.0 };
            assert_eq!(m.speaker, expected, "{asked}: {m:#?}");
            let score = 0.5 * m.recency + 3.0 * m.relevance + 2.0 * m.importance + 0.25 * m.speaker;
            assert!((m.score - score).abs() < 1e-5, "{m:#?}");
        }
        let caroline = recall
            .memories
            .iter()
            .find(|m| m.memory.id == "d/2")
            .unwrap();
        let context: Vec<&str> = caroline.context.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(context, ["d/1", "d/3"]);
        // For a reader with a budget: each hit, then its neighbours, once each.
        let expanded: Vec<&str> = recall.expanded().iter().map(|m| m.id.as_str()).collect();
        let first = &recall.memories[0];
        assert_eq!(expanded[0], first.memory.id);
        assert_eq!(expanded.len(), 5, "{expanded:?}");
        let mut unique = expanded.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 5);
    }
}

/// An embedder that counts the texts it embeds.
struct Counting {
    inner: LocalEmbedder,
    texts: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl Embedder for Counting {
    async fn embed(
        &self,
        texts: &[String],
        input: agon_llm::InputType,
    ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        self.inner.embed(texts, input).await
    }
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
}

/// A recall done ahead of its turn is that turn's result, with nothing
/// embedded or searched again; a write in between makes the turn search
/// again (its query's embedding is still kept), so it sees what was
/// written.
#[tokio::test(flavor = "multi_thread")]
async fn a_recall_done_ahead_is_the_turns_result_until_a_write() {
    use agon_core::{DebateId, PersonaId};
    use agon_memory::{InMemoryIndex, Memory, MemoryFilter, MemoryKind, MemoryMeta};
    use chrono::{TimeZone, Utc};
    use std::sync::atomic::Ordering;

    let counting = Arc::new(Counting {
        inner: LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")),
        texts: Default::default(),
    });
    let embedder: Arc<dyn Embedder> = counting.clone();
    let memory = Memory::open(
        Arc::new(InMemoryIndex::new()),
        embedder,
        RetrievalConfig::default(),
    )
    .await
    .unwrap();
    let draft = |i: usize, text: &str| MemoryMeta {
        id: format!("d/{i}"),
        debate: DebateId::new("d"),
        persona: PersonaId::new("mara"),
        content: text.to_owned(),
        kind: MemoryKind::Message,
        importance: 5,
        round: 1,
        created: Utc.timestamp_opt(1_700_000_000 + i as i64, 0).unwrap(),
        subject: None,
    };
    memory
        .remember(vec![
            draft(1, "Congestion pricing cut traffic in Stockholm by a fifth."),
            draft(2, "Pedestrian zones raised retail rents in Copenhagen."),
        ])
        .await
        .unwrap();
    let filter = MemoryFilter {
        persona: Some(PersonaId::new("mara")),
        ..MemoryFilter::default()
    };
    let query = "What did congestion pricing do to traffic?";
    let before = counting.texts.load(Ordering::SeqCst);
    memory.recall_ahead(query, &filter, 5, &[]).await.unwrap();
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        before + 1,
        "the query, embedded ahead"
    );
    let kept = memory.recall_aliased(query, &filter, 5, &[]).await.unwrap();
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        before + 1,
        "nothing embedded at the turn"
    );
    assert_eq!(kept.memories[0].memory.id, "d/1");
    assert_eq!(kept.memories.len(), 2);
    // A write in between: the turn searches again and sees it.
    memory
        .remember(vec![draft(
            3,
            "Congestion pricing in London cut traffic by 30 percent.",
        )])
        .await
        .unwrap();
    let written = counting.texts.load(Ordering::SeqCst);
    let fresh = memory.recall_aliased(query, &filter, 5, &[]).await.unwrap();
    assert_eq!(fresh.memories.len(), 3, "{fresh:#?}");
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        written,
        "the query's embedding is kept across the write"
    );
}

/// A recalled memory says when its relative times were (issue 54 §4):
/// "last Friday" said on Monday 15 May 2023 is shown as 12 May 2023, so a
/// turn weeks later can answer "when" and order two events.
#[tokio::test(flavor = "multi_thread")]
async fn relative_times_in_a_recalled_memory_carry_their_dates() {
    use agon_context::{RecallScope, TurnRecall};
    use agon_core::{DebateId, PersonaId};
    use agon_memory::{MemoryKind, MemoryMeta, recall_labelled};
    use chrono::{TimeZone, Utc};

    let memory = minilm_memory().await;
    let said = |id: &str, text: &str, day: u32| MemoryMeta {
        id: id.to_owned(),
        debate: DebateId::new("chat"),
        persona: PersonaId::new("mara"),
        content: text.to_owned(),
        kind: MemoryKind::Message,
        importance: 5,
        round: 1,
        created: Utc.with_ymd_and_hms(2023, 5, day, 10, 0, 0).unwrap(),
        subject: None,
    };
    memory
        .remember(vec![
            said(
                "chat/1",
                "I broke my wrist last Friday at the climbing gym.",
                15,
            ),
            said(
                "chat/2",
                "The wrist cast comes off next month, finally.",
                29,
            ),
        ])
        .await
        .unwrap();
    let turn = TurnRecall {
        persona: PersonaId::new("mara"),
        aliases: Vec::new(),
        query: "When did the wrist break, and when does the cast come off?".into(),
        scope: RecallScope::Own,
    };
    let recalled = recall_labelled(&memory, &DebateId::new("chat"), &turn, false)
        .await
        .unwrap();
    let contents: Vec<&str> = recalled.iter().map(|m| m.content.as_str()).collect();
    assert!(
        contents.contains(&"I broke my wrist last Friday (12 May 2023) at the climbing gym."),
        "{contents:#?}"
    );
    assert!(
        contents.contains(&"The wrist cast comes off next month (June 2023), finally."),
        "{contents:#?}"
    );
    // A plain recall (`agon recall --json`, the API) keeps the text as
    // written and reports each resolved time beside it.
    let filter = agon_memory::MemoryFilter {
        persona: Some(PersonaId::new("mara")),
        ..agon_memory::MemoryFilter::default()
    };
    let plain = memory.recall("wrist", &filter, 2).await.unwrap();
    let broke = plain
        .memories
        .iter()
        .find(|m| m.memory.id == "chat/1")
        .unwrap();
    assert_eq!(
        broke.memory.content,
        "I broke my wrist last Friday at the climbing gym."
    );
    let day = chrono::NaiveDate::from_ymd_opt(2023, 5, 12).unwrap();
    assert_eq!(
        broke.dates,
        [agon_memory::dates::ResolvedDate {
            expression: "last Friday".into(),
            date: "12 May 2023".into(),
            from: day,
            to: day,
        }]
    );
    let json = serde_json::to_value(broke).unwrap();
    assert_eq!(json["dates"][0]["from"], "2023-05-12", "{json}");
    let cast = plain
        .memories
        .iter()
        .find(|m| m.memory.id == "chat/2")
        .unwrap();
    assert_eq!(
        (cast.dates[0].from.to_string(), cast.dates[0].to.to_string()),
        ("2023-06-01".into(), "2023-06-30".into())
    );
}
