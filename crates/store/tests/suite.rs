//! One suite, run against both backends: SQLite (temp file) and PostgreSQL
//! (a fresh database per test on the server of `AGON_TEST_DATABASE_URL`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

macro_rules! suite {
    ($backend:ident) => {
        mod $backend {
            use std::sync::Arc;
            use std::time::Duration;

            use agon_core::{Blackboard, DebateEvent};
            use agon_store::{DebateLog, EventStore, LogError, RunStatus, SnapshotPolicy, StoreError};
            use proptest::prelude::*;

            use crate::support::{self, events, new_debate};

            async fn store() -> (Arc<dyn EventStore>, support::Place) {
                support::$backend().await
            }

            #[tokio::test]
            async fn debates_are_created_listed_updated_and_deleted() {
                let (store, _) = store().await;
                let a = store.create_debate(&new_debate("a")).await.unwrap();
                assert_eq!((a.status, a.last_seq, a.message_count), (RunStatus::Created, 0, 0));
                assert_eq!(a.config["aspects"], 3);
                store.create_debate(&new_debate("b")).await.unwrap();
                assert!(matches!(store.create_debate(&new_debate("a")).await, Err(StoreError::DebateExists { .. })));
                store.append(&"a".into(), 0, &events(10)[..20]).await.unwrap();
                store.set_status(&"a".into(), RunStatus::Running).await.unwrap();
                let list = store.list_debates().await.unwrap();
                assert_eq!(list.len(), 2);
                let a = list.iter().find(|d| d.id.as_str() == "a").unwrap();
                assert_eq!((a.status, a.last_seq), (RunStatus::Running, 20));
                assert_eq!(a.message_count, 20u64.min(events(10)[..20].iter().filter(|e| matches!(e, DebateEvent::MessageAppended { .. })).count() as u64));
                store.delete_debate(&"a".into()).await.unwrap();
                assert!(matches!(store.debate(&"a".into()).await, Err(StoreError::DebateNotFound { .. })));
                assert!(matches!(store.delete_debate(&"a".into()).await, Err(StoreError::DebateNotFound { .. })));
                assert!(matches!(store.events_after(&"a".into(), 0).await, Err(StoreError::DebateNotFound { .. })));
                assert_eq!(store.list_debates().await.unwrap().len(), 1);
            }

            /// Deleted debates and replaced snapshots leave space that
            /// compaction gives back; the events stay readable.
            #[tokio::test]
            async fn compaction_gives_back_the_space_of_deleted_debates() {
                let (store, _) = store().await;
                let all = events(300);
                for id in ["keep", "gone"] {
                    store.create_debate(&new_debate(id)).await.unwrap();
                    let mut log = DebateLog::open(
                        Arc::clone(&store),
                        id.into(),
                        SnapshotPolicy { every: 50, growth: 0 },
                    )
                    .await
                    .unwrap();
                    for chunk in all.chunks(40) {
                        log.append(chunk).await.unwrap();
                    }
                }
                let full = store.size_bytes().await.unwrap();
                assert!(full > 0);
                store.delete_debate(&"gone".into()).await.unwrap();
                let (before, after) = store.compact().await.unwrap();
                assert!(before >= full * 9 / 10, "{before} vs {full}");
                assert!(after < before, "compaction gave nothing back: {before} → {after}");
                assert_eq!(store.size_bytes().await.unwrap(), after);
                let (loaded, seq) = store.load(&"keep".into()).await.unwrap();
                assert_eq!(seq, all.len() as u64);
                assert_eq!(loaded, Blackboard::replay(&all).unwrap());
            }

            #[tokio::test]
            async fn appends_are_sequenced_and_optimistic() {
                let (store, _) = store().await;
                let id = "d".into();
                store.create_debate(&new_debate("d")).await.unwrap();
                let all = events(30);
                assert_eq!(store.append(&id, 0, &all[..1]).await.unwrap(), 1);
                assert_eq!(store.append(&id, 1, &all[1..11]).await.unwrap(), 11);
                let err = store.append(&id, 1, &all[11..12]).await.unwrap_err();
                assert_eq!(err.to_string(), "debate `d`: append expected sequence 1, the log is at 11");
                assert_eq!(store.append(&id, 11, &[]).await.unwrap(), 11);
                let stored = store.events_after(&id, 0).await.unwrap();
                assert_eq!(stored.len(), 11);
                assert!(stored.iter().enumerate().all(|(i, e)| e.seq == i as u64 + 1 && e.event == all[i]));
                assert_eq!(store.events_after(&id, 9).await.unwrap().len(), 2);
                assert!(matches!(store.append(&"nope".into(), 0, &all[..1]).await, Err(StoreError::DebateNotFound { .. })));
            }

            #[tokio::test]
            async fn concurrent_appenders_never_interleave_or_lose_events() {
                let (store, _) = store().await;
                store.create_debate(&new_debate("c")).await.unwrap();
                let all = Arc::new(events(20));
                let mut tasks = Vec::new();
                for _ in 0..4 {
                    let store = Arc::clone(&store);
                    tasks.push(tokio::spawn(async move {
                        let mut won = 0;
                        for _ in 0..40 {
                            let at = store.debate(&"c".into()).await.unwrap().last_seq;
                            if store.append(&"c".into(), at, &[DebateEvent::StepFailed {
                                step: agon_core::StepId::MemoryStore, reason: format!("at {at}"), time: chrono::DateTime::UNIX_EPOCH,
                            }]).await.is_ok() {
                                won += 1;
                            }
                        }
                        won
                    }));
                }
                let mut won = 0;
                for task in tasks {
                    won += task.await.unwrap();
                }
                let stored = store.events_after(&"c".into(), 0).await.unwrap();
                assert_eq!(stored.len(), won, "every acknowledged append is stored, nothing else");
                let _ = all;
            }

            #[tokio::test]
            async fn load_is_snapshot_plus_replay_and_equals_a_full_replay() {
                let (store, _) = store().await;
                let id = "s".into();
                store.create_debate(&new_debate("s")).await.unwrap();
                let all = events(200);
                let mut log = DebateLog::open(Arc::clone(&store), id, SnapshotPolicy { every: 100, growth: 0 }).await.unwrap();
                for batch in all.chunks(7) {
                    log.append(batch).await.unwrap();
                }
                assert!(log.snapshot_error().is_none());
                let (snap_seq, _) = store.latest_snapshot(&"s".into()).await.unwrap().unwrap();
                let ends: Vec<u64> = (1..=all.len().div_ceil(7)).map(|k| (k * 7).min(all.len()) as u64).collect();
                let expected = ends
                    .windows(2)
                    .filter(|w| w[1] / 100 > w[0] / 100)
                    .map(|w| w[1])
                    .last()
                    .unwrap();
                assert_eq!(snap_seq, expected, "the latest snapshot is at the batch that crossed a multiple of 100");
                let (board, seq) = store.load(&"s".into()).await.unwrap();
                assert_eq!(seq, all.len() as u64);
                assert_eq!(&board, log.blackboard());
                assert_eq!(board, Blackboard::replay(&all).unwrap());
            }

            #[tokio::test]
            async fn a_corrupt_snapshot_falls_back_to_a_full_replay() {
                let (store, place) = store().await;
                store.create_debate(&new_debate("x")).await.unwrap();
                let all = events(50);
                store.append(&"x".into(), 0, &all).await.unwrap();
                store.save_snapshot(&"x".into(), 20, &Blackboard::replay(&all[..20]).unwrap()).await.unwrap();
                place.exec("UPDATE snapshots SET state = '{\"not\": \"a blackboard\"}'").await;
                assert!(matches!(store.latest_snapshot(&"x".into()).await, Err(StoreError::CorruptSnapshot { seq: 20, .. })));
                let (board, seq) = store.load(&"x".into()).await.unwrap();
                assert_eq!((board, seq), (Blackboard::replay(&all).unwrap(), all.len() as u64));
            }

            #[tokio::test]
            async fn a_rejected_event_stores_nothing() {
                let (store, _) = store().await;
                store.create_debate(&new_debate("r")).await.unwrap();
                let all = events(20);
                let mut log = DebateLog::open(Arc::clone(&store), "r".into(), SnapshotPolicy::default()).await.unwrap();
                log.append(&all[..10]).await.unwrap();
                let mut bad = all[10..13].to_vec();
                bad.push(all[0].clone()); // a second debate_started
                let err = log.append(&bad).await.unwrap_err();
                assert!(matches!(err, LogError::Rejected { index: 3, .. }), "{err}");
                assert_eq!(log.seq(), 10);
                assert_eq!(log.blackboard(), &Blackboard::replay(&all[..10]).unwrap());
                assert_eq!(store.debate(&"r".into()).await.unwrap().last_seq, 10);
            }

            #[tokio::test]
            async fn corrupt_rows_name_the_debate_and_sequence() {
                let (store, place) = store().await;
                store.create_debate(&new_debate("k")).await.unwrap();
                store.append(&"k".into(), 0, &events(5)[..6]).await.unwrap();
                place.exec("UPDATE events SET payload = '{\"type\": \"message_appended\"}' WHERE seq = 3").await;
                let err = store.load(&"k".into()).await.unwrap_err();
                assert!(matches!(err, StoreError::CorruptEvent { seq: 3, .. }), "{err}");
                assert!(err.to_string().starts_with("debate `k`, event #3: corrupt event row"), "{err}");
                place.exec("UPDATE events SET payload = '{\"type\": \"telepathy_recorded\", \"who\": \"p0\"}' WHERE seq = 3").await;
                let err = store.load(&"k".into()).await.unwrap_err();
                assert_eq!(
                    err.to_string(),
                    "debate `k`, event #3: event type `message_appended` was written by a newer version of Agon; upgrade to read this debate"
                );
                place.exec("DELETE FROM events WHERE seq = 4").await;
                let err = store.events_after(&"k".into(), 3).await.unwrap_err();
                assert!(err.to_string().contains("event #4: corrupt event row: missing from the log"), "{err}");
            }

            #[tokio::test]
            async fn only_one_process_holds_the_run_lease() {
                let (store, _) = store().await;
                let id = "l".into();
                store.create_debate(&new_debate("l")).await.unwrap();
                let mine = store.acquire_lease(&id, "host-a:1", Duration::from_secs(30)).await.unwrap();
                let err = store.acquire_lease(&id, "host-b:2", Duration::from_secs(30)).await.unwrap_err();
                let text = err.to_string();
                assert!(text.starts_with("debate `l` is being run by another process since "), "{text}");
                assert!(text.contains("host-a:1"), "{text}");
                let again = store.acquire_lease(&id, "host-a:1", Duration::from_secs(30)).await.unwrap();
                assert_eq!(again.acquired_at, mine.acquired_at, "re-acquiring renews");
                let renewed = store.renew_lease(&mine, Duration::from_secs(60)).await.unwrap();
                assert!(renewed.expires_at > mine.expires_at);
                store.release_lease(&mine).await.unwrap();
                let theirs = store.acquire_lease(&id, "host-b:2", Duration::from_millis(50)).await.unwrap();
                assert!(matches!(store.renew_lease(&mine, Duration::from_secs(1)).await, Err(StoreError::LeaseLost { .. })));
                tokio::time::sleep(Duration::from_millis(120)).await;
                let taken_over = store.acquire_lease(&id, "host-c:3", Duration::from_secs(30)).await.unwrap();
                assert_eq!(taken_over.holder, "host-c:3", "an expired lease can be taken over");
                assert!(matches!(store.renew_lease(&theirs, Duration::from_secs(1)).await, Err(StoreError::LeaseLost { .. })));
                assert!(matches!(store.acquire_lease(&"ghost".into(), "x", Duration::from_secs(1)).await, Err(StoreError::DebateNotFound { .. })));
            }

            #[tokio::test]
            async fn persona_records_survive_concurrent_updates() {
                let (store, _) = store().await;
                let persona = "mara".into();
                assert!(store.persona_record(&persona).await.unwrap().is_none());
                let mut tasks = Vec::new();
                for _ in 0..8 {
                    let store = Arc::clone(&store);
                    tasks.push(tokio::spawn(async move {
                        for _ in 0..3 {
                            store
                                .update_persona_record(&"mara".into(), &|doc| {
                                    let n = doc.and_then(|d| d["debates"].as_u64()).unwrap_or(0);
                                    serde_json::json!({"debates": n + 1})
                                })
                                .await
                                .unwrap();
                        }
                    }));
                }
                for task in tasks {
                    task.await.unwrap();
                }
                let record = store.persona_record(&persona).await.unwrap().unwrap();
                assert_eq!(record.doc["debates"], 24);
                assert_eq!(record.version, 24);
                store.update_persona_record(&"ada".into(), &|_| serde_json::json!({"debates": 1})).await.unwrap();
                let all = store.persona_records().await.unwrap();
                let ids: Vec<&str> = all.iter().map(|r| r.persona.as_str()).collect();
                assert_eq!(ids, ["ada", "mara"]);
                assert_eq!(all[1].doc["debates"], 24);
            }

            #[tokio::test]
            async fn rubric_records_survive_concurrent_updates_and_stand_apart_from_personas() {
                let (store, _) = store().await;
                assert!(store.rubric_record("dialectic").await.unwrap().is_none());
                let mut tasks = Vec::new();
                for _ in 0..6 {
                    let store = Arc::clone(&store);
                    tasks.push(tokio::spawn(async move {
                        for _ in 0..3 {
                            store
                                .update_rubric_record("dialectic", &|doc| {
                                    let n = doc.and_then(|d| d["versions"].as_u64()).unwrap_or(0);
                                    serde_json::json!({"versions": n + 1})
                                })
                                .await
                                .unwrap();
                        }
                    }));
                }
                for task in tasks {
                    task.await.unwrap();
                }
                let record = store.rubric_record("dialectic").await.unwrap().unwrap();
                assert_eq!((record.key.as_str(), record.doc["versions"].as_u64(), record.version), ("dialectic", Some(18), 18));
                assert!(store.rubric_record("structured").await.unwrap().is_none());
                assert!(store.persona_records().await.unwrap().is_empty(), "rubrics are no personas");
            }

            #[tokio::test]
            async fn reopening_the_store_keeps_everything() {
                let (store, place) = store().await;
                store.create_debate(&new_debate("p")).await.unwrap();
                let all = events(30);
                store.append(&"p".into(), 0, &all).await.unwrap();
                drop(store);
                let again = place.open().await;
                assert_eq!(again.load(&"p".into()).await.unwrap().1, all.len() as u64);
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(12))]

                #[test]
                fn replaying_a_stored_log_equals_the_incremental_blackboard(
                    messages in 1usize..120,
                    cuts in prop::collection::vec(1usize..25, 1..40),
                    every in 0u64..60,
                    growth in 0u64..6,
                ) {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                    runtime.block_on(async {
                        let (store, _) = store().await;
                        store.create_debate(&new_debate("g")).await.unwrap();
                        let all = events(messages);
                        let mut log = DebateLog::open(Arc::clone(&store), "g".into(), SnapshotPolicy { every, growth }).await.unwrap();
                        let mut incremental = Blackboard::new();
                        let mut at = 0;
                        for cut in cuts.iter().cycle() {
                            if at >= all.len() {
                                break;
                            }
                            let end = (at + cut).min(all.len());
                            log.append(&all[at..end]).await.unwrap();
                            for e in &all[at..end] {
                                incremental.apply(e).unwrap();
                            }
                            at = end;
                        }
                        let (loaded, seq) = store.load(&"g".into()).await.unwrap();
                        assert_eq!(seq, all.len() as u64);
                        assert_eq!(loaded, incremental);
                    });
                }
            }
        }
    };
}

