//! Memories with validity (issue 54 §2): the changed-facts benchmark.
//!
//! Four personas take stances on six planted subjects (aspects whose
//! labels recur) across three debates, changing some of them from one
//! debate to the next. The logs are what the orchestrator writes for such
//! debates (messages, the analysis's position updates and shifts, the
//! `turn_analyzed` markers); the harvester turns them into memories, the
//! real MiniLM embeds them. A fourth debate then asks, for every persona
//! and subject, the recall its take on that aspect would ask, and we count
//! what the turn is shown:
//!
//! - **current**: the persona's current stance on the subject is shown;
//! - **stale as current**: an older stance is shown with nothing saying it
//!   no longer holds.
//!
//! Baseline: the same memories without subjects (today's append-only
//! recall, nothing ever closed).

use std::sync::Arc;

use agon_context::{Phase, turn_recall};
use agon_core::{
    AspectPositionUpdate, Blackboard, DebateAspect, DebateEvent, DebateId, DialogueMessage,
    MessageKind, Persona, Topic,
};
use agon_llm::{Embedder, InputType};
use agon_local::LocalEmbedder;
use agon_memory::{
    DebateInfo, Harvester, InMemoryIndex, Memory, MemoryDraft, MemoryFilter, RetrievalConfig,
    recall_labelled,
};
use chrono::{DateTime, Duration, TimeZone, Utc};

const PERSONAS: [(&str, &str); 4] = [
    ("ada", "Ada"),
    ("ben", "Ben"),
    ("cyd", "Cyd"),
    ("dee", "Dee"),
];

/// The planted subjects: an aspect label, and three stances one can hold
/// on it (each phrase names one stance only).
const SUBJECTS: [(&str, [&str; 3]); 6] = [
    (
        "Ferry subsidy",
        [
            "keep the ferry subsidy at its full level",
            "end the ferry subsidy within two years",
            "tie the ferry subsidy to a fare cap for residents",
        ],
    ),
    (
        "Night buses",
        [
            "run night buses on every trunk route",
            "cut night buses to weekends only",
            "replace night buses with shared taxis on demand",
        ],
    ),
    (
        "Parking levy",
        [
            "charge a workplace parking levy on large employers",
            "drop the parking levy altogether",
            "charge the parking levy only in the old town",
        ],
    ),
    (
        "Cycle lanes",
        [
            "build protected cycle lanes on the ring road",
            "paint cycle lanes instead of protecting them",
            "move cycle lanes onto quiet back streets",
        ],
    ),
    (
        "Tram extension",
        [
            "extend the tram line to the airport",
            "shelve the tram extension for a decade",
            "extend the tram only to the hospital",
        ],
    ),
    (
        "School streets",
        [
            "close school streets to cars at drop-off times",
            "leave school streets open with lower speed limits",
            "close school streets all day in term time",
        ],
    ),
];

const TOPICS: [&str; 4] = [
    "How should Harbor City fund its transport in 2027?",
    "What should Harbor City's transport plan put first?",
    "Which transport promises should Harbor City's council keep?",
    "What should Harbor City's next transport budget do?",
];

/// The stance persona `p` holds on subject `s` in debate `d` (0-2):
/// some never change, some change once, some twice.
fn stance(p: usize, s: usize, d: usize) -> usize {
    let first = (p + s) % 3;
    let changes = (p + 2 * s) % 3; // 0, 1 or 2 changes
    match (changes, d) {
        (0, _) | (_, 0) => first,
        (1, _) => (first + 1) % 3,
        (_, 1) => (first + 1) % 3,
        _ => (first + 2) % 3,
    }
}

fn time(d: usize, minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1 + 2 * d as u32, 10, 9, 0, 0)
        .unwrap()
        + Duration::minutes(minute)
}

fn aspect_id(s: usize) -> String {
    format!("s{s}")
}

fn started(d: usize) -> DebateEvent {
    DebateEvent::DebateStarted {
        debate: DebateId::new(format!("transport-{d}")),
        topic: Topic::new(TOPICS[d]),
        aspects: SUBJECTS
            .iter()
            .enumerate()
            .map(|(s, (label, _))| {
                DebateAspect::new(
                    aspect_id(s).as_str(),
                    *label,
                    format!("What to do on {label}."),
                )
            })
            .collect(),
        personas: PERSONAS
            .iter()
            .map(|(id, name)| Persona::debater(*id, *name, "a council member", "plain"))
            .collect(),
        time: time(d, 0),
        protocol: None,
    }
}

