//! API keys: held in memory only, never printed.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

use crate::error::ProviderError;

/// An API key. `Debug` and `Display` print `***`; the value is only exposed
/// when a request header is built.
#[derive(Clone)]
pub struct ApiKey(SecretString);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(SecretString::from(key.into()))
    }

    /// Reads the key from `env_var` through `lookup` (e.g. `std::env::var`);
    /// a missing or blank value is [`ProviderError::MissingKey`] naming the
    /// provider and the variable.
    pub fn from_lookup(
        provider: &str,
        env_var: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        match lookup(env_var) {
            Some(key) if !key.trim().is_empty() => Ok(Self::new(key.trim())),
            _ => Err(ProviderError::MissingKey {
                provider: provider.to_owned(),
                env_var: env_var.to_owned(),
            }),
        }
    }

    /// Reads the key from the process environment.
    pub fn from_env(provider: &str, env_var: &str) -> Result<Self, ProviderError> {
        Self::from_lookup(provider, env_var, |name| std::env::var(name).ok())
    }

    /// The key itself, for building a request header. Never log it.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug_or_display() {
        let key = ApiKey::new("sk-very-secret");
        assert_eq!(format!("{key:?} {key}"), "ApiKey(***) ***");
        assert_eq!(key.expose(), "sk-very-secret");
    }

    #[test]
    fn a_missing_key_names_the_provider_and_variable() {
        let err = ApiKey::from_lookup("anthropic", "ANTHROPIC_API_KEY", |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "anthropic: no API key: set ANTHROPIC_API_KEY"
        );
        assert!(ApiKey::from_lookup("x", "X", |_| Some("  ".into())).is_err());
    }
}
