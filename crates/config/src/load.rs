//! Reading a configuration file: TOML, or dialectic's `debate-config.json`,
//! with the files it names (prompt files, corpora) read through the
//! caller's function.

use std::path::Path;

use crate::ReadFile;
use crate::debate::DebateConfig;
use crate::error::ConfigError;

impl DebateConfig {
    /// Parses the TOML file at `path` (or, for a `.json` file, dialectic's
    /// `debate-config.json`), reading it and the prompt files it names
    /// through `read` (the file system in the CLI: `std::fs::read_to_string`).
    /// Returns the warnings to show the user: prompt files that could not
    /// be used, dialectic fields Agon reads differently.
    pub fn load_with(path: &Path, read: ReadFile<'_>) -> Result<(Self, Vec<String>), ConfigError> {
        let file = path.display().to_string();
        let text = read(path).map_err(|source| ConfigError::Read {
            file: file.clone(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let (mut config, mut warnings) = if is_json {
            crate::dialectic_json::from_dialectic_json(&text, &file)?
        } else {
            (Self::parse_toml(&text, &file)?, Vec::new())
        };
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        warnings.extend(config.dialectic.read_prompt_files(base, read));
        if let Some(dir) = &mut config.context_dir
            && dir.is_relative()
        {
            *dir = base.join(&*dir);
        }
        // Corpus files are named relative to the config file, and must
        // be readable.
        for (i, persona) in config.personas.iter_mut().enumerate() {
            for (j, corpus) in persona.corpus.iter_mut().enumerate() {
                if corpus.is_relative() {
                    *corpus = base.join(&*corpus);
                }
                if let Err(e) = read(corpus) {
                    return Err(ConfigError::Invalid {
                        file: file.clone(),
                        field: format!("personas[{i}].corpus[{j}]"),
                        reason: format!("cannot read {}: {e}", corpus.display()),
                    });
                }
            }
        }
        config.validate(&file)?;
        Ok((config, warnings))
    }
}