/// Debate `d`'s log: each persona's take on each subject, with what the
/// analysis recorded of it.
fn debate(d: usize) -> Vec<DebateEvent> {
    let mut events = vec![started(d)];
    let mut minute = 1;
    for (s, (label, stances)) in SUBJECTS.iter().enumerate() {
        let round = s as u32 + 1;
        events.push(DebateEvent::AspectStarted {
            aspect: aspect_id(s).as_str().into(),
            round,
        });
        for (p, (id, name)) in PERSONAS.iter().enumerate() {
            let now = stance(p, s, d);
            let changed = d > 0 && stance(p, s, d - 1) != now;
            let opening = if changed {
                "I have changed my mind since our last debate"
            } else {
                "My view is"
            };
            let message = DialogueMessage {
                id: format!("d{d}-p{p}-s{s}").as_str().into(),
                persona: (*id).into(),
                kind: MessageKind::Take,
                aspect: Some(aspect_id(s).as_str().into()),
                round,
                miniround: Some(0),
                crux_room: None,
                content: format!(
                    "{opening}: on {}, we should {}. The numbers from the depot audit back this.",
                    label.to_lowercase(),
                    stances[now]
                ),
                time: time(d, minute),
                reply_to: None,
                meta: None,
            };
            minute += 1;
            let message_id = message.id.clone();
            events.push(DebateEvent::MessageAppended { message });
            events.push(DebateEvent::PositionUpdated {
                persona: (*id).into(),
                round,
                overall_stance: None,
                aspect: Some(AspectPositionUpdate {
                    aspect: aspect_id(s).as_str().into(),
                    position: Some(format!("We should {}.", stances[now])),
                    evidence: vec![format!("the depot audit ({name})")],
                    challenged: Vec::new(),
                    answered: Vec::new(),
                }),
            });
            if changed {
                events.push(DebateEvent::ShiftRecorded {
                    persona: (*id).into(),
                    text: format!("{name} changed position on {}.", label.to_lowercase()),
                    round,
                });
            }
            events.push(DebateEvent::TurnAnalyzed {
                message: message_id,
                disagreements: Vec::new(),
                importance: None,
                contradiction: None,
                window_end: true,
            });
        }
    }
    events
}

/// The memories of debate `d`, as the harvester drafts them.
fn harvest(d: usize) -> Vec<MemoryDraft> {
    let mut harvester = Harvester::new();
    debate(d)
        .iter()
        .flat_map(|e| harvester.observe(e).expect("a valid log"))
        .collect()
}

/// What recall showed over every (persona, subject) of the fourth debate.
#[derive(Debug)]
struct Shown {
    asked: usize,
    current: usize,
    stale_as_current: usize,
    /// Memories shown with "held until …, then …".
    marked: usize,
    /// Superseded memories a question about change was shown.
    history: usize,
    /// Memories shown in all, and their characters.
    memories: usize,
    chars: usize,
}

impl Shown {
    fn current_share(&self) -> f64 {
        self.current as f64 / self.asked as f64
    }

    fn stale_share(&self) -> f64 {
        self.stale_as_current as f64 / self.asked as f64
    }
}

/// The MiniLM, each text embedded once for both runs.
struct Kept {
    inner: LocalEmbedder,
    kept: std::sync::Mutex<std::collections::HashMap<(String, bool), Vec<f32>>>,
}

