//! `cargo xtask`: Agon's developer workflows.
//!
//! - `cargo xtask test [--llama-cpp]`  — format check, one build linted by clippy (warnings are errors), the whole
//!   test suite (with `--llama-cpp`, also the llama.cpp backend, which needs cmake and libclang);
//! - `cargo xtask bench [core|context|store|store-size|scale|load|kill|faults|local|debate|dialectic|fidelity|memory] | bench memory --dataset FILE | bench fidelity --local` — the criterion benchmarks and measurement runs (default: all);
//! - `cargo xtask db start|stop|url|status` — the embedded PostgreSQL used by tests and benches; `db fresh NAME` drops and creates the database NAME on it and prints its URL;
//! - `cargo xtask models` — fetch and verify the local model files;
//! - `cargo xtask mcp-servers` — install the MCP servers the tests run (npm);
//! - `cargo xtask doc` — the workspace's documentation, rustdoc's warnings (broken links) denied;
//! - `cargo xtask demo` — a short debate on the local models (3 personas, 2 aspects, a crux room).

mod browser;
mod db;
mod doc_in_build;
mod mcp_servers;
mod models;

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

const USAGE: &str = "usage: cargo xtask <test [--llama-cpp] | bench [core|context|store|store-size|scale|load|kill|faults|local|llama-cpp|debate|dialectic|deliberation|fidelity|memory|evidence|plan|requirements] | bench requirements [--model SPEC] | bench deliberation --planted | bench memory --dataset FILE | bench fidelity --local | bench evidence --local | db start|stop|url|status | db fresh NAME | models | mcp-servers | doc | demo>";

fn main() -> Result<()> {
    if let Some(code) = doc_in_build::run_as_wrapper()? {
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sh = Shell::new()?;
    let root = workspace_root()?;
    sh.change_dir(&root);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["test"] => test(&sh, &root, false),
        ["test", "--llama-cpp"] => test(&sh, &root, true),
        ["bench"] => bench(
            &sh,
            &root,
            &[
                "core",
                "context",
                "store",
                "local",
                "debate",
                "dialectic",
                "deliberation",
                "fidelity",
                "memory",
                "evidence",
            ],
        ),
        ["bench", "deliberation", "--planted"] => {
            models::fetch(&sh, &root)?;
            let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(&root)?);
            cmd!(
                sh,
                "cargo bench -p agon-orchestrator --bench deliberation -- --planted"
            )
            .run()?;
            Ok(())
        }
        ["bench", "fidelity", "--local"] => {
            models::fetch(&sh, &root)?;
            let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(&root)?);
            cmd!(
                sh,
                "cargo bench -p agon-orchestrator --bench fidelity -- --local"
            )
            .run()?;
            Ok(())
        }
        ["bench", "requirements", "--model", spec] => {
            models::fetch(&sh, &root)?;
            let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(&root)?);
            cmd!(
                sh,
                "cargo bench -p agon-orchestrator --bench requirements -- --model {spec}"
            )
            .run()?;
            Ok(())
        }
        ["bench", "evidence", "--local"] => {
            models::fetch(&sh, &root)?;
            let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(&root)?);
            cmd!(
                sh,
                "cargo bench -p agon-orchestrator --bench evidence -- --local"
            )
            .run()?;
            Ok(())
        }
        ["bench", "memory", "--dataset", file] => {
            models::fetch(&sh, &root)?;
            let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(&root)?);
            let file = std::path::absolute(file)?;
            cmd!(
                sh,
                "cargo bench -p agon-memory --bench recall -- --dataset {file}"
            )
            .run()?;
            Ok(())
        }
        ["bench", which @ ..] => bench(&sh, &root, which),
        ["db", "fresh", name] => {
            println!("{}", db::Postgres::new(&root).fresh_database(&sh, name)?);
            Ok(())
        }
        ["db", action] => db::run(&sh, &root, action),
        ["models"] => models::fetch(&sh, &root),
        ["doc"] => doc(&sh, &documented_workspace()),
        ["mcp-servers"] => {
            println!("{}", mcp_servers::ensure(&sh, &root)?.display());
            Ok(())
        }
        ["demo", rest @ ..] => demo(&sh, &root, rest),
        _ => bail!("{USAGE}"),
    }
}

