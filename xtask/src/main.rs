//! `cargo xtask`: Agon's developer workflows.
//!
//! - `cargo xtask test`  — format check, clippy (warnings are errors), the whole test suite;
//! - `cargo xtask bench [core|context]` — the criterion benchmarks (default: all).

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

const USAGE: &str = "usage: cargo xtask <test|bench [core|context]>";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sh = Shell::new()?;
    sh.change_dir(workspace_root()?);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["test"] => test(&sh),
        ["bench"] => bench(&sh, &["core", "context"]),
        ["bench", which @ ..] => bench(&sh, which),
        _ => bail!("{USAGE}"),
    }
}

fn workspace_root() -> Result<std::path::PathBuf> {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").context("run through `cargo xtask`")?;
    std::path::Path::new(&manifest)
        .parent()
        .map(std::path::Path::to_path_buf)
        .context("xtask has no parent directory")
}

fn test(sh: &Shell) -> Result<()> {
    println!("== cargo fmt --check");
    cmd!(sh, "cargo fmt --all -- --check").run()?;
    println!("== cargo clippy");
    cmd!(
        sh,
        "cargo clippy --workspace --all-targets --all-features -- -D warnings"
    )
    .run()?;
    println!("== doctests");
    // nextest does not run doctests; run them first so the suite's summary
    // is the last thing printed.
    cmd!(sh, "cargo test --workspace --all-features --doc").run()?;
    println!("== tests");
    let nextest = cmd!(sh, "cargo nextest --version")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok();
    if nextest {
        cmd!(
            sh,
            "cargo nextest run --workspace --all-features --no-fail-fast"
        )
        .run()?;
    } else {
        cmd!(sh, "cargo test --workspace --all-features --no-fail-fast").run()?;
    }
    Ok(())
}

fn bench(sh: &Shell, which: &[&str]) -> Result<()> {
    for name in which {
        match *name {
            "core" => cmd!(
                sh,
                "cargo bench -p agon-core --features synthetic --bench apply"
            )
            .run()?,
            "context" => cmd!(sh, "cargo bench -p agon-context --bench assemble").run()?,
            other => bail!("unknown benchmark {other:?}; {USAGE}"),
        }
    }
    Ok(())
}
