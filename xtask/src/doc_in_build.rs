//! The API docs checked inside the one build of `cargo xtask test`.
//!
//! `cargo doc` needs every dependency *checked* (cargo's check mode), a
//! second compilation of the whole dependency tree that the test build does
//! not share: on a 2-core machine that was the slowest phase but one (on a
//! fresh clone, 190–230 s on the faster CI machine, ~500 s on the slower).
//! rustdoc itself needs no more than rustc does: the dependencies' metadata,
//! which the test build produces anyway. So xtask makes itself cargo's
//! workspace wrapper for that build: for every invocation it runs clippy's
//! driver as before (clippy's lints, then the code), and when the invocation
//! compiles one of the documented libraries it runs rustdoc beside it, with
//! the same crate, edition, features, cfgs, lint levels, search paths and
//! `--extern`s, and `-D warnings` (what `cargo doc` with
//! `RUSTDOCFLAGS=-D warnings` checks). A rustdoc failure fails that unit of
//! the build, with rustdoc's messages.
//!
//! Each library documented this way leaves a mark. After the build,
//! [`check_marks`] compares the marks with the libraries `cargo metadata`
//! lists; a library cargo did not compile in this build (its unit was fresh
//! from an earlier build) has no mark and is documented by `cargo doc` (the
//! slow path, only on a warm local target directory).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// Set (to clippy's driver) by `cargo xtask test` for the build: xtask then
/// runs as the workspace wrapper (see [`run_as_wrapper`]).
const DRIVER_ENV: &str = "AGON_XTASK_CLIPPY_DRIVER";
/// The directory of the marks and rustdoc's logs and output.
const MARKS_ENV: &str = "AGON_XTASK_RUSTDOC_MARKS";

/// The workspace packages whose libraries are not documented: the build
/// tooling, the test kit and the downstream checks. `cargo xtask doc`
/// excludes the same.
pub const UNDOCUMENTED: &[&str] = &[
    "xtask",
    "agon-testkit",
    "downstream-memory-alone",
    "downstream-context-alone",
];

/// The environment under which cargo compiles the workspace's own crates
/// through this xtask binary, which runs clippy's driver on them: the
/// wrapper (a copy of xtask, so that a build that rebuilds xtask does not
/// replace the running wrapper) and the driver. Every cargo command of a
/// run keeps it, so each reuses the build.
pub fn wrapper_env(
    target_dir: &Path,
    clippy_driver: &Path,
) -> Result<Vec<(&'static str, OsString)>> {
    let dir = marks_dir(target_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let me = std::env::current_exe().context("the path of the running xtask")?;
    let wrapper = dir.join("xtask-rustc-wrapper");
    // A new file, not one rewritten in place: a build may be running it.
    let fresh = dir.join("xtask-rustc-wrapper.new");
    std::fs::copy(&me, &fresh)
        .with_context(|| format!("copying {} to {}", me.display(), fresh.display()))?;
    std::fs::rename(&fresh, &wrapper)
        .with_context(|| format!("renaming {} to {}", fresh.display(), wrapper.display()))?;
    Ok(vec![
        ("RUSTC_WORKSPACE_WRAPPER", wrapper.into_os_string()),
        (DRIVER_ENV, clippy_driver.as_os_str().to_owned()),
    ])
}

/// The environment variable, and its value, that makes the one build's
/// wrapper run rustdoc beside the documented libraries, with the marks of
/// an earlier run removed. Set on the build's command only: the later
/// cargo commands of the run (doctests, the downstream check) document
/// nothing.
pub fn document_env(target_dir: &Path) -> Result<(&'static str, PathBuf)> {
    let marks = marks_of(target_dir);
    if marks.exists() {
        std::fs::remove_dir_all(&marks).with_context(|| format!("removing {}", marks.display()))?;
    }
    std::fs::create_dir_all(&marks).with_context(|| format!("creating {}", marks.display()))?;
    Ok((MARKS_ENV, marks))
}

fn marks_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("rustdoc-in-build")
}

