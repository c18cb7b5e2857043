//! What a run needs to call models: the protocol-neutral settings, the protocol, the
//! models by role, the context assembler and budget, the vector memory.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use agon_context::prompts::Prompt;
use agon_context::{Assembler, CachedCounter, ContextBudget, TiktokenCounter};
use agon_core::PersonaId;
use agon_core::StepId;
use agon_llm::{ChatModel, ChatRequest, JsonSchema};
use agon_memory::Memory;
use agon_protocol::background_job::JobCall;
use agon_protocol::{Limits, ModelFailure, ModelOutput, Protocol};
use tracing::Instrument;

use crate::models::{Models, Role};
use agon_config::{DebateConfig, RunConfig, TemperatureConfig};

/// The protocol-neutral settings a run's calls are made with (a
/// protocol's own settings reach the interpreter only inside its steps).
#[derive(Debug, Clone)]
pub(crate) struct RunSettings {
    /// Each role's temperature.
    pub(crate) temperature: TemperatureConfig,
    /// Personas with a temperature of their own.
    pub(crate) persona_temperatures: HashMap<PersonaId, f32>,
    /// The word limit stated to speakers.
    pub(crate) utterance_words: u32,
    /// Most tokens of utterances and of structured answers.
    pub(crate) limits: Limits,
    /// Whether recall reaches other debates' memories.
    pub(crate) cross_debate: bool,
    /// The agents that may call tools: their tools and most calls per
    /// contribution.
    pub(crate) tools: HashMap<PersonaId, (Vec<String>, usize)>,
    /// The directory the file tools are confined to.
    pub(crate) context_dir: Option<std::path::PathBuf>,
    /// The MCP servers the configuration declares, by name.
    pub(crate) mcp_servers: std::collections::BTreeMap<String, agon_config::McpServerConfig>,
}

impl RunSettings {
    /// The settings of `config`, as its protocol sets them (`run`).
    pub(crate) fn of(config: &DebateConfig, run: RunConfig) -> Self {
        Self {
            temperature: config.temperature,
            persona_temperatures: run.persona_temperatures.into_iter().collect(),
            utterance_words: run.utterance_words,
            limits: Limits {
                utterance_max_tokens: run.utterance_max_tokens,
                structured_max_tokens: config.budget.structured_max_tokens,
            },
            cross_debate: config.memory.cross_debate,
            tools: run
                .agent_tools
                .into_iter()
                .map(|(persona, names, limit)| (persona, (names, limit)))
                .collect(),
            context_dir: run.context_dir,
            mcp_servers: config.mcp_servers.clone(),
        }
    }
}

/// The fixed parts of one run.
pub(crate) struct RunCtx {
    pub(crate) settings: RunSettings,
    pub(crate) protocol: Arc<dyn Protocol>,
    pub(crate) models: Models,
    pub(crate) assembler: Assembler<CachedCounter<TiktokenCounter>>,
    pub(crate) budget: ContextBudget,
    pub(crate) memory: Option<Memory>,
    pub(crate) memory_unavailable: Option<String>,
    /// The run's MCP servers, when a participant is granted their tools.
    pub(crate) mcp: Option<Arc<agon_tools::McpServers>>,
    /// The budget's check before every call.
    pub(crate) guard: Arc<crate::guard::BudgetGuard>,
    /// The usage ledger when the run began: a run records only its own usage.
    pub(crate) usage_baseline:
        std::collections::BTreeMap<agon_llm::UsageScope, agon_llm::ScopeUsage>,
    /// Where clarifying questions get their answers.
    pub(crate) answerer: Option<Arc<dyn crate::answers::Answerer>>,
    /// The agents' trust memory and the living rubrics: read by draws and
    /// standings, recorded when the debate finishes.
    pub(crate) trust: Arc<dyn crate::trust_memory::TrustMemory>,
}

impl RunCtx {
    /// The configured temperature of a role.
    pub(crate) fn temperature(&self, role: Role) -> f32 {
        let t = &self.settings.temperature;
        match role {
            Role::Debater => t.debater,
            Role::Extractor => t.extractor,
            Role::Detector => t.detector,
            Role::Reflector => t.reflector,
            Role::Crux => t.crux,
            Role::Judge => t.judge,
            Role::Evaluator => t.evaluator,
        }
    }

    /// The temperature of a role's call for `persona` (its own, when the
    /// configuration gives it one).
    pub(crate) fn temperature_for(&self, role: Role, persona: Option<&PersonaId>) -> f32 {
        persona
            .and_then(|p| self.settings.persona_temperatures.get(p).copied())
            .unwrap_or_else(|| self.temperature(role))
    }

    /// The assembled context a question's call needs, from `board`; why
    /// not, when it cannot be assembled.
    pub(crate) fn context_for(
        &self,
        board: &agon_core::Blackboard,
        need: &agon_protocol::ContextNeed,
    ) -> Result<String, String> {
        let budget = match need.budget {
            agon_protocol::BudgetNeed::Double => ContextBudget::new(self.budget.total() * 2),
            agon_protocol::BudgetNeed::Tokens(n) => ContextBudget::new(n),
        }
        .unwrap_or(self.budget);
        self.assembler
            .assemble(
                board,
                need.persona.as_str(),
                &need.phase,
                budget,
                &Default::default(),
            )
            .map(|c| c.text)
            .map_err(|e| e.to_string())
    }

    /// The run's limits on answers.
    pub(crate) fn limits(&self) -> Limits {
        self.settings.limits
    }