fn workspace_root() -> Result<std::path::PathBuf> {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_path_buf)
        .context("xtask has no parent directory")
}

/// The feature arguments the suite is built with: the default features,
/// plus `llama-cpp` (which builds llama.cpp from source with cmake and
/// libclang) when asked.
fn test_features(llama_cpp: bool) -> &'static [&'static str] {
    if llama_cpp {
        &["--features", "agon-local/llama-cpp,agon-cli/llama-cpp"]
    } else {
        &[]
    }
}

/// The phases of a run and how long each took, printed as a table when
/// the run ends (failed or not), so a slow phase shows.
struct Phases {
    done: Vec<(&'static str, std::time::Duration)>,
    current: Option<(&'static str, std::time::Instant)>,
}

impl Phases {
    fn new() -> Self {
        Self {
            done: Vec::new(),
            current: None,
        }
    }

    /// Ends the current phase and starts `name`.
    fn start(&mut self, name: &'static str) {
        self.end();
        println!("== {name}");
        self.current = Some((name, std::time::Instant::now()));
    }

    fn end(&mut self) {
        if let Some((name, started)) = self.current.take() {
            self.done.push((name, started.elapsed()));
        }
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        self.end();
        let total: f64 = self.done.iter().map(|(_, d)| d.as_secs_f64()).sum();
        println!("\n| phase | seconds |\n|---|---|");
        for (name, took) in &self.done {
            println!("| {name} | {:.0} |", took.as_secs_f64());
        }
        println!("| **total** | {total:.0} |");
    }
}

fn test(sh: &Shell, root: &std::path::Path, llama_cpp: bool) -> Result<()> {
    let features = test_features(llama_cpp);
    // The MCP servers the tests run come from the npm registry: installed
    // while the workspace builds (a fresh clone's `npm ci` is mostly
    // downloads, ~10 s of waiting), taken before the tests; the phase of
    // that name below is the wait that is left.
    let mcp_install = {
        let root = root.to_path_buf();
        std::thread::spawn(move || mcp_servers::ensure(&Shell::new()?, &root))
    };
    let mut phases = Phases::new();
    phases.start("cargo fmt --check");
    cmd!(sh, "cargo fmt --all -- --check").run()?;
    // One build serves clippy, rustdoc and the tests: xtask runs as cargo's
    // workspace wrapper (`doc_in_build`), and for each of the workspace's
    // own crates it runs clippy's driver (its lints, then the code), as
    // `cargo clippy` runs it for a check, so the dependencies are built
    // once, for the tests, instead of checked for clippy and built again;
    // beside each documented library it runs rustdoc with warnings denied,
    // on the metadata the build made (`cargo doc` would check every
    // dependency again, in a mode the build does not share). Every target
    // (tests, benches, examples) is linted, as `cargo clippy --all-targets
    // -- -D warnings` lints them (the benches only checked, not built:
    // nothing here runs them, `doc_in_build::checked_only_if_bench`); the
    // doctests and the suite below reuse the build (same wrapper, same
    // flags). `--timings` leaves each unit's
    // build time in target/cargo-timings/ (what a slow build spent on).
    phases.start("build, with clippy's lints and rustdoc's (warnings are errors)");
    let metadata = workspace_metadata(sh)?;
    let wrapper = doc_in_build::wrapper_env(&metadata.target_dir, &clippy_driver(sh)?)?;
    let _wrapper: Vec<_> = wrapper
        .iter()
        .map(|(name, value)| sh.push_env(name, value))
        .collect();
    let _clippy_args = sh.push_env(
        "CLIPPY_ARGS",
        "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
    );
    let (document, marks) = doc_in_build::document_env(&metadata.target_dir)?;
    cmd!(
        sh,
        "cargo test --workspace --all-targets --no-run --timings {features...}"
    )
    .env(document, marks)
    .run()?;
    let undocumented =
        doc_in_build::check_marks(&metadata.target_dir, &metadata.documented_libraries)?;
    if !undocumented.is_empty() {
        // Libraries this build did not compile (fresh from an earlier
        // build): `cargo doc` checks them.
        phases.start("API docs of the libraries the build did not compile");
        println!("not compiled by this build, so documented by cargo doc: {undocumented:?}");
        let packages = undocumented
            .iter()
            .flat_map(|package| ["-p", package.as_str()]);
        let packages: Vec<&str> = packages.collect();
        doc(sh, &packages)?;
    }
    // Each layer builds without the layers above it, default features off
    // (no PostgreSQL, no local model): crates that depend on agon-memory
    // alone and on agon-context alone, checked without the rest of the
    // workspace (their features resolved for the two of them, not unified
    // with the workspace's; `alone` asserts at compile time that
    // agon-memory came without PostgreSQL). Their tests run in the suite
    // below; `cargo test -p downstream-memory-alone --features alone` runs
    // them built alone.
    phases.start("downstream crates, without the workspace");
    cmd!(
        sh,
        "cargo check --all-targets -p downstream-memory-alone -p downstream-context-alone
            --features downstream-memory-alone/alone"
    )
    .run()?;
    // The published crates package: dependency versions, metadata, the
    // files each one includes (not rebuilt from the tarballs: the build
    // above is the check that they compile). Offline: the build has just
    // brought the registry's index entries for every dependency into
    // cargo's cache, which the versions resolve against (asking the
    // crates.io index again took ~20 s of the 21).
    phases.start("cargo package");
    cmd!(
        sh,
        "cargo package --workspace --no-verify --allow-dirty --quiet --offline
            --exclude agon-testkit --exclude xtask
            --exclude downstream-memory-alone --exclude downstream-context-alone"
    )
    .run()?;
    phases.start("doctests");
    // nextest does not run doctests; run them first so the suite's summary
    // is the last thing printed.
    cmd!(sh, "cargo test --workspace {features...} --doc").run()?;
    phases.start("models");
    models::fetch(sh, root)?;
    let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
    phases.start("MCP servers");
    let mcp_dir = mcp_install
        .join()
        .map_err(|_| anyhow::anyhow!("installing the MCP servers panicked"))??;
    let _mcp = sh.push_env("AGON_MCP_SERVERS_DIR", mcp_dir);
    phases.start("browser");
    let _browser = sh.push_env("AGON_BROWSER", browser::ensure(sh)?);
    phases.start("PostgreSQL");
    let pg = db::Postgres::new(root);
    let was_running = pg.running(sh);
    pg.start(sh)?;
    pg.drop_test_databases(sh)?;
    remove_test_scratch()?;
    let _url = sh.push_env("AGON_TEST_DATABASE_URL", pg.url());
    // One compute thread per test process: the suite runs four tests at a
    // time on two cores, and the in-process models' thread pool (one per
    // test process) spins while it waits, so at two threads each the pools
    // oversubscribe the cores several-fold (the suite: 261 s and 9.5
    // CPU-minutes with the pools at two threads, 194 s and 4.7 with one,
    // side by side on 2026-11-28). `AGON_THREADS` sizes agon-local's pool
    // and the embedder's threads.
    let _threads = sh.push_env("AGON_THREADS", "1");
    // A failing test reports its message and its place; the frames of a
    // backtrace would bury them (CI shows a failure's first lines). Re-run
    // the one test with RUST_BACKTRACE=1 for the frames.
    let _backtrace = sh.push_env("RUST_BACKTRACE", "0");
    phases.start("tests (build and run)");
    let nextest = cmd!(sh, "cargo nextest --version")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok();
    let result = if nextest {
        cmd!(
            sh,
            "cargo nextest run --workspace {features...} --no-fail-fast"
        )
        .run()
    } else {
        cmd!(sh, "cargo test --workspace {features...} --no-fail-fast").run()
    };
    if !was_running {
        pg.stop(sh)?;
    }
    Ok(result?)
}

/// `cargo doc --no-deps` of `packages` (a cargo selection: `-p NAME`…, or
/// [`documented_workspace`]) with rustdoc's warnings denied (a
/// broken intra-doc link, a link to a private item, a missing doc where a
/// crate warns of it). Part of `cargo xtask test`, and `cargo xtask doc`
/// alone.
fn doc(sh: &Shell, packages: &[&str]) -> Result<()> {
    let _deny = sh.push_env("RUSTDOCFLAGS", "-D warnings");
    // rustdoc lints the docs; clippy's wrapper, if set, has nothing to do here.
    cmd!(sh, "cargo doc --no-deps {packages...}")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .run()?;
    Ok(())
}

/// `cargo doc`'s selection of the crates a user reads: not the build
/// tooling, the test kit or the downstream checks (their dependencies
/// would be checked for nothing).
fn documented_workspace() -> Vec<&'static str> {
    let mut selection = vec!["--workspace"];
    for package in doc_in_build::UNDOCUMENTED {
        selection.extend(["--exclude", package]);
    }
    selection
}

/// What `cargo xtask test` needs to know of the workspace.
struct WorkspaceMetadata {
    target_dir: std::path::PathBuf,
    /// The packages whose library the API docs cover.
    documented_libraries: Vec<String>,
}

fn workspace_metadata(sh: &Shell) -> Result<WorkspaceMetadata> {
    let text = cmd!(sh, "cargo metadata --format-version 1 --no-deps")
        .quiet()
        .read()?;
    let metadata: serde_json::Value =
        serde_json::from_str(&text).context("reading cargo metadata's output")?;
    let target_dir = metadata["target_directory"]
        .as_str()
        .context("cargo metadata gave no target_directory")?
        .into();
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata gave no packages")?;
    let documented_libraries = packages
        .iter()
        .filter(|package| {
            package["targets"].as_array().is_some_and(|targets| {
                targets.iter().any(|target| {
                    target["kind"]
                        .as_array()
                        .is_some_and(|kinds| kinds.iter().any(|kind| kind == "lib"))
                        && target["doc"].as_bool() != Some(false)
                })
            })
        })
        .filter_map(|package| package["name"].as_str())
        .filter(|name| !doc_in_build::UNDOCUMENTED.contains(name))
        .map(str::to_owned)
        .collect();
    Ok(WorkspaceMetadata {
        target_dir,
        documented_libraries,
    })
}

/// clippy's driver, from the toolchain that runs (the rustup proxy on
/// `PATH` when the sysroot has none).
fn clippy_driver(sh: &Shell) -> Result<std::path::PathBuf> {
    let sysroot = cmd!(sh, "rustc --print sysroot").quiet().read()?;
    let driver = std::path::Path::new(sysroot.trim()).join("bin/clippy-driver");
    if driver.exists() {
        return Ok(driver);
    }
    cmd!(sh, "clippy-driver --version")
        .quiet()
        .ignore_stdout()
        .run()
        .context("clippy-driver is missing from the toolchain (rustup component add clippy)")?;
    Ok("clippy-driver".into())
}

/// Fetches the local models if missing, builds the CLI, and runs the demo
/// debate (`examples/demo.toml`) on them, timing the run.
fn demo(sh: &Shell, root: &std::path::Path, extra: &[&str]) -> Result<()> {
    models::fetch(sh, root)?;
    let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
    cmd!(sh, "cargo build -p agon-cli").run()?;
    let agon = root.join("target/debug/agon");
    let started = std::time::Instant::now();
    cmd!(sh, "{agon} debate --config examples/demo.toml {extra...}").run()?;
    println!(
        "demo debate: {:.0} s (after the build)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Removes the SQLite files earlier test runs left in the suites' scratch
/// directories under the system temp dir (each test names its own file there).
fn remove_test_scratch() -> Result<()> {
    for suite in [
        "agon-store-tests",
        "agon-orchestrator-tests",
        "agon-memory-tests",
        "agon-server-tests",
        "agon-app-tests",
    ] {
        let dir = std::env::temp_dir().join(suite);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    Ok(())
}

/// Runs `bench` with `AGON_BENCH_DATABASE_URL` naming a fresh database `name` on
/// the embedded PostgreSQL (started for the run and stopped after, unless it was
/// already running).
fn with_bench_database(
    sh: &Shell,
    root: &std::path::Path,
    name: &str,
    bench: impl FnOnce() -> xshell::Result<()>,
) -> Result<()> {
    let pg = db::Postgres::new(root);
    let was_running = pg.running(sh);
    pg.start(sh)?;
    let result = pg.fresh_database(sh, name).and_then(|url| {
        let _url = sh.push_env("AGON_BENCH_DATABASE_URL", url);
        Ok(bench()?)
    });
    if !was_running {
        pg.stop(sh)?;
    }
    result
}

fn bench(sh: &Shell, root: &std::path::Path, which: &[&str]) -> Result<()> {
    for name in which {
        match *name {
            "local" => {
                models::fetch(sh, root)?;
                let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
                cmd!(
                    sh,
                    "cargo run --release -p agon-local --example bench_local"
                )
                .run()?;
            }
            "llama-cpp" => {
                models::fetch(sh, root)?;
                let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
                cmd!(
                    sh,
                    "cargo run --release -p agon-local --features llama-cpp --example bench_local"
                )
                .run()?;
            }
            "store" => with_bench_database(sh, root, "agon_bench_store", || {
                cmd!(sh, "cargo bench -p agon-store --bench store").run()
            })?,
            "kill" => with_bench_database(sh, root, "agon_bench_kill", || {
                cmd!(sh, "cargo bench -p agon-cli --bench kill").run()
            })?,
            "load" => with_bench_database(sh, root, "agon_bench_load", || {
                cmd!(sh, "cargo bench -p agon-cli --bench load").run()
            })?,
            "scale" => with_bench_database(sh, root, "agon_bench_scale", || {
                cmd!(sh, "cargo bench -p agon-cli --bench scale").run()
            })?,
            "store-size" => with_bench_database(sh, root, "agon_bench_size", || {
                cmd!(sh, "cargo bench -p agon-store --bench store_size").run()
            })?,
            "core" => cmd!(sh, "cargo bench -p agon-core --bench apply").run()?,
            "context" => cmd!(sh, "cargo bench -p agon-context --bench assemble").run()?,
            "debate" => cmd!(sh, "cargo bench -p agon-orchestrator --bench debate").run()?,
            "plan" => cmd!(sh, "cargo bench -p agon-protocol --bench plan").run()?,
            "dialectic" => cmd!(sh, "cargo bench -p agon-orchestrator --bench dialectic").run()?,
            "faults" => cmd!(sh, "cargo bench -p agon-orchestrator --bench faults").run()?,
            "deliberation" => {
                cmd!(sh, "cargo bench -p agon-orchestrator --bench deliberation").run()?;
                cmd!(
                    sh,
                    "cargo bench -p agon-orchestrator --bench deliberation -- --turns 1000 --delay-ms 50"
                )
                .run()?
            }
            "requirements" => {
                models::fetch(sh, root)?;
                let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
                cmd!(sh, "cargo bench -p agon-orchestrator --bench requirements").run()?
            }
            "fidelity" => {
                models::fetch(sh, root)?;
                let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
                cmd!(sh, "cargo bench -p agon-orchestrator --bench fidelity").run()?
            }
            "evidence" => {
                models::fetch(sh, root)?;
                let _models = sh.push_env("AGON_MODELS_DIR", models::models_dir(root)?);
                cmd!(sh, "cargo bench -p agon-orchestrator --bench evidence").run()?
            }
            "memory" => with_bench_database(sh, root, "agon_bench_memory", || {
                cmd!(sh, "cargo bench -p agon-memory --bench search").run()
            })?,
            other => bail!("unknown benchmark {other:?}; {USAGE}"),
        }
    }
    Ok(())
}
