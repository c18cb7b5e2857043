//! `Blackboard::apply` cost: replaying whole logs, and appending one message
//! to a board that already holds 100 / 1,000 / 10,000 messages.

use std::time::Duration;

use agon_core::{Blackboard, DebateEvent, DialogueMessage, MessageKind};
use agon_testkit::synthetic;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn one_more_message(board: &Blackboard) -> DebateEvent {
    let last = board.messages().last().map(|m| m.time).unwrap_or_default();
    DebateEvent::MessageAppended {
        message: DialogueMessage {
            id: "bench-extra".into(),
            persona: "p0".into(),
            kind: MessageKind::Take,
            aspect: Some("opportunity".into()),
            round: 3,
            miniround: Some(1),
            crux_room: None,
            content: "One more point for the benchmark.".into(),
            time: last,
            reply_to: board.messages().last().map(|m| m.id.clone()),
            meta: None,
        },
    }
}

fn bench_apply(c: &mut Criterion) {
    let mut replay = c.benchmark_group("apply/replay");
    for personas in [3, 8] {
        for messages in [100, 1_000, 10_000] {
            let events = synthetic::debate(personas, messages);
            replay.throughput(Throughput::Elements(events.len() as u64));
            replay.bench_with_input(
                BenchmarkId::new(format!("{personas}p"), messages),
                &events,
                |b, events| {
                    b.iter(|| Blackboard::replay(events).map(|board| board.events_applied()))
                },
            );
        }
    }
    replay.finish();

    let mut one = c.benchmark_group("apply/one_message");
    for personas in [3, 8] {
        for messages in [100, 1_000, 10_000] {
            let board =
                Blackboard::replay(&synthetic::debate(personas, messages)).unwrap_or_default();
            let event = one_more_message(&board);
            one.bench_with_input(
                BenchmarkId::new(format!("{personas}p"), messages),
                &board,
                |b, board| {
                    b.iter_batched(
                        || board.clone(),
                        |mut board| board.apply(&event).map(|()| board),
                        BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    one.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = config(); targets = bench_apply }
criterion_main!(benches);
