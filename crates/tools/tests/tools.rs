//! The tools against a real directory (path escapes: `..`, absolute paths,
//! symlinks; size limits; binary files) and the real memory (MiniLM).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agon_core::{
    Blackboard, DebateEvent, DebateId, DialogueMessage, MessageKind, Persona, PersonaId, Topic,
};
use agon_memory::{InMemoryIndex, Memory, MemoryKind, MemoryMeta, RetrievalConfig};
use agon_tools::{ContextDir, FileRead, ListFiles, MAX_READ_BYTES, Tool, ToolBox, ToolError};
use serde_json::json;

fn tree() -> (tempfile::TempDir, tempfile::TempDir, ContextDir) {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("docs")).unwrap();
    std::fs::write(
        root.path().join("README.md"),
        "# Rate limiter\nToken bucket, 100 req/s.\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join("docs/limits.md"),
        "Per client: 100 requests per second.\n",
    )
    .unwrap();
    std::fs::write(outside.path().join("secret.txt"), "do not read").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            root.path().join("leak.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(
            root.path().join("docs/limits.md"),
            root.path().join("inside.md"),
        )
        .unwrap();
    }
    let dir = ContextDir::new(root.path()).unwrap();
    (root, outside, dir)
}

async fn read(dir: &ContextDir, path: &str) -> agon_tools::ToolOutput {
    FileRead::new(dir.clone())
        .call(json!({ "path": path }))
        .await
}

#[tokio::test]
async fn paths_that_escape_the_context_directory_are_refused() {
    let (_root, outside, dir) = tree();
    let ok = read(&dir, "docs/limits.md").await;
    assert!(ok.ok && ok.content.contains("100 requests"), "{ok:?}");
    for (path, why) in [
        ("../secret.txt", "`..` is refused"),
        ("docs/../../secret.txt", "`..` is refused"),
        ("/etc/passwd", "absolute paths are refused"),
        (
            outside.path().join("secret.txt").to_str().unwrap(),
            "absolute paths are refused",
        ),
        ("nope.md", "not found"),
    ] {
        let out = read(&dir, path).await;
        assert!(!out.ok && out.content.contains(why), "{path}: {out:?}");
    }
    #[cfg(unix)]
    {
        // A symlink that points out is refused; one that stays inside is read.
        let out = read(&dir, "leak.txt").await;
        assert!(
            !out.ok && out.content.contains("resolves outside"),
            "{out:?}"
        );
        let out = read(&dir, "out/secret.txt").await;
        assert!(
            !out.ok && out.content.contains("resolves outside"),
            "{out:?}"
        );
        let out = read(&dir, "inside.md").await;
        assert!(out.ok && out.content.contains("100 requests"), "{out:?}");
    }
    // Listing shows what is inside, never the way out.
    let list = ListFiles::new(dir.clone()).call(json!({})).await;
    assert!(list.ok, "{list:?}");
    let lines: Vec<&str> = list.content.lines().collect();
    assert!(
        lines.contains(&"README.md") && lines.contains(&"docs/"),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("leak") || l.starts_with("out")),
        "{lines:?}"
    );
    let sub = ListFiles::new(dir.clone())
        .call(json!({"path": "docs"}))
        .await;
    assert_eq!(sub.content, "docs/limits.md");
    let up = ListFiles::new(dir.clone())
        .call(json!({"path": ".."}))
        .await;
    assert!(!up.ok && up.content.contains("`..` is refused"), "{up:?}");
}

