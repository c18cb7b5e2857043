//! Provider faults end to end (issue 32): every protocol against the
//! fault-injecting provider (`agon_testkit::faults`: 429 with
//! `Retry-After`, 500, 503, 529, resets, slow headers, stalls, truncated
//! answers, malformed JSON, empty choices, schema-invalid and whitespace
//! answers) at a 20 % fault rate. Every debate finishes, or fails with an
//! error naming the provider and the step and then finishes on a resume;
//! and it ends with as many messages as a run on a healthy provider.

#[path = "../benches/support/faults.rs"]
pub(crate) mod runner;

use agon_testkit::faults::{Fault, Planned, Target};
use runner::{PROTOCOLS, run, run_planned};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_survives_a_provider_that_faults_a_fifth_of_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    for protocol in PROTOCOLS {
        let healthy = run(protocol, 0.0, 1, dir.path()).await;
        assert!(healthy.finished_first, "{protocol}: {:?}", healthy.error);
        assert_eq!(healthy.faults.injected(), 0);
        for seed in [11, 12] {
            let o = run(protocol, 0.2, seed, dir.path()).await;
            assert!(
                o.faults.injected() > 0,
                "{protocol} seed {seed}: no fault drawn"
            );
            if let Some(error) = &o.error {
                // "debate `ID`: utterance of Theo (take/aspect-2/0/theo): faulty: …"
                assert!(
                    error.contains("debate `") && error.contains(": faulty"),
                    "{protocol} seed {seed}: the error names neither debate, step nor provider: {error}"
                );
            }
            assert!(
                o.finished,
                "{protocol} seed {seed}: not finished after a resume: {o:?}"
            );
            assert_eq!(
                o.messages, healthy.messages,
                "{protocol} seed {seed}: messages lost or repeated ({o:?})"
            );
        }
    }
}

/// The faults that used to end debates, surely met: every protocol's first
/// streamed answer is cut mid-way, a streamed answer three requests later
/// stalls (a turn is generated three times at most: the gap keeps the two
/// planned faults off one turn), and
/// its first structured answer is truncated JSON (a protocol that asks for
/// structured answers: the small deliberation, memory off, asks for none),
/// on top of a fifth of the requests faulting at random. Every debate finishes in its first run (no
/// resume) with the messages of a healthy run; the log names the faults
/// each protocol met.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_finishes_without_a_resume_after_cut_streams_stalls_and_truncated_json() {
    let dir = tempfile::tempdir().unwrap();
    let plan = vec![
        Planned::next(Target::Streamed, Fault::Truncated),
        // Three streamed requests later: not the regenerated turn's.
        Planned {
            target: Target::Streamed,
            fault: Fault::Stall,
            skip: 3,
        },
        Planned::next(Target::Structured, Fault::Truncated),
    ];
    for protocol in PROTOCOLS {
        let healthy = run(protocol, 0.0, 1, dir.path()).await;
        let o = run_planned(protocol, 0.2, 11, plan.clone(), dir.path()).await;
        let met: Vec<String> = o.faults.met.iter().map(ToString::to_string).collect();
        println!(
            "{protocol}: {} requests, faults met: {}",
            o.faults.requests,
            met.join(", ")
        );
        for (target, fault) in [
            (Target::Streamed, Fault::Truncated),
            (Target::Streamed, Fault::Stall),
            (Target::Structured, Fault::Truncated),
        ] {
            if healthy
                .faults
                .requests_by
                .get(&target)
                .copied()
                .unwrap_or(0)
                == 0
            {
                continue;
            }
            assert!(
                o.faults.met(target, fault),
                "{protocol}: no {} answer met `{}`: {met:?}",
                target.name(),
                fault.name()
            );
        }
        assert!(
            o.finished_first,
            "{protocol}: needed a resume: {:?} (faults met: {met:?})",
            o.error
        );
        assert_eq!(
            o.messages, healthy.messages,
            "{protocol}: messages lost or repeated (faults met: {met:?})"
        );
    }
}

