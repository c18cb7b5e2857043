//! The one error of configuration: what is wrong, and where.

/// A configuration that cannot be used. Names the file, line and field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config `{file}`: {source}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// TOML syntax or a field of the wrong type / unknown field.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line (0 when unknown).
        line: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A value outside what the debate accepts.
    #[error("{file}: field `{field}`: {reason}")]
    Invalid {
        /// The file (or `<command line>`).
        file: String,
        /// The field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A setting laid over the configuration (a command-line flag, an API
    /// field) that does not belong to the debate's protocol or is out of
    /// range: a usage error.
    #[error("{setting}: {reason}")]
    Override {
        /// The setting, spelled as the CLI's long flag without dashes
        /// (`rounds`, `minirounds`, `topic`).
        setting: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A setting laid over the configuration that contradicts the
    /// configuration file (more aspects than it lists, casting personas
    /// when it names them).
    #[error("{setting}: {reason}")]
    Conflict {
        /// The setting, as in [`ConfigError::Override`].
        setting: &'static str,
        /// What is wrong.
        reason: String,
    },
}