/// Where the one build's rustdoc leaves its marks, logs and output.
fn marks_of(target_dir: &Path) -> PathBuf {
    marks_dir(target_dir).join("marks")
}

/// When xtask runs as cargo's workspace wrapper (argv: the wrapper, rustc,
/// rustc's arguments), does the wrapper's job and returns the exit code;
/// otherwise `None`.
pub fn run_as_wrapper() -> Result<Option<i32>> {
    let Some(driver) = std::env::var_os(DRIVER_ENV) else {
        return Ok(None);
    };
    let mut args = std::env::args_os().skip(1);
    // cargo runs a wrapper with rustc's path first; anything else (`cargo
    // xtask …` itself, with the variable left in a shell) is not a wrapper
    // run.
    let Some(rustc) = args.next().filter(|first| {
        Path::new(first)
            .file_stem()
            .is_some_and(|stem| stem == "rustc")
    }) else {
        return Ok(None);
    };
    let mut rest: Vec<OsString> = args.collect();
    let marks = std::env::var_os(MARKS_ENV).map(PathBuf::from);
    if marks.is_some() {
        checked_only_if_bench(&mut rest);
    }
    let mut compile = Command::new(&driver);
    compile.arg(&rustc).args(&rest);
    let documented = std::env::var("CARGO_PKG_NAME")
        .ok()
        .filter(|_| marks.is_some())
        .filter(|package| !UNDOCUMENTED.contains(&package.as_str()))
        .and_then(|package| Some((package, RustdocArgs::from_rustc(&rest)?)));
    let running = || format!("running {}", Path::new(&driver).display());
    let (Some((package, doc)), Some(marks)) = (documented, marks) else {
        return Ok(Some(exit_code(compile.status().with_context(running)?)));
    };
    let log_path = marks.join(format!("{package}.log"));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    // rustdoc beside the compilation (it reads the same dependencies'
    // metadata, which exist before this unit starts), so the unit takes
    // the longer of the two rather than their sum.
    let mut rustdoc = Command::new(rustdoc_beside(Path::new(&rustc)))
        .args(doc.args)
        .arg("-o")
        .arg(marks.join("out").join(&package))
        .args(["-D", "warnings"])
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("starting rustdoc")?;
    let compiled = compile.status().with_context(running)?;
    let documented = rustdoc.wait().context("waiting for rustdoc")?;
    if !documented.success() {
        let messages = std::fs::read_to_string(&log_path).unwrap_or_default();
        eprintln!("{messages}");
        eprintln!(
            "error: rustdoc failed on the library of `{package}` (warnings are errors; log: {})",
            log_path.display()
        );
        return Ok(Some(1));
    }
    std::fs::write(marks.join(format!("{package}.documented")), "")
        .context("writing rustdoc's mark")?;
    Ok(Some(exit_code(compiled)))
}

