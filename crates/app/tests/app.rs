//! The application's use cases over a real SQLite store and the scripted
//! model: steering through the store reaches a run that holds the lease
//! (not one this `App` started), clarifying questions are answered
//! through the store, and a fork runs on to its parent's end or, with a
//! note, away from it.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agon_app::{App, AppError, ErrorKind, Resumed, RunsWhere, Runtime};
use agon_config::{AspectConfig, DebateConfig, Overrides};
use agon_core::{DebateEvent, MessageKind};
use agon_llm::PriceTable;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_testkit::{ScriptedModel, recording_model};
use async_trait::async_trait;

static COUNTER: AtomicU64 = AtomicU64::new(0);

async fn sqlite() -> Arc<dyn EventStore> {
    let dir = std::env::temp_dir().join("agon-app-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!(
        "t_{}_{}.db",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    agon_store::open(&format!("sqlite://{}", dir.join(name).display()))
        .await
        .unwrap()
}

/// Debates run on [`recording_model`]s sharing one prompt list.
struct Scripted {
    delay: Duration,
    prompts: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Runtime for Scripted {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        let model = recording_model(ScriptedModel::new(self.delay), Arc::clone(&self.prompts));
        Ok(Models::uniform(
            Arc::new(model),
            PriceTable::with_defaults(),
        ))
    }
}

fn app(store: Arc<dyn EventStore>, delay: Duration) -> (App, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let runtime = Scripted {
        delay,
        prompts: Arc::clone(&prompts),
    };
    (App::new(store, Arc::new(runtime)), prompts)
}

/// 3 personas, one aspect, one miniround, no crux room: ~10 turns.
fn structured() -> DebateConfig {
    let mut c = DebateConfig {
        topic: "Should cities ban private cars from their centres?".into(),
        personas: agon_config::default_personas(),
        aspects: vec![AspectConfig {
            label: "Cost".into(),
            description: "Who pays.".into(),
        }],
        minirounds: 1,
        ..DebateConfig::default()
    };
    c.crux.enabled = false;
    c.memory.enabled = false;
    c
}

async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..1_200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn said(board: &agon_core::Blackboard) -> Vec<(String, String, String)> {
    board
        .messages()
        .iter()
        .map(|m| {
            (
                m.persona.to_string(),
                m.kind.label().to_owned(),
                m.content.clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_a_pause_and_a_resume_reach_a_run_through_the_store() {
    let store = sqlite().await;
    let (app, prompts) = app(Arc::clone(&store), Duration::from_millis(40));
    let id = app.orchestrator().create(&structured()).await.unwrap();
    // A run this App did not start: only the store connects them.
    let (orch, models) = app.prepare(&id, &structured()).await.unwrap();
    let control = RunControl::default();
    let run = {
        let id = id.clone();
        tokio::spawn(async move { orch.run(&id, &models, control).await })
    };
    wait_for("the first message", async || {
        !store.load(&id).await.unwrap().0.messages().is_empty()
    })
    .await;
    assert!(
        matches!(
            app.runs_where(&id).await.unwrap(),
            RunsWhere::Elsewhere { .. }
        ),
        "the run holds the lease"
    );

    let note = "NOTE-7731: weigh the night-time deliveries";
    let posted = app.note(&id, note, Some("Chair".into())).await.unwrap();
    assert!(matches!(posted.runs, RunsWhere::Elsewhere { .. }));
    wait_for("the note in the log", async || {
        store.load(&id).await.unwrap().0.notes().len() == 1
    })
    .await;
    let prompts_at_note = prompts.lock().unwrap().len();

    app.pause(&id, Some("Chair".into())).await.unwrap();
    wait_for("the pause", async || {
        store.load(&id).await.unwrap().0.is_paused()
    })
    .await;
    // Paused: no further turn (background work already asked may land).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let held = store.load(&id).await.unwrap().0.messages().len();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(store.load(&id).await.unwrap().0.messages().len(), held);
    assert!(!run.is_finished(), "a paused run waits");

    assert_eq!(
        app.resume(&id, None, false).await.unwrap(),
        Resumed::Running
    );
    let outcome = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let later = prompts.lock().unwrap()[prompts_at_note..].to_vec();
    assert!(
        later.iter().any(|p| p.contains("NOTE-7731")),
        "the note reaches the agents' next contexts"
    );
    // Every request was taken once.
    assert!(store.pending_requests(&id).await.unwrap().is_empty());
    // A finished debate takes no more.
    let late = app.note(&id, "late", None).await.unwrap_err();
    assert_eq!(late.kind(), ErrorKind::Conflict);
    assert!(late.to_string().contains("finished"), "{late}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_request_ends_a_run_after_its_step_and_nothing_running_refuses_one() {
    let store = sqlite().await;
    let (app, _) = app(Arc::clone(&store), Duration::from_millis(40));
    let id = app.orchestrator().create(&structured()).await.unwrap();
    let err = app.stop(&id, None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(err.to_string().contains("not running"), "{err}");

    let (orch, models) = app.prepare(&id, &structured()).await.unwrap();
    let run = {
        let id = id.clone();
        tokio::spawn(async move { orch.run(&id, &models, RunControl::default()).await })
    };
    wait_for("the first message", async || {
        !store.load(&id).await.unwrap().0.messages().is_empty()
    })
    .await;
    app.stop(&id, None).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome, RunOutcome::Stopped);
    assert!(!store.load(&id).await.unwrap().0.messages().is_empty());
    // Resumed in this process, it finishes.
    assert_eq!(app.resume(&id, None, true).await.unwrap(), Resumed::Started);
    wait_for("the end", async || {
        store.debate(&id).await.unwrap().status.is_done()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarifying_questions_are_answered_through_the_store() {
    let store = sqlite().await;
    let (app, prompts) = app(Arc::clone(&store), Duration::ZERO);
    let mut config = DebateConfig {
        protocol: agon_config::ProtocolKind::Dialectic,
        topic: "Design a rate limiter for a public API.".into(),
        ..DebateConfig::default()
    };
    config.dialectic.rounds = 1;
    config.dialectic.clarify = true;
    config.dialectic.clarify_rounds = 1;
    config.memory.enabled = false;
    let id = app.start(&config).await.unwrap();
    let mut questions = Vec::new();
    wait_for("the questions", async || {
        questions = app.questions(&id).await.unwrap();
        !questions.is_empty()
    })
    .await;
    let wrong = app.answer(&id, vec!["one".into()]).await.unwrap_err();
    assert_eq!(wrong.kind(), ErrorKind::Invalid, "{wrong}");
    let answers: Vec<String> = (1..=questions.len())
        .map(|i| format!("ANSWER-{i}: about 2,000 requests a second"))
        .collect();
    app.answer(&id, answers.clone()).await.unwrap();
    // Answered once.
    let again = app.answer(&id, answers.clone()).await.unwrap_err();
    assert_eq!(again.kind(), ErrorKind::Conflict, "{again}");
    wait_for("the end", async || {
        store.debate(&id).await.unwrap().status.is_done()
    })
    .await;
    let board = store.load(&id).await.unwrap().0;
    let given: Vec<&str> = board
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationAnswer)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        given,
        answers.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(
        prompts
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.contains("ANSWER-1")),
        "the answers reach the proposals' context"
    );
    assert!(app.questions(&id).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_runs_on_to_its_parents_end_and_with_a_note_away_from_it() {
    let store = sqlite().await;
    let (app, prompts) = app(Arc::clone(&store), Duration::ZERO);
    let parent = app.start(&structured()).await.unwrap();
    wait_for("the parent's end", async || {
        store.debate(&parent).await.unwrap().status.is_done()
    })
    .await;
    let parent_board = store.load(&parent).await.unwrap().0;

    // Forked before its last step, run on with the same model: the same end.
    let fork = app
        .fork(&parent, None, &Overrides::default())
        .await
        .unwrap();
    assert_eq!(fork.from, parent);
    let record = store.debate(&fork.id).await.unwrap();
    assert_eq!(record.forked_from.as_ref().map(|f| f.seq), Some(fork.seq));
    assert_eq!(record.last_seq, fork.seq);
    let copied = store.events_after(&fork.id, 0).await.unwrap();
    let original = store.events_after(&parent, 0).await.unwrap();
    assert_eq!(
        copied[..],
        original[..fork.seq as usize],
        "the log is a prefix"
    );
    app.spawn(&fork.id).await.unwrap();
    wait_for("the fork's end", async || {
        store.debate(&fork.id).await.unwrap().status.is_done()
    })
    .await;
    let fork_board = store.load(&fork.id).await.unwrap().0;
    assert_eq!(
        said(&fork_board),
        said(&parent_board),
        "same model, same end"
    );
    let same = app.divergence(&parent, &fork.id).await.unwrap();
    assert_eq!(same.first, None, "{same:?}");
    assert!(same.common_events >= fork.seq);

    // A fork mid-debate with a note: the note is its first event after
    // the copy, and every later turn's context shows it.
    let noted = app
        .fork(&parent, Some(fork.seq / 2), &Overrides::default())
        .await
        .unwrap();
    let before = prompts.lock().unwrap().len();
    let posted = app
        .note(
            &noted.id,
            "NOTE-FORK: assume a congestion charge exists",
            None,
        )
        .await
        .unwrap();
    assert_eq!(posted.runs, RunsWhere::Idle, "it waits for the fork's run");
    assert_eq!(
        app.resume(&noted.id, None, true).await.unwrap(),
        Resumed::Started
    );
    wait_for("the noted fork's end", async || {
        store.debate(&noted.id).await.unwrap().status.is_done()
    })
    .await;
    // Background work the copy left in flight may land first; the note is
    // taken before the next turn.
    let events = store.events_after(&noted.id, 0).await.unwrap();
    let after = &events[noted.seq as usize..];
    let note_at = after
        .iter()
        .position(|e| matches!(e.event, DebateEvent::NoteAdded { .. }))
        .expect("the note is in the fork's log");
    let next_turn = after
        .iter()
        .position(|e| matches!(e.event, DebateEvent::MessageAppended { .. }))
        .expect("the fork runs on");
    assert!(note_at < next_turn, "the note comes before the next turn");
    let parted = app.divergence(&parent, &noted.id).await.unwrap();
    assert!(parted.common_events >= noted.seq, "{parted:?}");
    assert!(
        parted.common_events <= noted.seq + note_at as u64,
        "they part at the note at the latest: {parted:?}"
    );
    assert!(
        prompts.lock().unwrap()[before..]
            .iter()
            .any(|p| p.contains("NOTE-FORK")),
        "the note reaches the fork's agents"
    );

    // Past the log's end, and settings of another protocol, are refused.
    let beyond = app
        .fork(&parent, Some(10_000), &Overrides::default())
        .await
        .unwrap_err();
    assert!(matches!(beyond, AppError::Invalid { .. }), "{beyond}");
    let mut rounds = Overrides::default();
    rounds.dialectic.rounds = Some(3);
    let misplaced = app.fork(&parent, None, &rounds).await.unwrap_err();
    assert_eq!(misplaced.kind(), ErrorKind::Invalid, "{misplaced}");
    assert!(misplaced.to_string().contains("rounds"), "{misplaced}");
}
