//! `assemble` cost against transcript length: 100 / 1,000 / 10,000 messages,
//! 3 and 8 personas, a miniround-1 take and a closing, default budget.

use std::time::Duration;

use agon_context::{
    Assembler, CachedCounter, ContextBudget, ContextExtras, Phase, TiktokenCounter, TokenCounter,
};
use agon_core::{Blackboard, synthetic};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn bench_assemble(c: &mut Criterion) {
    let assembler = Assembler::default();
    assembler.counter().count("warm up the tokenizer");
    let budget = ContextBudget::default();
    let extras = ContextExtras::default();
    let phases = [
        (
            "take",
            Phase::Take {
                aspect: "opportunity".into(),
                miniround: 1,
            },
        ),
        ("closing", Phase::Closing),
    ];
    for (label, phase) in &phases {
        let mut group = c.benchmark_group(format!("assemble/{label}"));
        for personas in [3, 8] {
            for messages in [100, 1_000, 10_000] {
                let board =
                    Blackboard::replay(&synthetic::debate(personas, messages)).unwrap_or_default();
                group.bench_with_input(
                    BenchmarkId::new(format!("{personas}p"), messages),
                    &board,
                    |b, board| {
                        b.iter(|| {
                            assembler
                                .assemble(board, "p0", phase, budget, &extras)
                                .map(|c| c.total_tokens)
                        })
                    },
                );
            }
        }
        group.finish();
    }
    // One cached counter per debate, as the orchestrator keeps it: repeated
    // items (ledger lines, recent messages) are tokenized once.
    let mut group = c.benchmark_group("assemble_cached/take");
    for personas in [3, 8] {
        for messages in [100, 1_000, 10_000] {
            let cached = Assembler::new(CachedCounter::new(TiktokenCounter::default()));
            let board =
                Blackboard::replay(&synthetic::debate(personas, messages)).unwrap_or_default();
            group.bench_with_input(
                BenchmarkId::new(format!("{personas}p"), messages),
                &board,
                |b, board| {
                    b.iter(|| {
                        cached
                            .assemble(board, "p0", &phases[0].1, budget, &extras)
                            .map(|c| c.total_tokens)
                    })
                },
            );
        }
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = config(); targets = bench_assemble }
criterion_main!(benches);