suite!(sqlite);
suite!(postgres);

mod faults {
    #![allow(clippy::unwrap_used)]

    use std::time::{Duration, Instant};

    use agon_store::{EventStore, SqliteStore, StoreError};
    use sqlx::{Connection, Executor};

    use crate::support::{self, new_debate};

    #[tokio::test]
    async fn an_unreachable_postgres_url_fails_fast_with_a_redacted_url() {
        let started = Instant::now();
        let err = agon_store::open("postgres://agon:hunter2@127.0.0.1:1/agon")
            .await
            .err()
            .unwrap();
        assert!(started.elapsed() < agon_store::CONNECT_TIMEOUT + Duration::from_secs(2));
        let text = err.to_string();
        assert!(
            text.starts_with("cannot open the store at postgres://agon:***@127.0.0.1:1/agon"),
            "{text}"
        );
        assert!(!text.contains("hunter2"));
    }

    #[tokio::test]
    async fn a_postgres_append_is_announced_to_listeners_of_other_processes() {
        let place = support::postgres_place().await;
        let writer = agon_store::PgStore::connect(&place.url()).await.unwrap();
        let mut appends = agon_store::PgStore::listen_appends(&place.url())
            .await
            .unwrap();
        writer.create_debate(&new_debate("seen")).await.unwrap();
        let events = support::events(1);
        writer.append(&"seen".into(), 0, &events).await.unwrap();
        let id = tokio::time::timeout(Duration::from_secs(5), appends.recv())
            .await
            .expect("no announcement within 5 s")
            .unwrap();
        assert_eq!(id.as_str(), "seen");
    }

