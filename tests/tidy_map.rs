//! The invariants docs/architecture.md states about the code's shape,
//! checked on the sources: no import circle between the files of a crate,
//! and a crate map that matches the manifests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A file's module path in its crate (`prompts::dialectic`; the root is "").
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without its line comments and its inline test module.
fn code_of(text: &str) -> String {
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*mod \w+\s*\{").unwrap();
    let text = match tests.find(text) {
        Some(m) => &text[..m.start()],
        None => text,
    };
    let comment = Regex::new(r"//[^\n]*").unwrap();
    comment.replace_all(text, "").into_owned()
}

/// The module a `crate::`-relative path names: the longest prefix that is
/// a file of the crate, or, for a name the root re-exports, the module it
/// comes from.
fn resolve(path: &str, modules: &BTreeSet<String>, reexports: &BTreeMap<String, String>) -> String {
    let longest = |segs: &[&str]| {
        (1..=segs.len())
            .rev()
            .map(|i| segs[..i].join("::"))
            .find(|m| modules.contains(m))
    };
    let segs: Vec<&str> = path.split("::").collect();
    if let Some(m) = longest(&segs) {
        return m;
    }
    if let Some(from) = segs.first().and_then(|s| reexports.get(*s)) {
        let from: Vec<&str> = from.split("::").collect();
        if let Some(m) = longest(&from) {
            return m;
        }
    }
    String::new()
}

/// Which files of a crate each file uses (`crate::…` and `super::…` paths,
/// names the root re-exports followed to their module).
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: BTreeMap<String, String> = rust_files(src)
        .iter()
        .map(|f| {
            (
                module_of(src, f),
                code_of(&std::fs::read_to_string(f).unwrap()),
            )
        })
        .collect();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let reexport =
        Regex::new(r"(?:pub(?:\(crate\))? )?use (\w+(?:::\w+)*)::(\{[^}]*\}|\w+)").unwrap();
    let mut reexports = BTreeMap::new();
    for m in reexport.captures_iter(files.get("").map_or("", String::as_str)) {
        for name in m[2].trim_matches(|c| c == '{' || c == '}').split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                reexports.insert(name.to_owned(), m[1].to_owned());
            }
        }
    }
    let crate_path = Regex::new(r"crate::((?:\w+::)*)(\{[^}]*\}|\w+)").unwrap();
    let super_path = Regex::new(r"\bsuper::((?:\w+::)*\w+)").unwrap();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &files {
        let mut add = |path: String| {
            let target = resolve(&path, &modules, &reexports);
            if &target != module {
                edges.entry(module.clone()).or_default().insert(target);
            }
        };
        for c in crate_path.captures_iter(code) {
            let items: Vec<&str> = if c[2].starts_with('{') {
                c[2].trim_matches(|ch| ch == '{' || ch == '}')
                    .split(',')
                    .collect()
            } else {
                vec![&c[2]]
            };
            for item in items {
                let item = item.split(" as ").next().unwrap_or("").trim();
                if !item.is_empty() {
                    add(format!("{}{item}", &c[1]).trim_matches(':').to_owned());
                }
            }
        }
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
        for c in super_path.captures_iter(code) {
            add(if parent.is_empty() {
                c[1].to_owned()
            } else {
                format!("{parent}::{}", &c[1])
            });
        }
    }
    edges
}

/// A circle in `edges`, if there is one (depth-first search).
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut found = path[i..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_circle_joins_two_files_of_a_crate() {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.push(root().join("src"));
    crates.push(root().join("xtask/src"));
    assert!(crates.len() > 15, "read every crate");
    for src in crates {
        let edges = imports(&src);
        if let Some(found) = circle(&edges) {
            panic!(
                "{}: an import circle: {}",
                src.display(),
                found
                    .iter()
                    .map(|m| if m.is_empty() { "(root)" } else { m })
                    .collect::<Vec<_>>()
                    .join(" → ")
            );
        }
    }
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    let found = circle(&edges).unwrap();
    assert_eq!(found.first(), found.last());
    assert_eq!(found.len(), 4, "{found:?}");
    let mut open = edges.clone();
    open.remove("c");
    assert_eq!(circle(&open), None);
}

/// Each Agon package's Agon dependencies (normal ones: not dev or build),
/// from `cargo metadata`.
fn manifests() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"].as_str().is_some_and(|n| n.starts_with("agon-")))
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|n| n.starts_with("agon-"))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// The crate map of docs/architecture.md: each row's crate and the Agon
/// crates its last column names (`core, extract`; a parenthesis explains,
/// `—` is none).
fn crate_map() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let row = Regex::new(r"^\| `(agon-[a-z]+)` \| .* \| ([^|]*) \|$").unwrap();
    let aside = Regex::new(r"\([^)]*\)").unwrap();
    doc.lines()
        .filter_map(|line| row.captures(line))
        .map(|c| {
            let deps = aside
                .replace_all(&c[2], "")
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty() && *d != "—")
                .map(|d| format!("agon-{d}"))
                .collect();
            (c[1].to_owned(), deps)
        })
        .collect()
}