    /// A free-text call to the model of `role` (with `persona`'s own model
    /// and temperature when it has them): the text and the call's
    /// metadata, or the provider's error rendered.
    pub(crate) async fn text_call(
        &self,
        role: Role,
        persona: Option<&PersonaId>,
        prompt: Prompt,
        max_tokens: u32,
        step: &StepId,
    ) -> Result<agon_protocol::TextAnswer, ModelFailure> {
        self.guard.admit(step)?;
        let model: Arc<dyn ChatModel> = self.models.get(role, persona);
        let temperature = self.temperature_for(role, persona);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(temperature)
            .with_max_tokens(max_tokens)
            .with_purpose(step.to_string());
        let span = tracing::debug_span!(
            "model_call",
            role = role.as_str(),
            model = model.model_id(),
            step = %step,
        );
        let started = Instant::now();
        model
            .complete(request)
            .instrument(span)
            .await
            .map(|response| agon_protocol::TextAnswer {
                text: response.content,
                temperature,
                latency_ms: started.elapsed().as_millis() as u64,
                tokens: response.usage.input_tokens + response.usage.output_tokens,
                model: response.model,
            })
            .map_err(|e| ModelFailure::new(failure_kind(&e), e.to_string()))
    }

    /// A structured call to the model of the call's role (with
    /// `persona`'s own model and temperature when it has them): the JSON
    /// value matching the call's schema, or the provider's error rendered.
    /// The future owns what it needs, so it can be spawned.
    pub(crate) fn structured_call(
        &self,
        persona: Option<&PersonaId>,
        call: JobCall,
    ) -> impl Future<Output = ModelOutput> + Send + 'static {
        let JobCall {
            role,
            prompt,
            name,
            schema,
            step,
            extra_output_tokens,
        } = call;
        let model: Arc<dyn ChatModel> = self.models.get(role, persona);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(self.temperature_for(role, persona))
            .with_max_tokens(
                self.settings
                    .limits
                    .structured_max_tokens
                    .saturating_add(extra_output_tokens),
            )
            .with_purpose(step.to_string());
        let span = tracing::debug_span!(
            "model_call",
            role = role.as_str(),
            model = model.model_id(),
            schema = name,
            step = %step,
        );
        let guard = Arc::clone(&self.guard);
        async move {
            // Checked when the call is made (a background job may wait).
            guard.admit(&step)?;
            let started = Instant::now();
            let result = model
                .complete_json(request, &JsonSchema::new(name, schema))
                .await;
            match &result {
                Ok(r) => {
                    tracing::debug!(
                        input_tokens = r.response.usage.input_tokens,
                        output_tokens = r.response.usage.output_tokens,
                        repaired = r.repaired,
                        latency_ms = started.elapsed().as_millis() as u64,
                        "structured call done"
                    );
                    // The raw output, before validation (`-vvv`): what the
                    // junk filters are tested against.
                    tracing::trace!(output = %r.value, "structured output");
                }
                Err(e) => tracing::warn!(
                    error = %e,
                    latency_ms = started.elapsed().as_millis() as u64,
                    "structured call failed"
                ),
            }
            result
                .map(|r| r.value)
                .map_err(|e| ModelFailure::new(failure_kind(&e), e.to_string()))
        }
        .instrument(span)
    }
}

/// The kind of a provider's error, for the protocols (which know no
/// provider).
fn failure_kind(e: &agon_llm::ProviderError) -> agon_protocol::FailureKind {
    use agon_llm::ProviderError as E;
    use agon_protocol::FailureKind as K;
    match e {
        E::MissingKey { .. } | E::Auth { .. } => K::Auth,
        E::RateLimited { .. } | E::QuotaExhausted { .. } => K::RateLimited,
        E::BadRequest { .. }
        | E::NotFound { .. }
        | E::InvalidSchema { .. }
        | E::InvalidRequest { .. } => K::Rejected,
        E::Server { .. } => K::Server,
        E::Timeout { .. } => K::Timeout,
        E::Transport { .. } => K::Transport,
        E::MalformedResponse { .. } | E::SchemaMismatch { .. } => K::Malformed,
        E::ModelFileMissing { .. } | E::ModelFileInvalid { .. } | E::Inference { .. } => K::Local,
        E::AllFailed { .. } => K::Other,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agon_llm::ProviderError;
    use agon_protocol::FailureKind;

    use super::failure_kind;

    #[test]
    fn a_providers_error_keeps_its_kind_for_the_protocols() {
        let provider = || "openai".to_owned();
        for (error, kind, transient) in [
            (
                ProviderError::RateLimited {
                    provider: provider(),
                    message: "slow down".into(),
                    retry_after: Some(Duration::from_secs(2)),
                },
                FailureKind::RateLimited,
                true,
            ),
            (
                ProviderError::Timeout {
                    provider: provider(),
                    after: Duration::from_secs(60),
                },
                FailureKind::Timeout,
                true,
            ),
            (
                ProviderError::MissingKey {
                    provider: provider(),
                    env_var: "OPENAI_API_KEY".into(),
                },
                FailureKind::Auth,
                false,
            ),
            (
                ProviderError::MalformedResponse {
                    provider: provider(),
                    message: "empty choices".into(),
                },
                FailureKind::Malformed,
                true,
            ),
        ] {
            assert_eq!(failure_kind(&error), kind, "{error}");
            assert_eq!(kind.is_transient(), transient, "{error}");
        }
    }
}