/// One structured debate against a provider that injects only `plan`:
/// its transcript, the text streamed for its first turn before that turn
/// was discarded (with the discard's reason), and what the provider did.
async fn planned_transcript(
    plan: Vec<Planned>,
    dir: &std::path::Path,
    name: &str,
) -> (
    Vec<String>,
    String,
    Option<String>,
    agon_testkit::faults::FaultStats,
) {
    use agon_orchestrator::{DebateUpdate, RunControl, RunOutcome};
    use futures::StreamExt;

    let server = agon_testkit::faults::FaultServer::start_planned(
        0.0,
        1,
        std::time::Duration::from_millis(1500),
        plan,
    )
    .await
    .unwrap();
    let url = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
    let orch = agon_app::orchestrator_for(agon_store::open(&url).await.unwrap());
    let id = orch.create(&runner::config("structured")).await.unwrap();
    let mut updates = orch.subscribe();
    let watcher = tokio::spawn(async move {
        // Each turn's streamed text (parallel turns stream at once), until
        // the first discard.
        let mut streamed: std::collections::BTreeMap<String, String> = Default::default();
        while let Some(u) = updates.next().await {
            match u {
                DebateUpdate::Token { turn, delta, .. } => {
                    streamed
                        .entry(turn.to_string())
                        .or_default()
                        .push_str(&delta);
                }
                DebateUpdate::TurnDiscarded { turn, reason, .. } => {
                    let partial = streamed.remove(&turn.to_string()).unwrap_or_default();
                    return (partial, Some(reason));
                }
                DebateUpdate::Event { event, .. }
                    if matches!(*event, agon_core::DebateEvent::DebateFinished { .. }) =>
                {
                    break;
                }
                _ => {}
            }
        }
        (String::new(), None)
    });
    let outcome = orch
        .run(&id, &runner::models(server.url()), RunControl::default())
        .await
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished, "{name}");
    let (partial, discarded) = watcher.await.unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    assert!(bb.warnings().is_empty(), "{name}: {:?}", bb.warnings());
    let transcript = bb.messages().iter().map(|m| m.content.clone()).collect();
    (transcript, partial, discarded, server.stats())
}

/// The regenerate path, deterministically: the first streamed answer
/// breaks off after its first half (its first tokens already streamed to
/// the watchers), the turn is discarded and generated again, and the
/// message recorded is the second, complete answer: the transcript is the
/// healthy run's, message for message, with no partial text in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_breaks_off_is_generated_again_and_only_the_second_answer_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let (healthy, _, healthy_discard, none) =
        planned_transcript(Vec::new(), dir.path(), "healthy").await;
    assert_eq!(none.met.len(), 0);
    assert!(healthy_discard.is_none(), "{healthy_discard:?}");
    let cut = vec![Planned::next(Target::Streamed, Fault::Truncated)];
    let (broken, partial, discarded, stats) = planned_transcript(cut, dir.path(), "cut").await;
    assert_eq!(stats.met.len(), 1, "{:?}", stats.met);
    assert!(stats.met(Target::Streamed, Fault::Truncated));
    let reason = discarded.expect("the broken turn was discarded");
    assert!(
        reason.contains("broke off") && reason.contains("generating it again"),
        "{reason}"
    );
    // Tokens of the first answer reached the watchers before it broke off,
    // and they were only a part of it.
    assert!(
        !partial.trim().is_empty(),
        "no token streamed before the break"
    );
    // (The cut text ends inside one answer; cleaning may drop a leading
    // speaker label, so its end is what the whole answer contains.)
    let cut = partial.trim();
    let end: String = cut
        .chars()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let whole = healthy
        .iter()
        .find(|m| m.contains(&end))
        .unwrap_or_else(|| panic!("the cut text {partial:?} is part of no message"));
    assert!(
        !whole.trim_end().ends_with(&end),
        "the cut came at the end: {partial:?}"
    );
    // What was recorded is the second answer, whole, and nothing else.
    assert_eq!(broken, healthy);
}
