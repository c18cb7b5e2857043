//! The shape of the workspace: the pure crates stay pure.

use std::process::Command;

/// `cargo tree` of one package's normal dependencies, one `name features`
/// line per package.
fn tree(package: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "-p",
            package,
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p} [{f}]",
        ])
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_pure_crates_depend_on_no_runtime_database_http_or_clock() {
    for package in [
        "agon-core",
        "agon-trust",
        "agon-extract",
        "agon-context",
        "agon-protocol",
        "agon-config",
        "agon-view",
    ] {
        let tree = tree(package);
        assert!(
            tree.lines().next().unwrap_or_default().starts_with(package),
            "{tree}"
        );
        for line in tree.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            assert!(
                !matches!(
                    name,
                    "tokio" | "sqlx" | "sqlx-core" | "reqwest" | "hyper" | "mio"
                ),
                "{package} depends on {line}"
            );
            if name == "chrono" {
                assert!(
                    !line.contains("clock"),
                    "{package} gets chrono's clock: {line}"
                );
            }
        }
    }
}

#[test]
fn the_core_is_the_data_model_alone() {
    let tree = tree("agon-core");
    let agon: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("agon-") && *name != "agon-core")
        .collect();
    assert!(agon.is_empty(), "agon-core depends on {agon:?}");
}

#[test]
fn the_protocol_layer_sits_on_the_pure_crates_only() {
    let tree = tree("agon-protocol");
    let agon: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("agon-"))
        .collect();
    for name in &agon {
        assert!(
            matches!(
                *name,
                "agon-protocol" | "agon-core" | "agon-trust" | "agon-extract" | "agon-context"
            ),
            "agon-protocol depends on {name}"
        );
    }
}

#[test]
fn configuration_sits_below_the_interpreter_on_pure_crates_and_model_specs() {
    let tree = tree("agon-config");
    for line in tree.lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        if name.starts_with("agon-") {
            assert!(
                matches!(
                    name,
                    "agon-config"
                        | "agon-protocol"
                        | "agon-core"
                        | "agon-trust"
                        | "agon-extract"
                        | "agon-context"
                        | "agon-llm"
                ),
                "agon-config depends on {name}"
            );
        }
        if name == "agon-llm" {
            assert!(
                !line.contains("http"),
                "agon-config needs only agon-llm's model specs, not its HTTP: {line}"
            );
        }
    }
}

#[test]
fn the_interpreter_renders_nothing() {
    // Reports, metrics and exports render from agon-view, beside the
    // interpreter, never inside it.
    let tree = tree("agon-orchestrator");
    assert!(
        !tree.lines().any(|l| l.starts_with("agon-view ")),
        "agon-orchestrator depends on agon-view"
    );
}

#[test]
fn the_interpreter_reads_no_protocols_own_settings() {
    // A protocol's settings reach the interpreter only inside the steps
    // its planner emits (a group's deadline, a listening budget, what the
    // finish must know), never read from the configuration.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/orchestrator/src");
    let mut files = vec![src.clone()];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        checked += 1;
        for needle in [
            "config.dialectic",
            "config.deliberation",
            "config.crux",
            "config.minirounds",
            "ProtocolKind",
        ] {
            assert!(
                !text.contains(needle),
                "{} reads a protocol's settings: `{needle}`",
                path.display()
            );
        }
    }
    assert!(checked > 10, "read the orchestrator's sources");
}

#[test]
fn the_interpreter_never_names_a_protocol() {
    // The interpreter runs steps, background jobs and turns whatever the
    // protocol; what each is for lives in agon-protocol (its prompts and
    // the conversion of its answers).
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/orchestrator/src");
    let mut files = vec![src];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let lower = std::fs::read_to_string(&path).unwrap().to_lowercase();
        checked += 1;
        for name in [
            "dialectic",
            "deliberation",
            "structured debate",
            "structureddebate",
        ] {
            assert!(
                !lower.contains(name),
                "{} mentions `{name}`",
                path.display()
            );
        }
    }
    assert!(checked > 10, "read every file of the orchestrator");
}
