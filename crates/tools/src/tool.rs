//! The [`Tool`] trait, and [`TypedTool`]: a tool whose arguments are a
//! Rust type (schema generated, arguments parsed and checked).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;

/// What a call gave back: the text the model sees, and whether it worked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// `false`: `content` says what went wrong.
    pub ok: bool,
    /// The result, or the reason it failed.
    pub content: String,
}

impl ToolOutput {
    /// A result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            ok: true,
            content: content.into(),
        }
    }

    /// A failure, for the model to read.
    pub fn failed(error: &ToolError) -> Self {
        Self {
            ok: false,
            content: error.to_string(),
        }
    }
}

/// A tool an agent can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Its name as the model calls it (`file_read`, `files__read_text_file`).
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON schema of its arguments (an object).
    fn parameters(&self) -> serde_json::Value;
    /// Runs it. Never fails: an error is an output with `ok: false`.
    async fn call(&self, arguments: serde_json::Value) -> ToolOutput;
}

/// A tool whose arguments are `Args`: [`Tool::parameters`] is `Args`'s
/// generated schema, and arguments that do not parse are refused with the
/// reason before [`TypedTool::run`] is called.
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The arguments.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// Its name.
    const NAME: &'static str;
    /// What it does, for the model.
    const DESCRIPTION: &'static str;
    /// Runs it on parsed arguments.
    async fn run(&self, args: Self::Args) -> Result<String, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> &str {
        T::DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        let mut schema = schemars::schema_for!(T::Args).to_value();
        if let Some(map) = schema.as_object_mut() {
            map.remove("$schema");
            map.remove("title");
        }
        schema
    }

    async fn call(&self, arguments: serde_json::Value) -> ToolOutput {
        let args = match serde_json::from_value::<T::Args>(arguments) {
            Ok(args) => args,
            Err(e) => {
                return ToolOutput::failed(&ToolError::Arguments {
                    tool: T::NAME.to_owned(),
                    reason: e.to_string(),
                });
            }
        };
        match self.run(args).await {
            Ok(content) => ToolOutput::ok(content),
            Err(e) => ToolOutput::failed(&e),
        }
    }
}