    #[tokio::test]
    async fn the_test_server_has_pgvector() {
        let place = support::postgres_place().await;
        let mut c = sqlx::PgConnection::connect(&place.url()).await.unwrap();
        c.execute("CREATE EXTENSION vector").await.unwrap();
        let version: String =
            sqlx::query_scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                .fetch_one(&mut c)
                .await
                .unwrap();
        let (major, minor) = version
            .split_once('.')
            .map(|(a, b)| (a.to_owned(), b.split('.').next().unwrap_or("0").to_owned()))
            .unwrap();
        assert!(
            (major.parse::<u32>().unwrap(), minor.parse::<u32>().unwrap()) >= (0, 8),
            "pgvector {version}"
        );
        let distance: f64 = sqlx::query_scalar("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert!((distance - 1.0).abs() < 1e-9);
    }

    #[tokio::test]
    async fn an_unknown_scheme_is_refused() {
        let err = agon_store::open("mysql://root:pw@localhost/x")
            .await
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "unsupported store URL `mysql://root:***@localhost/x`: use sqlite://PATH or postgres://…"
        );
    }

    #[tokio::test]
    async fn an_unopenable_sqlite_path_is_a_typed_error() {
        let err = agon_store::open("sqlite:///proc/no/such/dir/agon.db")
            .await
            .err()
            .unwrap();
        assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
        assert!(
            err.to_string().contains("/proc/no/such/dir/agon.db"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_locked_sqlite_file_is_a_typed_error_with_the_url() {
        let place = support::sqlite_place().await;
        let store = SqliteStore::open_with_busy_timeout(&place.url(), Duration::from_millis(200))
            .await
            .unwrap();
        store.create_debate(&new_debate("z")).await.unwrap();
        let mut other = sqlx::SqliteConnection::connect(&place.url()).await.unwrap();
        other.execute("BEGIN IMMEDIATE").await.unwrap();
        let err = store
            .append(&"z".into(), 0, &support::events(2)[..1])
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Locked { .. }), "{err}");
        assert!(err.to_string().contains(&place.url()), "{err}");
        other.execute("ROLLBACK").await.unwrap();
        assert_eq!(
            store
                .append(&"z".into(), 0, &support::events(2)[..1])
                .await
                .unwrap(),
            1
        );
    }
}
