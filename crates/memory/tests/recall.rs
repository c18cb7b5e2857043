//! The recall harness on the synthetic LoCoMo-format dataset with the real
//! local MiniLM embedder: Agon's default retrieval beats BM25 and dense.

use std::path::Path;
use std::sync::Arc;

use agon_llm::Embedder;
use agon_local::LocalEmbedder;
use agon_memory::RetrievalConfig;
use agon_memory::locomo::{evaluate, load};

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
    // The plain table scripts read: a header and one row per method.
    let table = report.render();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .rev()
        .take(5)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[4],
        [
            "method",
            "recall@5",
            "recall@10",
            "recall@1000tok",
            "p50_ms"
        ]
    );
    for name in ["bm25", "dense", "agon"] {
        let row = rows.iter().find(|r| r[0] == name).expect(name);
        assert_eq!(row.len(), 5);
        assert!(row[1..].iter().all(|v| v.parse::<f64>().is_ok()), "{row:?}");
    }
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
