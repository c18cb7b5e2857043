//! `assemble` cost against transcript length: 100 / 1,000 / 10,000 messages,
//! 3 and 8 personas, a miniround-1 take and a closing, default budget.

use std::time::Duration;

use agon_context::{
    Assembler, CachedCounter, ContextBudget, ContextExtras, Phase, TiktokenCounter, TokenCounter,
};
use agon_core::Blackboard;
use agon_testkit::synthetic;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// Runs `assembler` on every synthetic board for `phase` in one criterion group.
fn bench_group<C: TokenCounter>(
    c: &mut Criterion,
    name: &str,
    assembler: &Assembler<C>,
    boards: &[(usize, usize, Blackboard)],
    phase: &Phase,
) {
    let budget = ContextBudget::default();
    let extras = ContextExtras::default();
    let mut group = c.benchmark_group(name);
    for (personas, messages, board) in boards {
        group.bench_with_input(
            BenchmarkId::new(format!("{personas}p"), messages),
            board,
            |b, board| {
                b.iter(|| {
                    assembler
                        .assemble(board, "p0", phase, budget, &extras)
                        .map(|c| c.total_tokens)
                })
            },
        );
    }
    group.finish();
}

fn bench_assemble(c: &mut Criterion) {
    let boards: Vec<(usize, usize, Blackboard)> = [3, 8]
        .into_iter()
        .flat_map(|personas| [100, 1_000, 10_000].map(|messages| (personas, messages)))
        .map(|(personas, messages)| {
            let board =
                Blackboard::replay(&synthetic::debate(personas, messages)).unwrap_or_default();
            (personas, messages, board)
        })
        .collect();
    let take = Phase::Take {
        aspect: "opportunity".into(),
        miniround: 1,
    };
    let assembler = Assembler::default();
    assembler.counter().count("warm up the tokenizer");
    bench_group(c, "assemble/take", &assembler, &boards, &take);
    bench_group(c, "assemble/closing", &assembler, &boards, &Phase::Closing);
    // A cached counter, as the orchestrator keeps one per debate: after the
    // warm-up, repeated items (ledger lines, recent messages) cost a lookup.
    let cached = Assembler::new(CachedCounter::new(TiktokenCounter::default()));
    bench_group(c, "assemble_cached/take", &cached, &boards, &take);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = config(); targets = bench_assemble }
criterion_main!(benches);