#[async_trait::async_trait]
impl Embedder for Kept {
    async fn embed(
        &self,
        texts: &[String],
        input: InputType,
    ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
        let query = input == InputType::Query;
        let missing: Vec<String> = {
            let kept = self.kept.lock().unwrap();
            texts
                .iter()
                .filter(|t| !kept.contains_key(&((*t).clone(), query)))
                .cloned()
                .collect()
        };
        if !missing.is_empty() {
            let vectors = self.inner.embed(&missing, input).await?;
            let mut kept = self.kept.lock().unwrap();
            for (t, v) in missing.into_iter().zip(vectors) {
                kept.insert((t, query), v);
            }
        }
        let kept = self.kept.lock().unwrap();
        Ok(texts
            .iter()
            .map(|t| kept[&(t.clone(), query)].clone())
            .collect())
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

async fn changed_facts(embedder: Arc<Kept>, with_validity: bool) -> Shown {
    let index = Arc::new(InMemoryIndex::new());
    let memory = Memory::open(index.clone(), embedder, RetrievalConfig::default())
        .await
        .expect("opens");
    for (d, topic) in TOPICS.iter().enumerate().take(3) {
        index
            .note_debate(&DebateInfo {
                debate: DebateId::new(format!("transport-{d}")),
                topic: (*topic).into(),
                started: time(d, 0),
            })
            .await;
        let mut drafts = harvest(d);
        if !with_validity {
            drafts.iter_mut().for_each(|m| m.subject = None);
        }
        memory.remember(drafts).await.expect("remembers");
    }
    // The fourth debate: each persona's first take on each subject.
    let mut board = Blackboard::new();
    board.apply(&started(3)).expect("starts");
    let debate = DebateId::new("transport-3");
    let mut shown = Shown {
        asked: 0,
        current: 0,
        stale_as_current: 0,
        marked: 0,
        history: 0,
        memories: 0,
        chars: 0,
    };
    for (s, (_, stances)) in SUBJECTS.iter().enumerate() {
        board
            .apply(&DebateEvent::AspectStarted {
                aspect: aspect_id(s).as_str().into(),
                round: s as u32 + 1,
            })
            .expect("aspect");
        for (p, (id, _)) in PERSONAS.iter().enumerate() {
            let phase = Phase::Take {
                aspect: aspect_id(s).as_str().into(),
                miniround: 0,
            };
            let turn = turn_recall(&board, &(*id).into(), &phase).expect("a take recalls");
            let recalled = recall_labelled(&memory, &debate, &turn, true)
                .await
                .expect("recalls");
            let current = stances[stance(p, s, 2)];
            let old: Vec<&str> = (0..2)
                .map(|d| stances[stance(p, s, d)])
                .filter(|o| *o != current)
                .collect();
            shown.asked += 1;
            if recalled.iter().any(|m| m.content.contains(current)) {
                shown.current += 1;
            }
            // An older stance shown as if it held: in a memory's own text,
            // with no "held until" after it.
            let stale = recalled.iter().any(|m| {
                let own = m.content.split(" [held until").next().unwrap_or_default();
                let marked = m.content.len() != own.len();
                !marked && old.iter().any(|o| own.contains(o))
            });
            if stale {
                shown.stale_as_current += 1;
            }
            shown.memories += recalled.len();
            shown.chars += recalled
                .iter()
                .map(|m| m.content.chars().count())
                .sum::<usize>();
            shown.marked += recalled
                .iter()
                .filter(|m| m.content.contains(" [held until "))
                .count();
        }
    }
    // A question about change gets the history: the stances that no
    // longer hold, each with the one that does.
    let question = "What did Cyd use to think about the ferry subsidy before?";
    let history = memory
        .recall(question, &MemoryFilter::persona("cyd"), 10)
        .await
        .expect("recalls");
    shown.history = history
        .memories
        .iter()
        .filter(|hit| hit.successor.is_some())
        .count();
    // What the report of the second debate shows: each position of the
    // first it replaced, and each of its own the third replaced.
    let changes = agon_memory::stance_changes(index.as_ref(), &DebateId::new("transport-1"))
        .await
        .expect("reads");
    if with_validity {
        let crossing = |a: &str, b: &str| {
            changes
                .iter()
                .filter(|c| c.before.debate.as_str() == a && c.after.debate.as_str() == b)
                .count()
        };
        // Four personas' positions on six aspects, and on the topic (whose
        // wording differs from debate to debate: a subject of its own).
        assert_eq!(crossing("transport-0", "transport-1"), 24, "{changes:#?}");
        assert_eq!(crossing("transport-1", "transport-2"), 24, "{changes:#?}");
        assert!(changes.iter().all(|c| c.before.subject == c.after.subject));
    } else {
        assert!(changes.is_empty(), "nothing has a subject: {changes:?}");
    }
    shown
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_debate_is_shown_the_current_stance_and_no_stale_one_as_current() {
    let embedder = Arc::new(Kept {
        inner: LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")),
        kept: Default::default(),
    });
    // The plan changes 16 of the 24 stances (some twice).
    let changed: usize = (0..4)
        .flat_map(|p| (0..6).map(move |s| (p, s)))
        .filter(|&(p, s)| stance(p, s, 0) != stance(p, s, 2) || stance(p, s, 0) != stance(p, s, 1))
        .count();
    assert_eq!(changed, 16, "{changed} of 24 change");

    let with = changed_facts(embedder.clone(), true).await;
    let append_only = changed_facts(embedder, false).await;
    eprintln!(
        "changed facts, {} questions: with validity current {:.1} % stale-as-current {:.1} %; \
         append-only current {:.1} % stale-as-current {:.1} %; {} shown marked held-until, \
         {} superseded for a question about change; memories shown {} ({} chars) against {} ({} chars)",
        with.asked,
        100.0 * with.current_share(),
        100.0 * with.stale_share(),
        100.0 * append_only.current_share(),
        100.0 * append_only.stale_share(),
        with.marked,
        with.history,
        with.memories,
        with.chars,
        append_only.memories,
        append_only.chars,
    );
    assert_eq!(with.asked, 24);
    // Targets of issue 54: current ≥ 95 %, stale shown as current ≤ 2 %.
    assert!(with.current_share() >= 0.95, "{with:?}");
    assert!(with.stale_share() <= 0.02, "{with:?}");
    assert!(
        with.marked > 0,
        "superseded stances are shown with their successor: {with:?}"
    );
    assert!(
        with.history > 0,
        "a question about change gets the history: {with:?}"
    );
    assert_eq!(
        append_only.marked + append_only.history,
        0,
        "{append_only:?}"
    );
    // The append-only baseline (docs/benchmarks.md quotes both): every
    // current stance is shown too, and 11 of the 24 answers (46 %) show an
    // old stance as if it held. The MiniLM is exact on CPU, so the count is
    // fixed; the band allows for a retrieval tweak of one memory either way.
    assert!(append_only.current_share() >= 0.95, "{append_only:?}");
    assert!(
        (10..=12).contains(&append_only.stale_as_current),
        "{append_only:?}"
    );
}