#[tokio::test]
async fn reads_are_size_limited_text_only_and_bad_arguments_are_results() {
    let (root, _outside, dir) = tree();
    std::fs::write(root.path().join("big.txt"), "é".repeat(MAX_READ_BYTES)).unwrap();
    let out = read(&dir, "big.txt").await;
    assert!(out.ok, "{out:?}");
    assert!(
        out.content.contains(&format!(
            "(cut at {} of {} bytes)",
            MAX_READ_BYTES,
            2 * MAX_READ_BYTES
        )),
        "{}",
        &out.content[out.content.len() - 60..]
    );
    std::fs::write(root.path().join("blob.bin"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let out = read(&dir, "blob.bin").await;
    assert!(
        !out.ok && out.content.contains("not a UTF-8 text file"),
        "{out:?}"
    );
    let out = read(&dir, "docs").await;
    assert!(!out.ok && out.content.contains("not a file"), "{out:?}");
    // Arguments that do not match the schema: a result the model reads.
    let out = FileRead::new(dir.clone())
        .call(json!({"file": "README.md"}))
        .await;
    assert!(
        !out.ok && out.content.starts_with("invalid arguments for file_read"),
        "{out:?}"
    );
    // The schema is generated from the argument type.
    let schema = FileRead::new(dir).parameters();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["path"]));
    assert!(
        schema["properties"]["path"]["description"].is_string(),
        "{schema}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn context_search_recalls_the_debates_memories_and_the_toolbox_names_what_it_lacks() {
    let embedder: Arc<dyn agon_llm::Embedder> =
        Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let memory = Memory::open(
        Arc::new(InMemoryIndex::new()),
        embedder,
        RetrievalConfig::default(),
    )
    .await
    .unwrap();
    let debate = DebateId::new("d-1");
    let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    let drafts = [
        (
            "m1",
            "arch",
            "A token bucket per client, refilled 100 times a second.",
        ),
        (
            "m2",
            "perf",
            "Redis INCR with a one-second expiry keeps the hot path at one round trip.",
        ),
    ]
    .iter()
    .map(|(id, who, text)| MemoryMeta {
        id: format!("d-1/{id}"),
        debate: debate.clone(),
        persona: PersonaId::new(*who),
        content: (*text).into(),
        kind: MemoryKind::Position,
        importance: 6,
        round: 1,
        created: at,
        subject: None,
    })
    .collect();
    memory.remember(drafts).await.unwrap();
    let (_root, _outside, dir) = tree();
    let names: Vec<String> = ["context_search", "list_files", "file_read"]
        .map(String::from)
        .to_vec();
    let board = Blackboard::new();
    let tools = ToolBox::build(&names, Some(&dir), Some((&memory, &debate)), None, &board).unwrap();
    assert_eq!(tools.names(), ["context_search", "list_files", "file_read"]);
    let out = tools
        .get("context_search")
        .unwrap()
        .call(json!({"query": "redis round trip", "k": 1}))
        .await;
    assert!(
        out.ok
            && out
                .content
                .starts_with("(round 1, position, perf) Redis INCR"),
        "{out:?}"
    );
    let empty = tools
        .get("context_search")
        .unwrap()
        .call(json!({"query": " "}))
        .await;
    assert!(!empty.ok && empty.content.contains("the query is empty"));
    // What a config names that cannot be built is an error naming it.
    let err = ToolBox::build(&["file_read".into()], None, None, None, &board).unwrap_err();
    assert!(
        matches!(err, ToolError::Unavailable { .. }) && err.to_string().contains("--context-dir"),
        "{err}"
    );
    let err = ToolBox::build(&["web_search".into()], Some(&dir), None, None, &board).unwrap_err();
    assert!(
        err.to_string().contains("web_search") && err.to_string().contains("file_read"),
        "{err}"
    );
}

#[tokio::test]
async fn without_the_memory_context_search_finds_what_was_said_in_the_debate() {
    // dialectic's `context_search` searches the debate's history; with the
    // vector memory off Agon searches the messages themselves (BM25).
    let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    let mut board = Blackboard::new();
    board
        .apply(&DebateEvent::DebateStarted {
            debate: "d-2".into(),
            topic: Topic::new("How should the API limit its clients?"),
            aspects: vec![],
            personas: vec![
                Persona::debater("arch", "Ada", "architect", "plain"),
                Persona::debater("perf", "Bo", "performance", "plain"),
            ],
            time: at,
            protocol: Some(agon_core::ProtocolKind::Dialectic),
        })
        .unwrap();
    for (i, (who, text)) in [
        (
            "arch",
            "A token bucket per client, refilled 100 times a second.",
        ),
        (
            "perf",
            "Redis INCR with a one-second expiry keeps the hot path at one round trip.",
        ),
        (
            "arch",
            "Audit every rejection to the log, with the client id and the reason.",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let message = DialogueMessage {
            id: format!("m{}", i + 1).into(),
            persona: who.into(),
            kind: MessageKind::Proposal,
            aspect: None,
            round: 1,
            miniround: None,
            crux_room: None,
            content: text.into(),
            time: at,
            reply_to: None,
            meta: None,
        };
        board
            .apply(&DebateEvent::MessageAppended { message })
            .unwrap();
    }
    let tools = ToolBox::build(&["context_search".into()], None, None, None, &board).unwrap();
    let search = tools.get("context_search").unwrap();
    assert!(
        search.description().contains("said in this debate"),
        "{}",
        search.description()
    );
    let out = search.call(json!({"query": "redis expiry", "k": 1})).await;
    assert!(out.ok, "{}", out.content);
    assert_eq!(
        out.content,
        "(round 1, proposal, Bo) Redis INCR with a one-second expiry keeps the hot path at one round trip."
    );
    let two = search.call(json!({"query": "client", "k": 5})).await;
    assert_eq!(two.content.lines().count(), 2, "{}", two.content);
    assert!(
        two.content.lines().all(|l| l.contains("Ada")),
        "{}",
        two.content
    );
    let none = search.call(json!({"query": "kubernetes"})).await;
    assert!(
        none.ok && none.content == "(nothing said so far matches)",
        "{}",
        none.content
    );
    let empty = search.call(json!({"query": "  "})).await;
    assert!(!empty.ok && empty.content.contains("the query is empty"));
}