#[test]
fn the_crate_map_matches_the_manifests() {
    let manifests = manifests();
    let map = crate_map();
    assert!(manifests.len() > 15, "{manifests:?}");
    assert_eq!(
        map.keys().collect::<Vec<_>>(),
        manifests.keys().collect::<Vec<_>>(),
        "docs/architecture.md's crate map lists other crates than the workspace"
    );
    for (name, deps) in &manifests {
        assert_eq!(
            &map[name], deps,
            "docs/architecture.md: the row of {name} names other Agon dependencies than its Cargo.toml"
        );
    }
}

/// The code of every file of a crate, without comments and inline tests.
fn crate_code(dir: &str) -> Vec<(PathBuf, String)> {
    let files = rust_files(&root().join(dir));
    assert!(!files.is_empty(), "read {dir}");
    files
        .into_iter()
        .map(|f| {
            let code = code_of(&std::fs::read_to_string(&f).unwrap());
            (f, code)
        })
        .collect()
}

#[test]
fn no_protocol_clones_the_blackboard() {
    // A planner reads the blackboard it is given; a copy of it (the whole
    // transcript) per plan or batch is what a 10,000-turn session cannot
    // afford.
    let clone = Regex::new(
        r"\b(board|bb|blackboard)\s*\.clone\(\)|Blackboard::clone|\.to_owned\(\)\s*;\s*//\s*board",
    )
    .unwrap();
    for (file, code) in crate_code("crates/protocol/src") {
        if let Some(m) = clone.find(&code) {
            panic!("{} clones the blackboard: `{}`", file.display(), m.as_str());
        }
    }
}

#[test]
fn model_json_becomes_events_only_through_validation() {
    // A planner never reads a model's JSON by hand: every structured
    // answer goes through `extract` (parse, then a payload's `validate`),
    // and only a `Validated` payload converts into events. The one other
    // JSON a planner parses is a request a person posted (request.rs,
    // validated by `RunRequest::read`).
    let by_hand = Regex::new(r#"serde_json::from_value|serde_json::from_str|\.get\(""#).unwrap();
    for (file, code) in crate_code("crates/protocol/src") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name == "extract.rs" || name == "request.rs" {
            continue;
        }
        for m in by_hand.find_iter(&code) {
            let line = code[..m.start()].lines().count();
            let context = code[m.start()..].lines().next().unwrap_or("");
            // A summaries field is handed whole to its payload's validation.
            if context.starts_with(r#".get("summaries")"#) {
                continue;
            }
            panic!(
                "{}:{line}: model JSON read by hand: `{context}`",
                file.display()
            );
        }
    }
}

#[test]
fn views_match_turns_by_type_not_by_text() {
    // A turn or a step is found by matching its type (`TurnKey`,
    // `StepId`); its text form is written and parsed in one module of
    // agon-core (step.rs) and read nowhere else.
    let by_text = Regex::new(r"\.to_string\(\)\s*\.starts_with\(|skipped_turns\(\s*\x22").unwrap();
    for dir in [
        "crates/view/src",
        "crates/core/src/blackboard",
        "crates/protocol/src",
    ] {
        for (file, code) in crate_code(dir) {
            if let Some(m) = by_text.find(&code) {
                panic!(
                    "{} matches a turn or a step by its text: `{}`",
                    file.display(),
                    m.as_str()
                );
            }
        }
    }
}

#[test]
fn pages_are_built_from_escaping_markup_only() {
    // A page is built from `Html` values: templates written in the source
    // and text escaped on the way in (`Html::text`, `Html::markdown`). No
    // page builder formats markup into a `String` or escapes by hand.
    let by_hand = Regex::new(r"\bwrite!\(|\bescape\(|push_str\(").unwrap();
    for (file, code) in crate_code("crates/view/src/html") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name == "markup.rs" || name == "markdown.rs" {
            continue;
        }
        if let Some(m) = by_hand.find(&code) {
            let line = code[..m.start()].lines().count();
            panic!(
                "{}:{line}: markup built by hand (`{}`): build it as `Html`",
                file.display(),
                m.as_str()
            );
        }
    }
}

#[test]
fn formats_lay_out_the_sections_and_compute_none() {
    // The Markdown report, the page and the terminal read the records
    // every format shows from the view's `Sections` (computed once, in
    // crates/view/src/sections.rs); only the view model, the JSON of the
    // records and the metrics read them from the blackboard.
    let record = Regex::new(
        r"\.(positions|claims|crux_cards|usage|usage_total|warnings|repairs|tool_calls|citations|sources_cited|reflections|rounds|proposals|decisions|requirements|devils_advocates)\(\)",
    )
    .unwrap();
    let mut files = crate_code("crates/view/src/report");
    files.extend(crate_code("crates/view/src/html"));
    let terminal = root().join("crates/view/src/terminal.rs");
    let code = code_of(&std::fs::read_to_string(&terminal).unwrap());
    files.push((terminal, code));
    assert!(files.len() > 5, "{files:?}");
    for (file, code) in files {
        if let Some(m) = record.find(&code) {
            panic!(
                "{} computes a section from the blackboard (`{}`): read it from agon_view::Sections",
                file.display(),
                m.as_str()
            );
        }
    }
}