/// A bench target (a source under `benches/`; the build is `cargo test
/// --all-targets`, so in the test profile, with or without a harness) is
/// only checked during the one build: its
/// `--emit` becomes `dep-info,metadata`, what `cargo clippy` emits, so
/// clippy's lints and the type checker run on it, without code generation
/// or linking (17 bench targets were ~120 s of the build's compile time).
/// Nothing runs those binaries: the suite (nextest, `cargo test`) builds
/// no bench target, and `cargo xtask bench` builds the benches in the bench
/// profile, a unit of its own. Cargo takes the unit as built; a later
/// `cargo test --all-targets` under this wrapper would find no bench
/// binary to run (outside `cargo xtask test`, unset
/// `RUSTC_WORKSPACE_WRAPPER`). Called only for the one build (the marks'
/// variable set). Returns whether the arguments were changed.
fn checked_only_if_bench(rustc_args: &mut [OsString]) -> bool {
    let bench_source = rustc_args.iter().any(|arg| {
        let path = Path::new(arg);
        path.extension().is_some_and(|ext| ext == "rs")
            && path.components().any(|part| part.as_os_str() == "benches")
    });
    if !bench_source {
        return false;
    }
    let mut changed = false;
    for arg in rustc_args.iter_mut() {
        if arg.to_str().is_some_and(|text| text.starts_with("--emit=")) {
            *arg = OsString::from("--emit=dep-info,metadata");
            changed = true;
        }
    }
    changed
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// rustdoc from rustc's own directory (the toolchain's), else the one on
/// `PATH`.
fn rustdoc_beside(rustc: &Path) -> PathBuf {
    let beside = rustc.with_file_name("rustdoc");
    if rustc
        .parent()
        .is_some_and(|dir| !dir.as_os_str().is_empty())
        && beside.exists()
    {
        beside
    } else {
        PathBuf::from("rustdoc")
    }
}

/// rustdoc's arguments for a rustc invocation that compiles a library
/// (not its test harness).
#[derive(Debug, PartialEq)]
struct RustdocArgs {
    args: Vec<OsString>,
}

/// rustc options (taking a value) that rustdoc takes as they are.
const KEPT_WITH_VALUE: &[&str] = &[
    "--crate-name",
    "--edition",
    "--crate-type",
    "--cfg",
    "--check-cfg",
    "-L",
    "--extern",
    "-W",
    "--warn",
    "-A",
    "--allow",
    "-D",
    "--deny",
    "-F",
    "--forbid",
    "--force-warn",
    "--cap-lints",
    "--target",
    "--sysroot",
];

/// rustc options (taking a value) about code generation, output and
/// diagnostics' format, which rustdoc does not need.
const DROPPED_WITH_VALUE: &[&str] = &[
    "-C",
    "--codegen",
    "--emit",
    "--out-dir",
    "-o",
    "--error-format",
    "--json",
    "--diagnostic-width",
    "--color",
];

/// rustc options without a value that rustdoc does not need.
const DROPPED_FLAGS: &[&str] = &["-g", "-O"];

impl RustdocArgs {
    /// `None` when the invocation does not compile a library, or holds an
    /// option this translation does not know (that library is then left to
    /// `cargo doc`, see [`check_marks`]).
    fn from_rustc(rustc_args: &[OsString]) -> Option<Self> {
        let mut args = Vec::new();
        let mut library = false;
        let mut sources = 0;
        let mut rest = rustc_args.iter();
        while let Some(arg) = rest.next() {
            let text = arg.to_str()?;
            if text == "--test" {
                return None;
            }
            if !text.starts_with('-') {
                sources += 1;
                args.push(arg.clone());
                continue;
            }
            let (name, joined) = split_option(text);
            let value: Option<&OsString> = match joined {
                Some(_) => None,
                None if KEPT_WITH_VALUE.contains(&name) || DROPPED_WITH_VALUE.contains(&name) => {
                    Some(rest.next()?)
                }
                None if DROPPED_FLAGS.contains(&name) => continue,
                None => return None,
            };
            if name == "--crate-type" {
                let kind = joined.map(OsStr::new).or(value.map(OsString::as_os_str))?;
                if kind != "lib" && kind != "rlib" {
                    return None;
                }
                library = true;
            }
            if KEPT_WITH_VALUE.contains(&name) {
                args.push(arg.clone());
                args.extend(value.cloned());
            } else if !DROPPED_WITH_VALUE.contains(&name) {
                return None;
            }
        }
        (library && sources == 1).then_some(Self { args })
    }
}

/// An option's name and its value when written in the same argument
/// (`--edition=2024`, `-Copt-level=1`, `-Ldependency=…`).
fn split_option(text: &str) -> (&str, Option<&str>) {
    if let Some((name, value)) = text.split_once('=')
        && name.starts_with("--")
    {
        return (name, Some(value));
    }
    if !text.starts_with("--")
        && let (Some(name), Some(value)) = (text.get(..2), text.get(2..))
        && !value.is_empty()
    {
        return (name, Some(value));
    }
    (text, None)
}

/// After the build: every documented library has its mark, or is documented
/// now by `cargo doc` (its unit was not compiled by this build). Returns
/// the packages left to `cargo doc`.
pub fn check_marks(target_dir: &Path, libraries: &[String]) -> Result<Vec<String>> {
    if libraries.is_empty() {
        bail!("cargo metadata lists no library to document");
    }
    let dir = marks_of(target_dir);
    let missing: Vec<String> = libraries
        .iter()
        .filter(|package| !dir.join(format!("{package}.documented")).exists())
        .cloned()
        .collect();
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    const LIBRARY: &[&str] = &[
        "--crate-name",
        "agon_core",
        "--edition=2024",
        "crates/core/src/lib.rs",
        "--error-format=json",
        "--json=diagnostic-rendered-ansi,artifacts,future-incompat",
        "--crate-type",
        "lib",
        "--emit=dep-info,metadata,link",
        "-C",
        "embed-bitcode=no",
        "-C",
        "debuginfo=line-tables-only",
        "--warn=missing_docs",
        "--forbid=unsafe_code",
        "--deny=clippy::unwrap_used",
        "--check-cfg",
        "cfg(docsrs,test)",
        "--cfg",
        "feature=\"serde\"",
        "-C",
        "metadata=0123",
        "--out-dir",
        "/t/debug/deps",
        "-L",
        "dependency=/t/debug/deps",
        "--extern",
        "serde=/t/debug/deps/libserde-1.rmeta",
        "-Copt-level=1",
    ];

    #[test]
    fn a_library_keeps_what_rustdoc_reads_and_drops_codegen_and_output() {
        let doc = RustdocArgs::from_rustc(&os(LIBRARY)).expect("a library is documented");
        assert_eq!(
            doc.args,
            os(&[
                "--crate-name",
                "agon_core",
                "--edition=2024",
                "crates/core/src/lib.rs",
                "--crate-type",
                "lib",
                "--warn=missing_docs",
                "--forbid=unsafe_code",
                "--deny=clippy::unwrap_used",
                "--check-cfg",
                "cfg(docsrs,test)",
                "--cfg",
                "feature=\"serde\"",
                "-L",
                "dependency=/t/debug/deps",
                "--extern",
                "serde=/t/debug/deps/libserde-1.rmeta",
            ])
        );
    }

    #[test]
    fn a_bench_is_checked_not_built_and_nothing_else_is() {
        let compile = |source: &str| {
            os(&[
                "--crate-name",
                "assemble",
                "--edition=2024",
                source,
                "--error-format=json",
                "--emit=dep-info,link",
                "-C",
                "embed-bitcode=no",
            ])
        };
        let mut bench = compile("crates/context/benches/assemble.rs");
        assert!(checked_only_if_bench(&mut bench));
        assert!(bench.contains(&OsString::from("--emit=dep-info,metadata")));
        assert!(!bench.contains(&OsString::from("--emit=dep-info,link")));
        for source in [
            "crates/context/tests/assemble.rs",
            "crates/context/src/lib.rs",
            "crates/context/examples/benches.rs",
        ] {
            let mut other = compile(source);
            let before = other.clone();
            assert!(!checked_only_if_bench(&mut other), "{source}");
            assert_eq!(other, before);
        }
    }

    #[test]
    fn test_harnesses_binaries_and_unknown_options_are_not_documented_here() {
        let mut harness = os(LIBRARY);
        harness.push("--test".into());
        assert_eq!(RustdocArgs::from_rustc(&harness), None);
        let binary: Vec<OsString> = os(LIBRARY)
            .into_iter()
            .map(|arg| if arg == "lib" { "bin".into() } else { arg })
            .collect();
        assert_eq!(RustdocArgs::from_rustc(&binary), None);
        let mut unknown = os(LIBRARY);
        unknown.push("--some-new-option".into());
        assert_eq!(RustdocArgs::from_rustc(&unknown), None);
        assert_eq!(RustdocArgs::from_rustc(&os(&["-vV"])), None);
        assert_eq!(split_option("-é"), ("-é", None));
        assert_eq!(
            RustdocArgs::from_rustc(&os(&["-", "--crate-name", "___", "--print=file-names"])),
            None
        );
    }
}
